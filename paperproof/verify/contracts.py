"""Drafting a contract for an entry from its own declarations, and checking outputs against it.

Clauses from a return annotation are the code's own promise (`annotation`); clauses read from a
docstring or a name are our draft of what the prose promises (`docstring`, `name`). The verdict
treats a broken promise of the code as a violation and a broken draft as our mistake.
"""

from __future__ import annotations

import ast
import re

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.run_result import EncodedValue
from paperproof.catalogue.sample import Clause, Contract

# Type words as annotations and docstrings spell them -> the encoded type names that satisfy them.
TYPE_WORDS: dict[str, frozenset[str]] = {
    "bool": frozenset({"bool"}), "boolean": frozenset({"bool"}),
    "int": frozenset({"int"}), "integer": frozenset({"int"}),
    "float": frozenset({"float", "int"}), "scalar": frozenset({"float", "int"}),
    "str": frozenset({"str"}), "string": frozenset({"str"}),
    "list": frozenset({"list"}), "sequence": frozenset({"list", "tuple"}),
    "dict": frozenset({"dict"}), "dictionary": frozenset({"dict"}), "mapping": frozenset({"dict"}),
    "tuple": frozenset({"tuple"}), "pair": frozenset({"tuple"}),
    "ndarray": frozenset({"ndarray"}), "array": frozenset({"ndarray", "Tensor", "list"}),
    "tensor": frozenset({"Tensor"}),
    "dataframe": frozenset({"DataFrame"}), "series": frozenset({"Series"}),
    "none": frozenset({"NoneType"}),
}
_QUALIFIED = re.compile(r"^(np|numpy|torch|pd|pandas|typing|npt|t)\.")
MAX_SHAPE = 200  # characters between a docstring's `shape (` and its `)`: a longer parenthesis is not a shape
_DIMS = {"n_samples": "N", "num_samples": "N", "n": "N", "n_examples": "N", "n_epochs": "E", "num_epochs": "E",
         "epochs": "E", "n_classes": "C", "num_classes": "C"}


def _word_types(word: str) -> frozenset[str] | None:
    return TYPE_WORDS.get(_QUALIFIED.sub("", word).lower())


def annotation_types(text: str) -> frozenset[str] | None:
    """Encoded type names an annotation admits, or None when it names something we cannot check."""
    try:
        node = ast.parse(text.strip().strip("'\""), mode="eval").body
    except SyntaxError:
        return None
    return _node_types(node)


def _node_types(node: ast.expr) -> frozenset[str] | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return TYPE_WORDS["none"]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _node_types(node.left), _node_types(node.right)
        return left | right if left is not None and right is not None else None
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value)
        base = _QUALIFIED.sub("", head)
        if base in ("Optional",):
            inner = _node_types(node.slice)
            return inner | TYPE_WORDS["none"] if inner is not None else None
        if base == "Union":
            members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            found = [_node_types(m) for m in members]
            known = [f for f in found if f is not None]
            return frozenset[str]().union(*known) if len(known) == len(found) else None
        if base in ("NDArray",):
            return TYPE_WORDS["ndarray"]
        return _word_types(base)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _word_types(ast.unparse(node))
    return None


def doc_types(text: str) -> frozenset[str] | None:
    """The type a docstring's Returns section leads with (`pd.DataFrame with ...`, `float: ...`)."""
    head = re.split(r"[:\-–—]\s|\s-\s", text, maxsplit=1)[0]
    found = annotation_types(head) if re.fullmatch(r"[\w.\[\], |]+", head.strip()) else None
    if found is not None:
        return found
    for word in re.findall(r"[A-Za-z_][\w.]*", text)[:6]:
        types = _word_types(word)
        if types is not None:
            return types
    return None


def doc_shape(text: str) -> list[str] | None:
    """A shape such as `(n_epochs, n_samples)` or `[N]` in a Returns section, as dimension names. What follows
    `shape (` is read up to `MAX_SHAPE` characters: from every `shape (` of a text that never closes one, the scan
    to its end made the search quadratic."""
    match = re.search(rf"shape\s*[\(\[]([^)\]]{{1,{MAX_SHAPE}}})[\)\]]|[\(\[]\s*(n_\w+|num_\w+)\s*,?\s*[\)\]]", text)
    if not match:
        return None
    names = [n.strip() for n in (match.group(1) or match.group(2)).split(",") if n.strip()]
    dims = [_DIMS.get(n.lower(), n if n in ("E", "N", "C") else "") for n in names]
    return dims if all(dims) else None


def draft(entry: Entry) -> Contract:
    clauses: list[Clause] = []
    if entry.returns:
        types = annotation_types(entry.returns)
        if types is not None:
            clauses.append(Clause(kind="type", expect=sorted(types), origin="annotation",
                                  text=f"returns {entry.returns} (its annotation)"))
    if entry.returns_doc:
        types = doc_types(entry.returns_doc)
        if types is not None:
            clauses.append(Clause(kind="type", expect=sorted(types), origin="docstring",
                                  text=f"returns {' or '.join(sorted(types))} (docstring: \"{_short(entry.returns_doc)}\")"))
        shape = doc_shape(entry.returns_doc)
        if shape is not None:
            clauses.append(Clause(kind="shape", expect=shape, origin="docstring",
                                  text=f"has shape [{', '.join(shape)}] (docstring)"))
        if re.search(r"(in|within|between)\s*\[\s*0(\.0)?\s*,\s*1(\.0)?\s*\]", entry.returns_doc):
            clauses.append(Clause(kind="range", expect=[0.0, 1.0], origin="docstring",
                                  text="lies in [0, 1] (docstring)"))
    if entry.kind == "function" and re.match(r"^(is|has|should|can)_", entry.name) and not any(c.kind == "type" for c in clauses):
        clauses.append(Clause(kind="type", expect=["bool"], origin="name", text=f"returns bool (the name {entry.name})"))
    return Contract(clauses=clauses)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check(clause: Clause, value: EncodedValue, dims: dict[str, int]) -> bool:
    """Whether an output satisfies a clause. Clauses that do not apply to the value's kind hold."""
    if clause.kind == "type":
        return value.type in clause.expect
    if clause.kind == "shape":
        expected = [dims.get(d) for d in clause.expect]
        return value.shape is None or value.shape == expected
    if clause.kind == "length":
        size = value.shape[0] if value.shape else value.length
        return size is None or size == dims.get(clause.expect)
    if clause.kind == "range":
        low, high = clause.expect
        return (value.min is None or value.min >= low - 1e-9) and (value.max is None or value.max <= high + 1e-9)
    if clause.kind == "finite":
        return value.finite is not False
    if clause.kind == "not_none":
        return value.type != "NoneType"
    return True
