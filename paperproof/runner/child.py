"""The sandbox child: define one entry, call it on each fixture case, report in plain JSON.

This module runs inside the sandbox, after isolation, next to hostile code. It is a trust
boundary, so it imports only the standard library and the fixture materialiser (numpy), and it
writes nothing but JSON lines: one `start` line before each case and one result line after, so
the parent knows which case a crash or a timeout cut short. It never receives anything back.

Sample code shares this process, so it could forge its own report; what the runner can do is
make that visible and keep it contained. Forked copies of the sample never report (only the
process that started the run does); after every call the objects the reporter relies on are
compared with the ones it started with, and a sample that replaced any of them (the encoder,
`json.dumps`, a builtin) ends the run with a `tampered` line, so its report is not trusted.
Returned values are capped in size before they are summarised, and summaries in bytes.
"""

from __future__ import annotations

import builtins
import errno
import hashlib
import inspect
import json
import json.encoder
import math
import os
import socket
import sys
import types

from paperproof.fixtures import stubs
from paperproof.fixtures.values import materialize
from paperproof.runner import protocols
from paperproof.runner.sandbox import Limits

MAX_ITEMS = 64  # container elements encoded individually
MAX_DATA = 4096  # array elements sent in full (enough for per-sample scores of every fixture case)
MAX_TEXT = 400
NETWORK_ERRNOS = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED, errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT}
FS_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_dumps = json.dumps


class ValueTooLarge(ValueError):
    """A returned value over the cap on returned values: it is not summarised at all."""


# --- encoding outputs -----------------------------------------------------------------------


def _quantise(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _encode_array(array, type_name: str) -> dict:
    import numpy as np

    arr = np.asarray(array)
    out: dict = {"type": type_name, "dtype": str(arr.dtype), "shape": list(arr.shape)}
    if arr.dtype.kind in "biuf":
        flat = arr.astype(np.float64).ravel()
        finite = bool(np.isfinite(flat).all()) if flat.size else True
        out["finite"] = finite
        if flat.size and np.isfinite(flat).any():
            good = flat[np.isfinite(flat)]
            out["min"], out["max"] = float(good.min()), float(good.max())
        out["data"] = [_finite_or_none(float(v)) if arr.dtype.kind == "f" else (bool(v) if arr.dtype.kind == "b" else int(v))
                       for v in flat[:MAX_DATA]]
        out["truncated"] = flat.size > MAX_DATA
        out["digest"] = _digest([type_name, str(arr.shape)] + [_quantise(float(v)) for v in flat])
    else:
        text = [repr(v)[:40] for v in arr.ravel()[:MAX_ITEMS]]
        out["repr"] = ", ".join(text)[:MAX_TEXT]
        out["digest"] = _digest([type_name, str(arr.shape), str(arr.dtype)] + text)
    return out


def _mib(size: float) -> str:
    return f"{size / 1024**2:.0f} MiB" if size < 1024**3 else f"{size / 1024**3:.1f} GiB"


def _check_size(value, cap: int) -> None:
    """Refuse values over the cap before touching their contents (a broadcast view can claim terabytes)."""
    size = None
    numpy = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    if numpy is not None and isinstance(value, numpy.ndarray):
        size = value.nbytes
    elif torch is not None and isinstance(value, torch.Tensor):
        size = value.nelement() * value.element_size()
    elif isinstance(value, (str, bytes, bytearray)):
        size = len(value)
    elif isinstance(value, (list, tuple, dict)):
        size = len(value) * 8
    if size is not None and size > cap:
        raise ValueTooLarge(f"the returned {type(value).__name__} is {_mib(size)}, over the {_mib(cap)} cap on returned values")


def _encode_int(value: int) -> dict:
    try:
        text = repr(value)[:MAX_TEXT]
    except ValueError:  # more digits than int->str conversion allows
        text = f"<int of {value.bit_length()} bits>"
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    return {"type": "int", "repr": text, "min": _finite_or_none(number), "max": _finite_or_none(number),
            "finite": math.isfinite(number), "digest": _digest(["num", _quantise(number)])}


def encode(value, depth: int = 0, cap: int = Limits.value_bytes) -> dict:
    """A JSON summary of any value; raises TypeError for values we refuse to describe and
    ValueTooLarge for values over `cap` bytes."""
    _check_size(value, cap)
    if value is None:
        return {"type": "NoneType", "repr": "None", "digest": _digest(["None"])}
    if isinstance(value, bool):
        return {"type": "bool", "repr": repr(value), "digest": _digest(["bool", repr(value)])}
    if isinstance(value, int):
        return _encode_int(value)
    if isinstance(value, float):
        return {"type": "float", "repr": repr(value), "finite": math.isfinite(value),
                "min": _finite_or_none(value), "max": _finite_or_none(value),
                "digest": _digest(["num", _quantise(value)])}
    if isinstance(value, str):
        return {"type": "str", "repr": repr(value)[:MAX_TEXT], "length": len(value), "digest": _digest(["str", value])}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if isinstance(value, numpy.ndarray):
            return _encode_array(value, "ndarray")
        if isinstance(value, numpy.bool_):
            return encode(bool(value), depth)
        if isinstance(value, numpy.integer):
            return {**encode(int(value), depth), "dtype": str(value.dtype)}
        if isinstance(value, numpy.floating):
            return {**encode(float(value), depth), "dtype": str(value.dtype)}
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        out = _encode_array(value.detach().cpu().numpy(), "Tensor")
        out["dtype"] = str(value.dtype).removeprefix("torch.")
        return out
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, pandas.DataFrame):
        columns = [str(c) for c in value.columns]
        sub = {c: encode(value[c].to_numpy(), depth + 1) for c in columns[:MAX_ITEMS]} if depth < 3 else None
        return {"type": "DataFrame", "shape": list(value.shape), "keys": columns, "values": sub,
                "digest": _digest(["DataFrame", str(value.shape)] + columns + [v["digest"] for v in (sub or {}).values()])}
    if pandas is not None and isinstance(value, pandas.Series):
        out = _encode_array(value.to_numpy(), "Series")
        return out
    if isinstance(value, (list, tuple)):
        type_name = "tuple" if isinstance(value, tuple) else "list"
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) and value
        if numeric and depth < 3:
            out = _encode_array(list(value), type_name)
            out["length"] = len(value)
            return out
        items = [encode(v, depth + 1) for v in value[:MAX_ITEMS]] if depth < 3 else []
        return {"type": type_name, "length": len(value), "items": items, "truncated": len(value) > MAX_ITEMS,
                "digest": _digest([type_name, str(len(value))] + [i["digest"] for i in items])}
    if isinstance(value, dict):
        keys = [str(k)[:MAX_TEXT] for k in list(value)[:MAX_ITEMS * 4]]
        sub = {str(k): encode(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]} if depth < 3 else {}
        return {"type": "dict", "length": len(value), "keys": keys, "values": sub, "truncated": len(value) > MAX_ITEMS,
                "digest": _digest(["dict"] + sorted(f"{k}={v['digest']}" for k, v in sub.items()))}
    if isinstance(value, types.SimpleNamespace) or type(value).__name__ == "Namespace":
        return {**encode(dict(vars(value)), depth), "type": "namespace"}
    if type(value).__module__.startswith("PIL."):
        return {**_encode_array(numpy.asarray(value), "PIL.Image")} if numpy is not None else {"type": "PIL.Image", "digest": _digest(["PIL"])}
    return _encode_object(value)


def _encode_object(value) -> dict:
    """Any other object: its type and a bounded repr. A repr that fails makes the value unrecordable."""
    name = f"{type(value).__module__}.{type(value).__qualname__}"
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 - the value's own __repr__ is sample code
        raise TypeError(f"cannot describe a value of type {name}: its repr raised {type(exc).__name__}") from None
    if not isinstance(text, str):
        raise TypeError(f"cannot describe a value of type {name}: its repr is not a string")
    text = text[:MAX_TEXT]
    return {"type": "object", "dtype": name, "repr": text, "digest": _digest(["object", name])}


# --- classifying exceptions -----------------------------------------------------------------


def _blocked(exc: BaseException, limits: Limits) -> str | None:
    """Name the sandbox layer an exception hit, when it is the sandbox (or a limit) that refused."""
    if isinstance(exc, socket.gaierror):
        return "network: name resolution is not available in the sandbox"
    if isinstance(exc, MemoryError):
        return f"memory: allocation refused at the address-space limit ({_mib(limits.address_space)} above the runner's own)"
    if isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc):  # torch's CPU allocator
        return f"memory: allocation refused at the address-space limit ({_mib(limits.address_space)} above the runner's own)"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return f"processes: no thread could be started (limit of {limits.processes} processes and threads)"
    if not isinstance(exc, OSError):
        return None
    if exc.errno in NETWORK_ERRNOS and exc.filename is None:
        return f"network: {os.strerror(exc.errno)}"
    if exc.errno == errno.EAGAIN and exc.filename is None:
        return f"processes: no process could be started (limit of {limits.processes} processes and threads)"
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        return f"open files: limit of {limits.open_files} reached"
    if exc.errno == errno.EFBIG:
        return f"files: the file-size cap of {_mib(limits.file_size)} was reached"
    if exc.errno == errno.ENOSPC:
        return f"disk: the sandbox's {_mib(limits.scratch_bytes)} of private space is full"
    if isinstance(exc, FileNotFoundError):
        return f"file not available in the sandbox: {exc.filename}"
    if exc.errno == errno.EROFS:
        return f"filesystem: {exc.filename or 'the target'} is read-only in the sandbox"
    if exc.errno in FS_ERRNOS and exc.filename:
        return f"filesystem: access to {exc.filename} is denied in the sandbox"
    if exc.errno in FS_ERRNOS:
        return f"privileges: operation not permitted in the sandbox ({os.strerror(exc.errno)})"
    return None


def describe_exception(exc: BaseException, entry_file: str, entry_name: str, binding: bool,
                       limits: Limits | None = None) -> dict:
    tb = exc.__traceback__
    innermost = None
    while tb is not None:
        innermost = tb
        tb = tb.tb_next
    code = innermost.tb_frame.f_code if innermost else None
    if binding:
        where = "binding"
    elif code is not None and code.co_filename == entry_file and code.co_name in (entry_name, "__init__"):
        where = "entry"
    else:
        where = "callee"
    line = None
    tb = exc.__traceback__
    while tb is not None:  # the deepest line inside the repository's file, for the page
        if tb.tb_frame.f_code.co_filename == entry_file:
            line = tb.tb_lineno
        tb = tb.tb_next
    try:
        message = f"exit requested with status {exc.code!r}" if isinstance(exc, SystemExit) else str(exc)
    except Exception:  # noqa: BLE001 - the exception's own __str__ is sample code
        message = "(its message could not be read)"
    return {
        "type": type(exc).__qualname__ if type(exc).__module__ in ("builtins", "__main__") else f"{type(exc).__module__}.{type(exc).__qualname__}",
        "message": message[:MAX_TEXT],
        "where": where,
        "missing_module": getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None,
        "blocked": _blocked(exc, limits or Limits()),
        "line": line,
    }


# --- running --------------------------------------------------------------------------------


def _emit(out, record: dict) -> None:
    out.write(_dumps(record, allow_nan=False, separators=(",", ":")) + "\n")
    out.flush()


# --- the watch on the runner ----------------------------------------------------------------


def _names_used(functions: list) -> set[str]:
    """Every global and attribute name the given functions (and their nested code) look up."""
    names: set[str] = set()
    stack = [f.__code__ for f in functions]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


# Library names the reporter calls; only these are watched, so legacy code that adds or
# replaces others (`np.float = float`, `json.encoder.FLOAT_REPR = ...`) is not taken for tampering.
LIBRARY_NAMES = {
    "json": ("dumps", "JSONEncoder", "_default_encoder"),
    "json.encoder": ("JSONEncoder", "c_make_encoder", "_make_iterencode", "encode_basestring",
                     "encode_basestring_ascii", "c_encode_basestring", "c_encode_basestring_ascii", "INFINITY"),
    "os": ("getpid", "_exit", "waitpid", "strerror", "path", "fdopen"),
    "math": ("isnan", "isinf", "isfinite", "inf"),
    "hashlib": ("sha256",),
    "inspect": ("signature",),
    "types": ("SimpleNamespace", "ModuleType", "CodeType", "FunctionType"),
    "numpy": ("asarray", "isfinite", "ndarray", "bool_", "integer", "floating", "float64"),
}


def _watch_list() -> tuple[tuple[str, dict, str, object], ...]:
    """(label, namespace, name, object) for everything the reporter looks up after sample code ran:
    this module's globals, the builtins its code names, and the library functions it calls."""
    me = sys.modules[__name__]
    own = [v for v in vars(me).values() if isinstance(v, types.FunctionType) and v.__module__ == __name__]
    spaces: list[tuple[str, dict, set[str] | tuple[str, ...] | None]] = [
        (__name__, vars(me), None), ("builtins", vars(builtins), _names_used(own)),
    ]
    for label, names in LIBRARY_NAMES.items():
        module = sys.modules.get(label)
        if module is not None:
            spaces.append((label, vars(module), names))
    return tuple((label, space, name, space[name]) for label, space, names in spaces
                 for name in sorted(space) if (names is None or name in names) and not name.startswith("__"))


def _tampered(watch) -> list[str]:
    missing = object()
    return [f"{label}.{name}" for label, space, name, obj in watch if space.get(name, missing) is not obj]


# --- running --------------------------------------------------------------------------------


def _define(request: dict) -> object:
    """Execute the entry's closure as its module would and return the entry object."""
    root = request["snapshot"]
    filename = os.path.join(root, request["path"])
    module_dir = os.path.dirname(filename)
    for directory in (root, module_dir):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    if request.get("environment") and request["environment"] not in sys.path:
        sys.path.append(request["environment"])  # after the runner's own packages (runner.environment)
    stubs.install(request.get("stubs", []))  # modules the runner lacks get stand-ins (fixtures.stubs)
    module = types.ModuleType(request["module"])
    module.__file__ = filename
    is_package = request["path"].endswith("__init__.py")
    module.__package__ = request["module"] if is_package else request["module"].rpartition(".")[0]
    sys.modules[request["module"]] = module
    code = compile(request["closure"], filename, "exec", dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - this is the sandbox; the code is the sample's own
    return module.__dict__[request["name"]]


def _apply(target, args: list, case: dict, device: str):
    positional = [materialize(a["spec"], case, device) for a in args if a.get("positional")]
    keywords = {a["name"]: materialize(a["spec"], case, device) for a in args if not a.get("positional")}
    return target(*positional, **keywords)


def _call(target, case: dict, device: str):
    """One call, or one call per sample (collected into a list) for code that takes one sample's data."""
    if case.get("per_sample"):
        return [_apply(target, case["args"], {**case, "sample_index": i}, device) for i in range(case["dims"]["N"])]
    return _apply(target, case["args"], case, device)


def _run_class(cls, case: dict, device: str) -> dict:
    """Construct with synthesized arguments, then call each public method we could make arguments for."""
    instance = _apply(cls, case["args"], case, device)
    return {name: _apply(getattr(instance, name), args, case, device) for name, args in case.get("method_args", {}).items()}


class Tampered(Exception):
    """The sample replaced something the reporter relies on; nothing more it reports is trusted."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(", ".join(names))
        self.names = names


def run(request: dict, out) -> None:
    """Define the entry, then report each case. Exceptions from the sample never escape.

    The functions used here are bound before any sample code runs: a sample that rebinds this
    module's names does not change what runs, only what the watch then reports.
    """
    emit, run_case, tampered, watch = _emit, _run_case, _tampered, _WATCH
    owner, exit_now, reap = os.getpid(), os._exit, _reap
    device = request.get("device", "cpu")
    limits = Limits(**request.get("limits", {}))
    entry_file = os.path.join(request["snapshot"], request["path"])
    emit(out, {"event": "load"})
    try:
        target = _define(request)
        error = None
    except BaseException as exc:  # noqa: BLE001 - anything the module does at definition time
        target, error = None, exc
    if os.getpid() != owner:  # a process the module forked: it never reports
        exit_now(0)
    if tampered(watch):
        _emit_tampered(out, tampered(watch))
        return
    if error is not None:
        emit(out, {"event": "load_failed", "exception": describe_exception(error, entry_file, request["name"], False, limits)})
        return
    emit(out, {"event": "loaded", "device": device})
    for case in request["cases"]:
        emit(out, {"event": "start", "case_id": case["case_id"]})
        try:
            record = run_case(target, request, case, device, entry_file, limits, owner, watch)
        except Tampered as exc:
            _emit_tampered(out, exc.names)
            return
        emit(out, record)
        reap()


def _emit_tampered(out, names: list[str]) -> None:
    """Written without the JSON module, which may be the thing replaced; names are our own labels."""
    listed = ",".join('"' + n.replace("\\", "").replace('"', "") + '"' for n in names[:20])
    out.write('{"event":"tampered","names":[' + listed + ']}\n')
    out.flush()


def _reap() -> None:
    """Reap the sample's exited children between cases (a fork bomb's copies exit here), so
    that finished processes stop counting against the process limit."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _binds(target, case: dict) -> bool:
    """Whether our arguments fit the signature, so a TypeError can be told apart from a wrong call."""
    try:
        inspect.signature(target).bind(
            *[None for a in case["args"] if a.get("positional")],
            **{a["name"]: None for a in case["args"] if not a.get("positional")},
        )
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (builtins, some C extensions)
        pass
    return True


def _invoke(target, request: dict, case: dict, device: str):
    if case.get("protocol"):  # driven by a training run through the protocol it declares
        return protocols.drive(target, case, device)
    if request["kind"] == "class":
        return _run_class(target, case, device)
    return _call(target, case, device)


def _guarded(call, owner: int, watch):
    """Call into sample code; returns (value, exception). A forked copy of the sample returning
    here exits at once, and a sample that replaced part of the reporter ends the run."""
    try:
        value, error = call(), None
    except BaseException as exc:  # noqa: BLE001 - the sample's failure is the result
        value, error = None, exc
    if os.getpid() != owner:
        os._exit(0)
    names = _tampered(watch)
    if names:
        raise Tampered(names)
    return value, error


def _summary(value, limits: Limits) -> tuple[dict | None, BaseException | None]:
    """The value's summary, or why it has none: the cap on returned values, the cap on one
    report record, or the value's own methods failing (any exception, even SystemExit)."""
    try:
        encoded = encode(value, cap=limits.value_bytes)
    except BaseException as exc:  # noqa: BLE001 - the value's own __repr__ etc. are sample code
        return None, exc
    size = len(_dumps(encoded, allow_nan=False, separators=(",", ":")))
    if size > limits.record_bytes:
        return None, ValueTooLarge(f"its summary is {size} bytes, over the {limits.record_bytes}-byte cap on one report record")
    return encoded, None


def _run_case(target, request: dict, case: dict, device: str, entry_file: str,
              limits: Limits | None = None, owner: int | None = None, watch=None) -> dict:
    limits = limits or Limits()
    owner = owner if owner is not None else os.getpid()
    watch = watch if watch is not None else _WATCH
    record: dict = {"event": "case", "case_id": case["case_id"]}
    binding = request["kind"] != "class" and not _binds(target, case)
    value, error = _guarded(lambda: _invoke(target, request, case, device), owner, watch)
    if error is not None:
        info = describe_exception(error, entry_file, request["name"], binding, limits)
        record.update(outcome="blocked" if info["blocked"] else "raised", exception=info)
        return record
    encoded, error = _summary(value, limits)
    if error is not None:
        record.update(outcome="unserialisable", exception=describe_exception(error, entry_file, request["name"], False, limits))
        return record
    record.update(outcome="returned", value=encoded)
    if case["case_id"] in request.get("repeat", []):
        again, error = _guarded(lambda: _invoke(target, request, case, device), owner, watch)
        repeat, _ = _summary(again, limits) if error is None else (None, error)
        record["repeat_equal"] = repeat is not None and repeat["digest"] == encoded["digest"]
    return record


_WATCH = _watch_list()
