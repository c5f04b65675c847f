"""The hand-back format, and its strict reader on the trusted side.

A case's process hands back one message per call over a pipe the harness reads: what the call
returned (`V`), what it raised (`E`), why its value could not be handed back (`U`), or why the
entry could not be defined (`D`); before any call, a line saying how the entry was loaded (`L`). The writer is `child._packer`; this module only reads, and
it trusts nothing: every length is checked against the bytes that are there and against caps,
nesting is bounded and walked with an explicit stack (no recursion that input can deepen),
dtypes come from a fixed list, and any surprise is a `Malformed` error naming where it was.

Layout: `PPV1`, the kind byte, a u64 body length, then nodes in pre-order. A node is a tag byte:
`N` None; `B` u8; `I` str of decimal digits; `J` u8 sign + u64 bit length (an int too long to
print); `F` f64; `S` str; `A` array: u8 container, str dtype, u8 ndim, u64 shape…, u64 byte
count, the raw C-order bytes; `R` array of reprs: u8 container, str dtype, u8 ndim, u64 shape…,
u32 count, str…; `L`/`T` list/tuple: u64 length, u32 items sent, nodes; `D`/`M` dict/namespace:
u64 length, u32 keys, str…, u32 values, (str, node)…; `P` DataFrame: u64 rows, u64 columns, u32
names, str…, u8 has values, u32 values, (str, node)…; `G` numpy scalar: str dtype, node;
`O` object: str type name, str repr. A str is a u32 byte count and UTF-8 (surrogates passed).
All integers are little-endian.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

MAGIC = b"PPV1"
HEADER = struct.Struct("<4scQ")
KINDS = (b"V", b"E", b"U", b"D", b"L")
CONTAINERS = ("ndarray", "Tensor", "Series", "list", "tuple", "PIL.Image")
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64"})
MAX_DEPTH = 5  # containers nest at most 4 deep in what the writer sends (depth 0..3 and leaves)
MAX_NODES = 200_000
MAX_NDIM = 32
MAX_TEXT_BYTES = 64 * 1024**2


class Malformed(ValueError):
    """The bytes are not one well-formed hand-back."""


@dataclass(frozen=True)
class BigInt:
    negative: bool
    bits: int


@dataclass(frozen=True)
class Array:
    container: str
    dtype: str
    shape: tuple[int, ...]
    data: np.ndarray | None = None  # numeric arrays: every element
    reprs: tuple[str, ...] | None = None  # other dtypes: the first elements' reprs


@dataclass(frozen=True)
class Seq:
    type: str  # list or tuple
    length: int
    items: list = field(default_factory=list)


@dataclass(frozen=True)
class Mapping:
    type: str  # dict or namespace
    length: int
    keys: list[str] = field(default_factory=list)
    values: list[tuple[str, object]] = field(default_factory=list)


@dataclass(frozen=True)
class Frame:
    shape: tuple[int, int]
    columns: list[str]
    values: list[tuple[str, object]] | None


@dataclass(frozen=True)
class Scalar:
    dtype: str
    value: object


@dataclass(frozen=True)
class Object:
    name: str
    repr: str


@dataclass(frozen=True)
class Message:
    kind: str  # V, E, U, D, L (how the entry was loaded: one line of text, before any call's hand-back)
    body: object


def split(buffer: bytes, cap: int) -> tuple[list[bytes], bytes]:
    """Whole messages at the start of `buffer` and the rest (a message still arriving). A header
    that is not ours, or a body over `cap`, is malformed at once: nothing after it is read."""
    messages, offset = [], 0
    while len(buffer) - offset >= HEADER.size:
        magic, kind, length = HEADER.unpack_from(buffer, offset)
        if magic != MAGIC or kind not in KINDS:
            raise Malformed("what came back on its channel does not start with a hand-back header")
        if length > cap:
            raise Malformed(f"a hand-back of {length} bytes, over the cap of {cap}")
        end = offset + HEADER.size + length
        if len(buffer) < end:
            break
        messages.append(buffer[offset:end])
        offset = end
    return messages, buffer[offset:]


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos, self.nodes = memoryview(data), 0, 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise Malformed(f"truncated at byte {self.pos}: {n} more bytes announced")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        return struct.unpack("<" + fmt, self.take(size))[0]

    def text(self, limit: int = MAX_TEXT_BYTES) -> str:
        n = self.u("I")
        if n > limit:
            raise Malformed(f"a string of {n} bytes, over the cap of {limit}")
        try:
            return bytes(self.take(n)).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise Malformed(f"a string that is not UTF-8 at byte {self.pos}") from exc

    def shape(self) -> tuple[int, ...]:
        ndim = self.u("B")
        if ndim > MAX_NDIM:
            raise Malformed(f"an array of {ndim} dimensions")
        return tuple(self.u("Q") for _ in range(ndim))

    def container(self) -> str:
        code = self.u("B")
        if code >= len(CONTAINERS):
            raise Malformed(f"unknown array container {code}")
        return CONTAINERS[code]


def read(message: bytes) -> Message:
    """One message (as `split` cut it) as decoded nodes; raises `Malformed`."""
    magic, kind, length = HEADER.unpack_from(message, 0)
    if magic != MAGIC or kind not in KINDS or len(message) != HEADER.size + length:
        raise Malformed("not one whole hand-back")
    reader = _Reader(bytes(message[HEADER.size:]))
    try:
        body = _read_tree(reader)
    except Malformed:
        raise
    except (ValueError, TypeError, OverflowError, struct.error) as exc:  # e.g. a dtype numpy refuses
        raise Malformed(f"unreadable at byte {reader.pos}: {exc}") from None
    if reader.pos != len(reader.data):
        raise Malformed(f"{len(reader.data) - reader.pos} bytes after the value")
    return Message(kind.decode(), body)


def _read_tree(r: _Reader) -> object:
    """The node tree, built with an explicit stack: each open container waits for its children."""
    # stack entries: [builder, remaining children, depth, pending key (for mappings)]
    root: list = []
    stack: list[list] = [[root.append, 1, 0, None, "root"]]
    while stack:
        top = stack[-1]
        if top[1] == 0:
            stack.pop()
            continue
        top[1] -= 1
        depth = top[2]
        if depth >= MAX_DEPTH:
            raise Malformed(f"nested deeper than {MAX_DEPTH}")
        r.nodes += 1
        if r.nodes > MAX_NODES:
            raise Malformed(f"more than {MAX_NODES} nodes")
        add = top[0]
        if top[4] == "pairs":  # (key, node) pairs: the key comes first
            key = r.text(4096)
            add = _pair_adder(top[0], key)
        tag = bytes(r.take(1))
        node, children = _read_node(r, tag)
        add(node)
        if children:
            sink, count, mode = children
            stack.append([sink, count, depth + 1, None, mode])
    return root[0]


def _pair_adder(target, key):
    return lambda node: target((key, node))


def _read_node(r: _Reader, tag: bytes):
    """One node; containers come back empty with (where their children go, how many, mode)."""
    if tag == b"N":
        return None, None
    if tag == b"B":
        flag = r.u("B")
        if flag > 1:
            raise Malformed("a bool that is neither 0 nor 1")
        return bool(flag), None
    if tag == b"I":
        digits = r.text(4300)
        if not digits or not digits.lstrip("-").isdigit() or not digits.isascii():
            raise Malformed("an int that is not decimal digits")
        return int(digits), None
    if tag == b"J":
        return BigInt(bool(r.u("B")), r.u("Q")), None
    if tag == b"F":
        return r.u("d"), None
    if tag == b"S":
        return r.text(), None
    if tag == b"A":
        container, dtype, shape = r.container(), r.text(32), r.shape()
        if dtype not in DTYPES:
            raise Malformed(f"an array of dtype {dtype[:32]!r}, not one the reader takes")
        nbytes = r.u("Q")
        size = 1
        for d in shape:
            size *= d
        if size * np.dtype(dtype).itemsize != nbytes:
            raise Malformed(f"an array whose {nbytes} bytes do not fill its shape {shape}")
        data = np.frombuffer(r.take(nbytes), dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
        return Array(container, dtype, shape, data=data), None
    if tag == b"R":
        container, dtype, shape = r.container(), r.text(200), r.shape()
        count = r.u("I")
        if count > 64:
            raise Malformed(f"{count} element reprs, over 64")
        return Array(container, dtype, shape, reprs=tuple(r.text(4096) for _ in range(count))), None
    if tag in (b"L", b"T"):
        length, count = r.u("Q"), r.u("I")
        if count > min(length, 64):
            raise Malformed(f"{count} items sent of a sequence of {length}")
        seq = Seq("tuple" if tag == b"T" else "list", length)
        return seq, (seq.items.append, count, "items")
    if tag in (b"D", b"M"):
        length, nkeys = r.u("Q"), r.u("I")
        if nkeys > min(length, 256):
            raise Malformed(f"{nkeys} keys sent of a mapping of {length}")
        keys = [r.text(4096) for _ in range(nkeys)]
        count = r.u("I")
        if count > min(length, 64):
            raise Malformed(f"{count} values sent of a mapping of {length}")
        mapping = Mapping("namespace" if tag == b"M" else "dict", length, keys)
        return mapping, (mapping.values.append, count, "pairs")
    if tag == b"P":
        rows, cols, nnames = r.u("Q"), r.u("Q"), r.u("I")
        if nnames != cols or nnames > 100_000:
            raise Malformed(f"{nnames} column names for {cols} columns")
        names = [r.text(4096) for _ in range(nnames)]
        has_values = r.u("B")
        count = r.u("I")
        if count > min(cols, 64) or (not has_values and count):
            raise Malformed(f"{count} columns sent of {cols}")
        values: list[tuple[str, object]] | None = [] if has_values else None
        return Frame((rows, cols), names, values), ((values.append if values is not None else None), count, "pairs")
    if tag == b"G":
        dtype = r.text(64)
        inner_tag = bytes(r.take(1))
        if inner_tag not in (b"B", b"I", b"J", b"F"):
            raise Malformed("a numpy scalar that is not a number")
        value, _ = _read_node(r, inner_tag)
        return Scalar(dtype, value), None
    if tag == b"O":
        return Object(r.text(1024), r.text(4096)), None
    raise Malformed(f"unknown tag {tag!r} at byte {r.pos - 1}")
