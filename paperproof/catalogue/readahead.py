"""A file read by a thread a few blocks ahead of its reader.

The build's main thread reads the archive dump, parses it and hands the papers out to the render
processes; when it waits on the disk, they wait for work. On a slow disk (a CI machine's, or one whose
page cache the site being written has pushed the dump out of) one 1 MB read of the dump took up to
0.4 s. Here a thread waits instead, with the GIL released, while the main thread parses the blocks it
already has. At most `blocks` blocks are held, so memory stays a few megabytes whatever the file's size.
"""

from __future__ import annotations

import io
import queue
import threading
from pathlib import Path

BLOCK = 1 << 20


class ReadAhead(io.RawIOBase):
    """A read-only, sequential binary file object over `path`, filled by a thread `blocks` blocks ahead."""

    def __init__(self, path: Path, blocks: int = 8) -> None:
        super().__init__()
        self._file = open(path, "rb")  # opened here: a missing file raises in the caller, not in the thread
        self._blocks: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=blocks)
        self._current = memoryview(b"")
        self._eof = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, name=f"read-ahead {path.name}", daemon=True)
        self._thread.start()

    def _fill(self) -> None:
        try:
            while not self._stop.is_set():
                block = self._file.read(BLOCK)
                self._put(block)
                if not block:
                    return
        except BaseException as exc:  # handed to the reader, which raises it where it reads
            self._put(exc)

    def _put(self, item: bytes | BaseException) -> None:
        while not self._stop.is_set():
            try:
                self._blocks.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.closed:
            raise ValueError("read of a closed file")
        if not self._current:
            if self._eof:
                return 0
            item = self._blocks.get()
            if isinstance(item, BaseException):
                self._eof = True
                raise item
            if not item:
                self._eof = True
                return 0
            self._current = memoryview(item)
        n = min(len(buffer), len(self._current))
        buffer[:n] = self._current[:n]
        self._current = self._current[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._stop.set()
            self._thread.join()
            self._file.close()
        super().close()
