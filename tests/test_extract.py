"""Extraction reads code with `ast` only, and each entry carries the closure it needs to run."""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

from paperproof.catalogue.extract import extract_module, extract_repo, returns_section

MODULE = textwrap.dedent('''\
    """A module that must never be imported by extraction."""
    import os
    import numpy as np
    import tensorflow as tf
    from .helpers import scale

    EPS = 1e-12
    UNUSED = 3
    open(os.environ.get("CANARY", "/nonexistent/canary"), "w").write("imported!")


    def _normalise(x):
        return x / (x.sum() + EPS)


    @staticmethod
    def entropy(p: np.ndarray, base: float = 2.0) -> np.ndarray:
        """Entropy of each row.

        Args:
            p: probabilities, shape (n_samples, n_classes)
            base: logarithm base

        Returns:
            np.ndarray of shape (n_samples,)
        """
        q = _normalise(p)
        return -(q * np.log(q + EPS)).sum(-1) / np.log(base)


    class Tracker:
        def __init__(self, n, *, decay=0.9):
            self.n = n

        def update(self):
            return tf.constant(self.n)

        def _private(self):
            pass

        @property
        def value(self):
            return self.n

        @value.setter
        def value(self, new):
            self.n = new


    def uses_relative(x):
        return scale(x)


    if __name__ == "__main__":
        entropy(None)
''')


def entries_by_name(text: str = MODULE):
    return {e.name: e for e in extract_module(text, repo="o/r", path="pkg/mod.py")}


def test_entries_are_public_functions_and_classes():
    entries = entries_by_name()
    assert sorted(entries) == ["Tracker", "entropy", "uses_relative"]
    assert entries["Tracker"].kind == "class" and entries["Tracker"].methods == ["update"]
    assert [p.name for p in entries["Tracker"].params] == ["n", "decay"]
    assert entries["entropy"].module == "pkg.mod"


def test_code_sha256_covers_exactly_the_source_segment():
    entry = entries_by_name()["entropy"]
    assert entry.source.startswith("@staticmethod\ndef entropy(")
    assert entry.source.rstrip().endswith("/ np.log(base)")
    assert entry.code_sha256 == hashlib.sha256(entry.source.encode()).hexdigest()
    lines = MODULE.splitlines(keepends=True)
    assert "".join(lines[entry.lineno - 1:entry.end_lineno]) == entry.source


def test_signature_docs_and_returns_are_read_not_evaluated():
    entry = entries_by_name()["entropy"]
    assert [(p.name, p.annotation, p.default) for p in entry.params] == [("p", "np.ndarray", None), ("base", "float", "2.0")]
    assert entry.returns == "np.ndarray"
    assert entry.returns_doc == "np.ndarray of shape (n_samples,)"
    assert entry.params[0].doc == "probabilities, shape (n_samples, n_classes)"


def test_closure_takes_what_the_entry_needs_and_keeps_line_numbers():
    entry = entries_by_name()["entropy"]
    assert entry.closure_names == ["EPS", "_normalise", "np"]
    assert entry.closure_imports == ["numpy"]
    assert "tensorflow" not in entry.closure and "canary" not in entry.closure and "UNUSED" not in entry.closure
    closure_lines = entry.closure.splitlines()
    original = MODULE.splitlines()
    for number, line in enumerate(closure_lines, start=1):
        assert line == "" or line == original[number - 1]
    compile(entry.closure, "pkg/mod.py", "exec")
    tracker = entries_by_name()["Tracker"]
    assert "tf" in tracker.closure_names
    assert entries_by_name()["uses_relative"].closure_imports == [".helpers"]


def test_extraction_never_imports_the_repository(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text(MODULE)
    (repo / "pkg" / "broken.py").write_text("def ok(:\n    pass\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_mod.py").write_text("def test_x():\n    pass\n")
    canary = tmp_path / "canary"
    monkeypatch.setenv("CANARY", str(canary))
    report = extract_repo(repo, "o/r")
    assert not canary.exists()
    assert {e.path for e in report.entries} == {"pkg/mod.py"}
    assert report.skipped == [("pkg/broken.py", "does not parse: invalid syntax (line 1)")] or \
        report.skipped[0][0] == "pkg/broken.py"


def test_returns_sections_in_three_styles():
    assert returns_section("Do it.\n\nReturns:\n    pd.DataFrame: the table\n") == "pd.DataFrame: the table"
    assert returns_section("Do it.\n\nReturns\n-------\nlist\n    the indices\n") == "list the indices"
    assert returns_section("Do it.\n\n:param x: thing\n:rtype: float\n") == "float"
    assert returns_section("No section here.") is None


def test_specimen_repositories_extract(tmp_path):
    from paperproof.catalogue.archive import bundled_root

    root = bundled_root() / "repos" / "paperproof-specimens+dynamics-maps"
    names = {e.name for e in extract_repo(root, "paperproof-specimens/dynamics-maps").entries}
    assert {"confidence_scores", "forgetting_events", "compute_train_dy_metrics"} <= names
    assert not any(n.startswith("_") for n in names)
    assert Path(root, "dynamics_maps", "metrics.py").is_file()


def test_hostile_modules_are_recorded_and_the_rest_extracted(tmp_path):
    """Text that makes the parser raise (a 60,000-term expression), a name that is not UTF-8, a file
    over the size cap, a module linking out of the checkout: each is a skipped file with its reason."""
    outside = tmp_path / "outside.py"
    outside.write_text("def leaked():\n    return 'outside'\n")
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text(MODULE)
    (repo / "pkg" / "deep.py").write_text("def f():\n    return " + "+".join(["1"] * 60_000) + "\n")
    (repo / "pkg" / os.fsdecode(b"caf\xe9.py")).write_text("def g():\n    return 1\n")
    (repo / "pkg" / "huge.py").write_text("x = '" + "a" * (600 * 1024) + "'\n")
    (repo / "pkg" / "out.py").symlink_to(outside)
    (repo / "pkg" / "outdir").symlink_to(tmp_path)
    report = extract_repo(repo, "o/r")
    assert {e.path for e in report.entries} == {"pkg/mod.py"}
    reasons = dict(report.skipped)
    assert reasons["pkg/deep.py"] == "nested too deeply to parse"
    assert reasons["pkg/caf\\xe9.py"] == "its name is not UTF-8"
    assert "over the 524288-byte cap" in reasons["pkg/huge.py"]
    assert "pkg/out.py" not in reasons and not any("leaked" == e.name for e in report.entries)


def test_a_closure_takes_the_calls_that_built_a_module_object_it_needs() -> None:
    text = (
        "import argparse\nimport numpy as np\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--dataset', default='cifar10')\n"
        "np.random.seed(0)\n"
        "args = parser.parse_args()\n\n"
        "def pick(x):\n    return args.dataset, np.asarray(x)\n")
    (entry,) = extract_module(text, repo="o/r", path="score.py")
    assert "parser.add_argument('--dataset', default='cifar10')" in entry.closure
    assert "np.random.seed(0)" not in entry.closure  # a call on an imported module builds nothing of the module's
    assert entry.closure.splitlines().index("def pick(x):") == text.splitlines().index("def pick(x):")  # lines kept


def test_a_dataclass_or_named_tuple_takes_its_fields_as_its_constructor_does():
    code = textwrap.dedent('''
        from dataclasses import dataclass, field
        from typing import ClassVar, NamedTuple


        @dataclass(frozen=True)
        class MarginRecord:
            sample_id: int
            target_logit: float
            history: list = field(default_factory=list)
            cached: int = field(default=0, init=False)
            KIND: ClassVar[str] = "margin"


        class Pair(NamedTuple):
            first: int
            second: float = 1.0


        class Plain:
            width: int = 3
    ''')
    found = {e.name: [(p.name, p.annotation, p.required) for p in e.params]
             for e in extract_module(code, repo="o/r", path="m.py")}
    assert found["MarginRecord"] == [("sample_id", "int", True), ("target_logit", "float", True),
                                     ("history", "list", False)]
    assert found["Pair"] == [("first", "int", True), ("second", "float", False)]
    assert found["Plain"] == []  # no decorator writes it a constructor


def test_arithmetic_of_numbers_and_a_librarys_object_of_literals_are_kept_defaults_and_other_calls_are_not() -> None:
    (fn,) = extract_module("def f(a=1 - 1e-05, b=-1 / 3, c=2 ** 8, d=load('x'), e=-1, "
                           "g=nn.CrossEntropyLoss(reduction='none'), h=torch.load('w.pt'), i=Net(), "
                           "j=nn.Linear(n, 2)):\n    pass\n", repo="o/r", path="m.py")
    spans = {p.name: p.default_span is not None for p in fn.params}
    # kept as written: arithmetic of numbers, a library's object built from literals; supplied by us: the rest
    assert spans == {"a": False, "b": False, "c": True, "d": True, "e": False, "g": False, "h": True, "i": True, "j": True}
