"""What the record says of a value a case handed back: type, shape, range, small data, digest.

Runs on the trusted side, on what `wire.read` decoded: the sample's process sends its value's
contents, never a summary, so it cannot write the type, range or digest the record carries.
Digests are of quantised contents, so identical behaviour in two repositories links them.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from paperproof.runner import wire

MAX_ITEMS = 64  # container elements encoded individually
MAX_DATA = 4096  # array elements sent in full (enough for per-sample scores of every fixture case)
MAX_TEXT = 400


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


def _array(node: wire.Array, type_name: str | None = None, dtype: str | None = None) -> dict:
    type_name = type_name or node.container
    shape = list(node.shape)
    out: dict = {"type": type_name, "dtype": dtype or node.dtype, "shape": shape}
    if node.data is not None:
        kind = node.data.dtype.kind
        flat = node.data.astype(np.float64).ravel()
        finite = np.isfinite(flat)
        out["finite"] = bool(finite.all()) if flat.size else True
        if flat.size and finite.any():
            good = flat[finite]
            out["min"], out["max"] = float(good.min()), float(good.max())
        head = flat[:MAX_DATA]
        out["data"] = [_finite_or_none(float(v)) for v in head] if kind == "f" else \
            [bool(v) for v in head] if kind == "b" else [int(v) for v in node.data.ravel()[:MAX_DATA]]
        out["truncated"] = flat.size > MAX_DATA
        out["digest"] = _digest([type_name, str(tuple(shape))] + [_quantise(float(v)) for v in flat])
    else:
        text = [t[:40] for t in (node.reprs or ())]
        out["repr"] = ", ".join(text)[:MAX_TEXT]
        out["digest"] = _digest([type_name, str(tuple(shape)), node.dtype] + text)
    return out


def _int(value: int | wire.BigInt) -> dict:
    if isinstance(value, wire.BigInt):
        text, number = f"<int of {value.bits} bits>", -math.inf if value.negative else math.inf
    else:
        text = repr(value)[:MAX_TEXT]
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if value > 0 else -math.inf
    return {"type": "int", "repr": text, "min": _finite_or_none(number), "max": _finite_or_none(number),
            "finite": math.isfinite(number), "digest": _digest(["num", _quantise(number)])}


def encode(node: object) -> dict:
    """The record's summary of a decoded value (a tree at most `wire.MAX_DEPTH` deep)."""
    if node is None:
        return {"type": "NoneType", "repr": "None", "digest": _digest(["None"])}
    if isinstance(node, bool):
        return {"type": "bool", "repr": repr(node), "digest": _digest(["bool", repr(node)])}
    if isinstance(node, (int, wire.BigInt)):
        return _int(node)
    if isinstance(node, float):
        return {"type": "float", "repr": repr(node), "finite": math.isfinite(node),
                "min": _finite_or_none(node), "max": _finite_or_none(node), "digest": _digest(["num", _quantise(node)])}
    if isinstance(node, str):
        return {"type": "str", "repr": repr(node)[:MAX_TEXT], "length": len(node), "digest": _digest(["str", node])}
    if isinstance(node, wire.Scalar):
        return {**encode(node.value), "dtype": node.dtype} if not isinstance(node.value, bool) else encode(node.value)
    if isinstance(node, wire.Array):
        if node.container in ("list", "tuple"):
            out = _array(node)
            out["length"] = node.shape[0] if node.shape else 0
            return out
        if node.container == "Tensor":
            return _array(node, "Tensor", node.dtype)
        return _array(node)
    if isinstance(node, wire.Seq):
        items = [encode(v) for v in node.items]
        return {"type": node.type, "length": node.length, "items": items, "truncated": node.length > MAX_ITEMS,
                "digest": _digest([node.type, str(node.length)] + [i["digest"] for i in items])}
    if isinstance(node, wire.Mapping):
        sub = {k: encode(v) for k, v in node.values}
        return {"type": node.type, "length": node.length, "keys": list(node.keys), "values": sub,
                "truncated": node.length > MAX_ITEMS,
                "digest": _digest(["dict"] + sorted(f"{k}={v['digest']}" for k, v in sub.items()))}
    if isinstance(node, wire.Frame):
        columns = {k: encode(v) for k, v in node.values} if node.values is not None else None
        return {"type": "DataFrame", "shape": list(node.shape), "keys": list(node.columns), "values": columns,
                "digest": _digest(["DataFrame", str(tuple(node.shape))] + list(node.columns)
                                  + [v["digest"] for v in (columns or {}).values()])}
    if isinstance(node, wire.Object):
        return {"type": "object", "dtype": node.name, "repr": node.repr[:MAX_TEXT], "digest": _digest(["object", node.name])}
    raise wire.Malformed(f"not a value node: {type(node).__name__}")
