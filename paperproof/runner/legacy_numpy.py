"""NumPy's removed names, given back their old meanings for code written before they went.

Research code outlives the NumPy it was written for: `np.Inf`, `np.float`, `np.product` and the other names NumPy
1.24 and 2.x removed now raise `AttributeError` at the line that uses them (often a default or a module global),
and the code computes nothing. Each was an alias whose meaning never changed (`np.Inf` is `np.inf`, `np.float` the
builtin `float`, `np.product` is `np.prod`), so where this runner's NumPy lacks one, the sandbox child binds it to
what it meant; the page names the ones the code uses. Nothing that NumPy still defines is touched.
"""

from __future__ import annotations

import re

# Removed name -> the name (in numpy, or a builtin after "builtins.") it stood for.
ALIASES = {
    "Inf": "inf", "Infinity": "inf", "infty": "inf", "PINF": "inf", "NaN": "nan", "NAN": "nan",
    "float_": "float64", "complex_": "complex128", "cfloat": "complex128", "longfloat": "longdouble",
    "singlecomplex": "complex64", "longcomplex": "clongdouble", "clongfloat": "clongdouble",
    "string_": "bytes_", "unicode_": "str_", "int0": "intp", "uint0": "uintp", "bool8": "bool_",
    "product": "prod", "cumproduct": "cumprod", "sometrue": "any", "alltrue": "all", "round_": "round",
    "trapz": "trapezoid", "row_stack": "vstack",
    "float": "builtins.float", "int": "builtins.int", "object": "builtins.object", "str": "builtins.str",
    "unicode": "builtins.str", "complex": "builtins.complex", "long": "builtins.int",
}
CONSTANTS = {"NINF": float("-inf"), "PZERO": 0.0, "NZERO": -0.0}
FUNCTIONS = ("asfarray", "in1d")  # removed functions that were more than another name
_USE = re.compile(r"\b(?:np|numpy)\.(" + "|".join(sorted([*ALIASES, *CONSTANTS, *FUNCTIONS], key=len, reverse=True)) + r")\b")


def used(source: str, present: frozenset[str] | None = None) -> list[str]:
    """The removed names `source` uses (`np.Inf`), in order, that this runner's NumPy lacks."""
    if present is None:
        import numpy

        present = frozenset(n for n in (*ALIASES, *CONSTANTS, *FUNCTIONS) if n in numpy.__dict__)
    return list(dict.fromkeys(m.group(1) for m in _USE.finditer(source) if m.group(1) not in present))


def install() -> list[str]:
    """Bind each removed name this process's NumPy lacks to its old meaning; the names bound."""
    import builtins
    import sys

    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    bound = []
    for name, meaning in ALIASES.items():
        if name not in numpy.__dict__:
            owner, _, attr = meaning.rpartition(".")
            value = getattr(builtins if owner == "builtins" else numpy, attr, None)
            if value is not None:
                setattr(numpy, name, value)
                bound.append(name)
    for name, value in CONSTANTS.items():
        if name not in numpy.__dict__:
            setattr(numpy, name, value)
            bound.append(name)
    asarray, isin, float64 = numpy.asarray, numpy.isin, numpy.float64

    def asfarray(a, dtype=float64):
        """`np.asfarray`: the array as floating point (float64 unless a floating dtype is asked for)."""
        return asarray(a, dtype=dtype if numpy.issubdtype(dtype, numpy.inexact) else float64)

    def in1d(ar1, ar2, assume_unique=False, invert=False):
        """`np.in1d`: `isin` over the flattened first array."""
        return isin(ar1, ar2, assume_unique=assume_unique, invert=invert).ravel()

    for function in (asfarray, in1d):
        if function.__name__ not in numpy.__dict__:
            setattr(numpy, function.__name__, function)
            bound.append(function.__name__)
    return bound
