"""The trusted side's reader of hand-backs: whatever bytes a case process writes, it either reads
one well-formed value or refuses with `Malformed`, within its caps and without recursion."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.runner import child, wire

PACKER = child._packer(1024**2)
next(PACKER)


def message(body: bytes, kind: bytes = b"V") -> bytes:
    return wire.HEADER.pack(wire.MAGIC, kind, len(body)) + body


def test_what_the_child_packs_reads_back_as_the_same_contents():
    value = {"scores": np.linspace(0, 1, 5), "names": ("a", None, True), "n": 3}
    read = wire.read(message(*reversed(PACKER.send(value))))
    assert read.kind == "V" and isinstance(read.body, wire.Mapping) and read.body.length == 3
    scores = dict(read.body.values)["scores"]
    assert scores.dtype == "float64" and np.array_equal(scores.data, np.linspace(0, 1, 5))


def test_nesting_deeper_than_the_cap_is_refused_without_recursion():
    body = (b"L" + struct.pack("<QI", 1, 1)) * 200_000 + b"N"  # far past any recursion limit
    with pytest.raises(wire.Malformed, match="nested deeper"):
        wire.read(message(body))


@pytest.mark.parametrize("body, why", [
    (b"S" + struct.pack("<I", 10) + b"abc", "truncated"),
    (b"N" + b"extra", "bytes after the value"),
    (b"A\x00" + struct.pack("<I", 6) + b"object" + b"\x01" + struct.pack("<QQ", 2, 16) + b"x" * 16, "not one the reader takes"),
    (b"A\x00" + struct.pack("<I", 7) + b"float64" + b"\x01" + struct.pack("<QQ", 3, 16) + b"x" * 16, "do not fill its shape"),
    (b"L" + struct.pack("<QI", 1, 2) + b"NN", "items sent of a sequence of 1"),
    (b"I" + struct.pack("<I", 3) + b"1e9", "not decimal digits"),
    (b"B\x07", "neither 0 nor 1"),
    (b"?", "unknown tag"),
])
def test_malformed_bodies_are_refused_with_a_reason(body, why):
    with pytest.raises(wire.Malformed, match=why):
        wire.read(message(body))


def test_a_channel_that_does_not_start_with_a_header_or_announces_too_much_is_refused():
    with pytest.raises(wire.Malformed, match="does not start with a hand-back header"):
        wire.split(b'{"event":"case","outcome":"returned"}\n' + b" " * 20, 1024)
    with pytest.raises(wire.Malformed, match="over the cap"):
        wire.split(wire.HEADER.pack(wire.MAGIC, b"V", 10**9), 1024)
    whole = message(b"N")
    messages, rest = wire.split(whole + whole[:5], 1024)
    assert messages == [whole] and rest == whole[:5]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_either_read_or_are_malformed(noise):
    try:
        wire.read(message(noise))
    except wire.Malformed:
        pass
