"""The sandbox child: define one entry, call it on each fixture case, report in plain JSON.

This module runs inside the sandbox, after isolation, next to hostile code. It is a trust
boundary, so it imports only the standard library and the fixture materialiser (numpy), and it
writes nothing but JSON lines: one `start` line before each case and one result line after, so
the parent knows which case a crash or a timeout cut short. It never receives anything back.
"""

from __future__ import annotations

import errno
import hashlib
import inspect
import json
import math
import os
import socket
import sys
import types

from paperproof.fixtures.values import materialize

MAX_ITEMS = 64  # container elements encoded individually
MAX_DATA = 4096  # array elements sent in full (enough for per-sample scores of every fixture case)
MAX_TEXT = 400
NETWORK_ERRNOS = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED, errno.EADDRNOTAVAIL}
FS_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}


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


def encode(value, depth: int = 0) -> dict:
    """A JSON summary of any value; raises TypeError for values we refuse to describe."""
    if value is None:
        return {"type": "NoneType", "repr": "None", "digest": _digest(["None"])}
    if isinstance(value, bool):
        return {"type": "bool", "repr": repr(value), "digest": _digest(["bool", repr(value)])}
    if isinstance(value, int):
        return {"type": "int", "repr": repr(value)[:MAX_TEXT], "min": float(value), "max": float(value),
                "finite": True, "digest": _digest(["num", _quantise(float(value))])}
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
        keys = [str(k) for k in list(value)[:MAX_ITEMS * 4]]
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


def _blocked(exc: BaseException) -> str | None:
    """Name the sandbox layer an exception hit, when it is the sandbox that refused."""
    if isinstance(exc, socket.gaierror):
        return "network: name resolution is not available in the sandbox"
    if isinstance(exc, OSError) and exc.errno in NETWORK_ERRNOS:
        return f"network: {os.strerror(exc.errno)}"
    if isinstance(exc, FileNotFoundError):
        return f"file not available in the sandbox: {exc.filename}"
    if isinstance(exc, OSError) and exc.errno in FS_ERRNOS and exc.filename:
        return f"filesystem: writing {exc.filename} is not allowed"
    return None


def describe_exception(exc: BaseException, entry_file: str, entry_name: str, binding: bool) -> dict:
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
    message = str(exc)
    return {
        "type": type(exc).__qualname__ if type(exc).__module__ in ("builtins", "__main__") else f"{type(exc).__module__}.{type(exc).__qualname__}",
        "message": message[:MAX_TEXT],
        "where": where,
        "missing_module": getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None,
        "blocked": _blocked(exc),
        "line": line,
    }


# --- running --------------------------------------------------------------------------------


def _emit(out, record: dict) -> None:
    out.write(json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n")
    out.flush()


def _define(request: dict) -> object:
    """Execute the entry's closure as its module would and return the entry object."""
    root = request["snapshot"]
    filename = os.path.join(root, request["path"])
    module_dir = os.path.dirname(filename)
    for directory in (root, module_dir):
        if directory not in sys.path:
            sys.path.insert(0, directory)
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


def run(request: dict, out) -> None:
    """Define the entry, then report each case. Exceptions from the sample never escape."""
    device = request.get("device", "cpu")
    entry_file = os.path.join(request["snapshot"], request["path"])
    _emit(out, {"event": "load"})
    try:
        target = _define(request)
    except BaseException as exc:  # noqa: BLE001 - anything the module does at definition time
        _emit(out, {"event": "load_failed", "exception": describe_exception(exc, entry_file, request["name"], False)})
        return
    _emit(out, {"event": "loaded", "device": device})
    for case in request["cases"]:
        _emit(out, {"event": "start", "case_id": case["case_id"]})
        _emit(out, _run_case(target, request, case, device, entry_file))


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
    if request["kind"] == "class":
        return _run_class(target, case, device)
    return _call(target, case, device)


def _run_case(target, request: dict, case: dict, device: str, entry_file: str) -> dict:
    record: dict = {"event": "case", "case_id": case["case_id"]}
    binding = request["kind"] != "class" and not _binds(target, case)
    try:
        value = _invoke(target, request, case, device)
    except BaseException as exc:  # noqa: BLE001 - the sample's failure is the result
        info = describe_exception(exc, entry_file, request["name"], binding)
        record.update(outcome="blocked" if info["blocked"] else "raised", exception=info)
        return record
    try:
        encoded = encode(value)
    except Exception as exc:  # noqa: BLE001 - including errors raised by the value's own methods
        record.update(outcome="unserialisable", exception=describe_exception(exc, entry_file, request["name"], False))
        return record
    record.update(outcome="returned", value=encoded)
    if case["case_id"] in request.get("repeat", []):
        try:
            record["repeat_equal"] = encode(_invoke(target, request, case, device))["digest"] == encoded["digest"]
        except BaseException:  # noqa: BLE001 - a repeat that fails is not equal
            record["repeat_equal"] = False
    return record
