"""The read-ahead file: the same bytes as the file, in reads of any size; errors reach the reader; closing
stops its thread, also when the reader stops early."""

from __future__ import annotations

import gzip
import io
import os
import threading
from pathlib import Path

import pytest

from paperproof.catalogue import readahead
from paperproof.catalogue.readahead import ReadAhead


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("read-ahead")}


@pytest.mark.parametrize("size", [0, 1, readahead.BLOCK - 1, readahead.BLOCK, 3 * readahead.BLOCK + 17])
def test_same_bytes_in_reads_of_any_size(tmp_path, size):
    data = os.urandom(size)
    path = tmp_path / "dump.bin"
    path.write_bytes(data)
    with ReadAhead(path, blocks=2) as handle:
        got = bytearray()
        for n in [1, 7, 4096, readahead.BLOCK + 3] * 8:
            chunk = handle.read(n)
            got += chunk
        got += handle.read()
        assert handle.read(10) == b""
    assert bytes(got) == data


def test_gzip_through_a_buffered_reader(tmp_path):
    payload = b"".join(b'{"n": %d},' % i for i in range(200_000))
    path = tmp_path / "dump.json.gz"
    path.write_bytes(gzip.compress(payload))
    with io.BufferedReader(ReadAhead(path)) as raw:
        assert gzip.GzipFile(fileobj=raw, mode="rb").read() == payload


def test_a_missing_file_raises_in_the_caller(tmp_path):
    with pytest.raises(FileNotFoundError):
        ReadAhead(tmp_path / "absent.json")


def test_closing_early_stops_the_thread(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(os.urandom(20 * readahead.BLOCK))
    before = _threads()
    handle = ReadAhead(path, blocks=1)  # the thread fills its one slot and waits
    assert handle.read(10)
    assert _threads() - before
    handle.close()
    assert _threads() == before
    with pytest.raises(ValueError):
        handle.read(1)


def test_a_read_error_reaches_the_reader():
    # Reading /proc/self/mem from offset 0 fails (nothing is mapped there): the thread's error, raised by read.
    with ReadAhead(Path("/proc/self/mem")) as handle:
        with pytest.raises(OSError):
            handle.read(10)
        assert handle.read(10) == b""  # after the error, the end of the file
