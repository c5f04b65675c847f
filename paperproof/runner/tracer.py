"""Every call into the repository's own functions, classes and methods while one of its drivers runs: who called,
with what (type, shape, dtype, range), what came back, how often, and in which order.

This is how an entry is observed rather than guessed: the repository's tests, examples and scripts
(`catalogue.drivers`) run in the sandbox on planted data, and the tracer records the calls they make. It runs in
the sandbox process beside the driver, so it imports nothing beyond the standard library and touches values only
through the attributes every array library shares (`shape`, `dtype`, `min`, `max`), never importing numpy or torch.

What it keeps is bounded, so that a driver calling an entry a million times costs the same memory as one calling it
a hundred: per code object a count, the first `MAX_KEPT` calls in detail and the first `MAX_REPLAY` calls' arguments
themselves (in this process, for replay); at most `MAX_KEYS` code objects. A summary looks at most `MAX_ITEMS`
elements of a container, `MAX_DEPTH` containers deep, and computes a range only for arrays of at most
`MAX_RANGE_SIZE` elements. On Python 3.11 it is a `sys.setprofile` function (every thread's, through `threading`);
code outside the observed files costs one dictionary look-up per call.

The limit it cannot lift, as for a case's hand-back (`docs/sandbox.md`): the driver runs in the same process, so code
of the repository can reach the tracer and change what it recorded of that repository's calls. What it records is
evidence of how the repository calls its code, judged by the same checks as any case, never a status by itself.
"""

from __future__ import annotations

import dis
import os
import sys
import threading
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

MAX_KEYS = 512  # code objects recorded
MAX_KEPT = 16  # calls of one code object summarised
MAX_REPLAY = 3  # calls of one code object whose arguments are kept as they were
MAX_ITEMS = 8  # elements of a container summarised
MAX_DEPTH = 2  # containers in containers
MAX_TEXT = 120  # characters of a string or a repr kept
MAX_RANGE_SIZE = 10_000_000  # elements of an array whose minimum and maximum are computed
MAX_CALLER_FRAMES = 64  # frames walked back to find the repository's caller

_RETURNS = frozenset(dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap)
_RESUME = dis.opmap["RESUME"]
_LAZY = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
_FUNCTION = 0x01  # CO_OPTIMIZED: a function's code, not a module's or a class body's


@dataclass
class Call:
    """One call of an observed code object."""

    order: int  # among every observed call of the run: the sequence of a hook across epochs
    caller: tuple[str, int] | None  # the nearest frame in the repository that led to it: (file, line)
    args: dict[str, dict]  # parameter -> summary, `self` left out
    result: dict | None = None  # None until it returns
    raised: bool = False  # it ended by an exception


@dataclass
class Observed:
    """One code object's calls: `path::qualname`, how many, the first few in detail."""

    key: str
    count: int = 0
    calls: list[Call] = field(default_factory=list)
    replay: list[tuple[dict[str, Any], Any]] = field(default_factory=list)  # (arguments, result) as they were


class Tracer:
    """Records the calls into code defined in `files` (paths relative to `root`; every file under it when None).
    Nested functions and lambdas are not recorded (their enclosing function is); constructors (`__init__`) and
    `__call__` are, other dunders are not."""

    def __init__(self, root: str, files: set[str] | None = None, owners: set[str] | None = None) -> None:
        self.root = os.path.realpath(root) + os.sep
        self.files = files
        self.owners = owners  # files whose classes a method they inherit is recorded as (`_own_class`); None: all
        self.observed: dict[str, Observed] = {}
        self.dropped = 0  # calls of code objects past `MAX_KEYS`
        self._order = 0
        self._codes: dict[CodeType, str | None] = {}  # decided once per code object
        self._open: dict[int, tuple[Observed, Call, int | None]] = {}  # frame id -> its call, until it returns
        self._relpaths: dict[str, str | None] = {}
        self._classes: dict[tuple[type, CodeType], str] = {}  # (the object's class, a method's code) -> its key

    def __enter__(self) -> Tracer:
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type,unused-ignore]  # None unsets it, as for sys.setprofile

    def report(self) -> dict:
        """What was observed, as plain JSON data (the replayable objects stay in this process)."""
        return {"dropped": self.dropped, "observed": [
            {"key": seen.key, "count": seen.count,
             "calls": [{"order": c.order, "caller": list(c.caller) if c.caller else None, "args": c.args,
                        "result": c.result, "raised": c.raised} for c in seen.calls]}
            for seen in self.observed.values()]}

    def _key(self, code: CodeType) -> str | None:
        key = self._codes.get(code, "")
        if key != "":
            return key
        rel = self._relpath(code.co_filename)
        name = code.co_qualname
        tail = name.rpartition(".")[2]
        chosen = None
        if rel is not None and (self.files is None or rel in self.files) and code.co_flags & _FUNCTION \
                and "<" not in name \
                and not (tail.startswith("__") and tail not in ("__init__", "__call__")):
            chosen = f"{rel}::{name}"
        self._codes[code] = chosen
        return chosen

    def _own_class(self, key: str, frame: FrameType) -> str:
        """A method inherited from a base class is recorded as the method of the object's own class, when that class
        lies in one of `owners` (the entries' files): the driver made a `CGInfluenceModule` and asked it for
        `influences`, which its base defines; the entry it observed is the class it made. A class the driver itself
        defines leaves the call with the base. Decided once per class and code object."""
        code = frame.f_code
        if not code.co_argcount or code.co_varnames[0] != "self" or "." not in code.co_qualname:
            return key
        try:
            cls = type(frame.f_locals["self"])
            decided = self._classes.get((cls, code))
        except Exception:  # noqa: BLE001 - a repository's metaclass may refuse to be hashed
            return key
        if decided is None:
            decided = key
            owner, _, method = code.co_qualname.rpartition(".")
            if cls.__qualname__ != owner:
                rel = self._relpath(getattr(sys.modules.get(cls.__module__), "__file__", None) or "")
                if rel is not None and (self.owners is None or rel in self.owners):
                    decided = f"{rel}::{cls.__qualname__}.{method}"
            self._classes[(cls, code)] = decided
        return decided

    def _relpath(self, filename: str) -> str | None:
        """`filename` relative to the root, or None outside it; decided once per file name."""
        rel = self._relpaths.get(filename, "")
        if rel != "":
            return rel
        real = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
        rel = real[len(self.root):] if real.startswith(self.root) else None
        self._relpaths[filename] = rel
        return rel

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            key = self._key(frame.f_code)
            if key is not None:
                self._called(self._own_class(key, frame), frame)
        elif event == "return":
            opened = self._open.pop(id(frame), None)
            if opened is not None:
                self._returned(*opened, frame, arg)

    def _called(self, key: str, frame: FrameType) -> None:
        seen = self.observed.get(key)
        if seen is None:
            if len(self.observed) >= MAX_KEYS:
                self.dropped += 1
                return
            seen = self.observed[key] = Observed(key)
        lazy = bool(frame.f_code.co_flags & _LAZY)
        if lazy and not _starting(frame):  # a generator resumed: the same call going on
            return
        seen.count += 1
        self._order += 1
        if len(seen.calls) >= MAX_KEPT:
            return
        values = _arguments(frame)
        call = Call(self._order, self._caller(frame),
                    {name: summary(value) for name, value in values.items() if name != "self"})
        seen.calls.append(call)
        replay = None
        if len(seen.replay) < MAX_REPLAY:
            replay = len(seen.replay)
            seen.replay.append((values, None))
        if not lazy:
            self._open[id(frame)] = (seen, call, replay)

    def _returned(self, seen: Observed, call: Call, replay: int | None, frame: FrameType, value: Any) -> None:
        code = frame.f_code.co_code
        call.raised = not (0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in _RETURNS)
        if not call.raised:
            call.result = summary(value)
            if replay is not None:
                seen.replay[replay] = (seen.replay[replay][0], value)

    def _caller(self, frame: FrameType) -> tuple[str, int] | None:
        back = frame.f_back
        for _ in range(MAX_CALLER_FRAMES):
            if back is None:
                return None
            rel = self._relpath(back.f_code.co_filename)
            if rel is not None:
                return rel, back.f_lineno
            back = back.f_back
        return None


def _starting(frame: FrameType) -> bool:
    """Whether a generator's or coroutine's frame runs for the first time: it stands at the `RESUME` that starts
    its body (argument 0), not one after a `yield` or an `await`."""
    code, at = frame.f_code.co_code, frame.f_lasti
    return 0 <= at < len(code) - 1 and code[at] == _RESUME and code[at + 1] == 0


def _arguments(frame: FrameType) -> dict[str, Any]:
    """The frame's parameters as it was called: positional, `*args`, keyword-only, `**kwargs`."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    local = frame.f_locals
    return {name: local[name] for name in code.co_varnames[:count] if name in local}


def summary(value: Any, depth: int = 0) -> dict:
    """What a value is, without changing it: its type; an array's shape, dtype and range; a container's length and
    first elements; a scalar's value. Never raises: a value whose attributes raise is described by its type."""
    kind = type(value)
    out: dict[str, Any] = {"type": f"{kind.__module__}.{kind.__qualname__}" if kind.__module__ != "builtins"
                           else kind.__qualname__}
    try:
        if value is None or isinstance(value, bool | int | float | complex):
            out["value"] = value if not isinstance(value, int) or abs(value) < 1 << 63 else str(value)[:MAX_TEXT]
        elif isinstance(value, str | bytes):
            out["len"] = len(value)
            out["value"] = value[:MAX_TEXT]
        elif _is_array(value):
            shape = [int(n) for n in tuple(value.shape)[:8]]
            out["shape"] = shape
            out["dtype"] = str(value.dtype)
            size = 1
            for n in shape:
                size *= n
            if 0 < size <= MAX_RANGE_SIZE and not str(value.dtype).startswith(("str", "<U", "object", "|S")):
                plain = value.detach() if callable(getattr(value, "detach", None)) else value  # no autograd
                out["min"], out["max"] = float(plain.min()), float(plain.max())
        elif isinstance(value, dict):
            out["len"] = len(value)
            if depth < MAX_DEPTH:
                out["items"] = {str(k)[:MAX_TEXT]: summary(v, depth + 1)
                                for k, v in list(value.items())[:MAX_ITEMS]}
        elif isinstance(value, list | tuple | set | frozenset):
            out["len"] = len(value)
            if depth < MAX_DEPTH:
                out["items"] = [summary(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
        elif isinstance(getattr(value, "shape", None), tuple):  # a data frame: a shape, dtypes per column
            out["shape"] = [int(n) for n in value.shape[:8]]
        elif callable(value) and hasattr(value, "__qualname__"):
            out["name"] = str(value.__qualname__)[:MAX_TEXT]
    except Exception:  # noqa: BLE001 - a value of the repository's may raise on any attribute: its type says enough
        out = {"type": out["type"]}
    return out


def _is_array(value: Any) -> bool:
    """numpy, torch, TensorFlow, JAX and pandas arrays alike: a shape that is a tuple of ints, and a dtype."""
    try:
        shape = value.shape
        return hasattr(value, "dtype") and all(isinstance(n, int) or type(n).__name__ in ("int64", "Dimension")
                                               or hasattr(n, "__index__") for n in tuple(shape))
    except Exception:  # noqa: BLE001 - a repository's object may raise on `shape`
        return False
