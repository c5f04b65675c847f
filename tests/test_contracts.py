"""Contracts are drafted from declarations; annotations are the code's promise, prose is our draft."""

from __future__ import annotations

from paperproof.catalogue.extract import extract_module
from paperproof.catalogue.run_result import EncodedValue
from paperproof.verify.contracts import annotation_types, check, doc_shape, doc_types, draft


def entry(code: str):
    (found,) = extract_module(code, repo="o/r", path="m.py")
    return found


def test_annotations_map_to_encoded_types():
    assert annotation_types("np.ndarray") == {"ndarray"}
    assert annotation_types("Optional[float]") == {"float", "int", "NoneType"}
    assert annotation_types("Tuple[float, float]") == {"tuple"}
    assert annotation_types("pd.DataFrame | None") == {"DataFrame", "NoneType"}
    assert annotation_types("torch.Tensor") == {"Tensor"}
    assert annotation_types("MyCustomThing") is None


def test_docstring_returns():
    assert doc_types("pd.DataFrame with columns guid, confidence") == {"DataFrame"}
    assert doc_types("float: the score") == {"float", "int"}
    assert doc_types("list of the k hardest indices") == {"list"}
    assert doc_types("the thing we computed") is None
    assert doc_shape("np.ndarray of shape (n_epochs, n_samples)") == ["E", "N"]
    assert doc_shape("array (n_samples,)") == ["N"]


def test_draft_marks_the_origin_of_each_clause():
    contract = draft(entry('def f(x) -> bool:\n    """Check.\n\n    Returns:\n        float in [0, 1]\n    """\n'))
    origins = [(c.kind, c.origin) for c in contract.clauses]
    assert origins == [("type", "annotation"), ("type", "docstring"), ("range", "docstring")]
    assert [c.origin for c in draft(entry("def is_noisy(x):\n    pass\n")).clauses] == ["name"]
    assert draft(entry("def f(x):\n    pass\n")).clauses == []


def test_checks():
    value = EncodedValue(type="ndarray", dtype="float64", shape=[6, 24], min=0.0, max=1.5, finite=True, digest="x")
    contract = draft(entry('def f(x) -> np.ndarray:\n    """F.\n\n    Returns:\n        np.ndarray of shape (n_epochs, n_samples) in [0, 1]\n    """\n'))
    kinds = {c.kind: check(c, value, {"E": 6, "N": 24}) for c in contract.clauses}
    assert kinds == {"type": True, "shape": True, "range": False}
    assert not check(contract.clauses[1], value, {"E": 5, "N": 24}) or contract.clauses[1].kind != "shape"
