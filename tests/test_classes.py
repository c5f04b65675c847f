"""The repository's own classes, followed through its imports with `ast`: the bases a class inherits its methods and
constructor from, and the class an annotation names. Nothing of the repository is imported or run."""

from __future__ import annotations

from pathlib import Path

from paperproof.catalogue.classes import RepoClasses
from paperproof.catalogue.extract import extract_repo


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


REPO = {
    "src/kit/__init__.py": "from .core.base import Method  # re-exported\n",
    "src/kit/core/__init__.py": "",
    "src/kit/core/base.py": (
        "from kit.core.holder import Holder\n\n"
        "class Root:\n"
        "    def __init__(self, net, epochs=3):\n        self.net = net\n\n"
        "    def describe(self):\n        return 'root'\n\n"
        "class Method(Root):\n"
        "    def fit(self, holder: Holder, cache=True):\n        return self\n\n"
        "    def scores(self):\n        return None\n"),
    "src/kit/core/holder.py": ("class Holder:\n    def __init__(self, X, y, batch_size=None):\n        self.X = X\n\n"
                               "def unit(raw):\n    return raw / raw.sum()\n"),
    "src/kit/methods/__init__.py": "",
    "src/kit/methods/margin.py": (
        "import numpy as np\n"
        "from ..core import base\n"
        "from kit import Method\n\n"
        "class Margin(base.Method):\n"
        "    def scores(self):\n        return np.zeros(3)\n\n"
        "class Loss(Method):\n"
        "    def __init__(self, net, loss_fn):\n        super().__init__(net)\n\n"
        "class Plain(np.ndarray):\n    pass\n"),
}


def _classes(tmp_path: Path) -> tuple[RepoClasses, dict]:
    root = _write(tmp_path, REPO)
    entries = {e.name: e for e in extract_repo(root, "o/kit").entries}
    return RepoClasses(root, entries["Margin"].sys_path, "o/kit"), entries


def test_a_name_is_followed_through_relative_absolute_and_re_exporting_imports(tmp_path: Path) -> None:
    classes, _ = _classes(tmp_path)
    found = classes.find("base.Method", "src/kit/methods/margin.py")  # `from ..core import base`
    assert found is not None and (found.entry.path, found.import_name) == ("src/kit/core/base.py", "kit.core.base")
    again = classes.find("Method", "src/kit/methods/margin.py")  # `from kit import Method`, re-exported there
    assert again is not None and again.entry.path == "src/kit/core/base.py"
    holder = classes.find("Holder", "src/kit/core/base.py")
    assert holder is not None and [p.name for p in holder.entry.params] == ["X", "y", "batch_size"]
    assert holder.where == "src/kit/core/holder.py:1"


def test_a_function_is_followed_through_the_same_imports_and_a_class_is_not_one(tmp_path: Path) -> None:
    classes, _ = _classes(tmp_path)
    found = classes.find("unit", "src/kit/core/base.py", kind="function")  # base.py imports only Holder from holder
    assert found is None
    root = _write(tmp_path, {"src/kit/methods/norm.py": "from kit.core.holder import unit as normalise\n"})
    found = RepoClasses(root, ["src"], "o/kit").find("normalise", "src/kit/methods/norm.py", kind="function")
    assert found is not None and found.entry.kind == "function" and found.where == "src/kit/core/holder.py:5"
    assert classes.find("Holder", "src/kit/core/base.py", kind="function") is None


def test_a_library_class_or_an_unknown_name_is_not_the_repositorys(tmp_path: Path) -> None:
    classes, _ = _classes(tmp_path)
    assert classes.find("np.ndarray", "src/kit/methods/margin.py") is None
    assert classes.find("Nowhere", "src/kit/methods/margin.py") is None
    assert classes.find("Holder", "src/kit/missing.py") is None


def test_methods_and_a_constructor_are_inherited_from_the_repositorys_bases(tmp_path: Path) -> None:
    classes, entries = _classes(tmp_path)
    margin = classes.with_bases(entries["Margin"])
    assert margin.entry.methods == ["scores", "fit", "describe"]  # its own first, then nearest base first
    assert margin.origins["fit"].startswith("Method (src/kit/core/base.py:")
    assert [p.name for p in margin.entry.params] == ["net", "epochs"]  # no __init__ of its own: Root's
    assert margin.origins["__init__"].startswith("Root (")
    assert [p.name for p in margin.entry.method_params["fit"]] == ["holder", "cache"]
    assert margin.files == ("src/kit/core/base.py", "src/kit/core/base.py")  # Method's file, then Root's
    loss = classes.with_bases(entries["Loss"])
    assert [p.name for p in loss.entry.params] == ["net", "loss_fn"] and "__init__" not in loss.origins
    plain = classes.with_bases(entries["Plain"])  # a library base: nothing to merge
    assert plain.entry == entries["Plain"] and plain.origins == {}


def test_a_file_that_does_not_parse_resolves_nothing_and_breaks_nothing(tmp_path: Path) -> None:
    root = _write(tmp_path, {**REPO, "src/kit/core/holder.py": "class Holder(:\n"})
    entries = {e.name: e for e in extract_repo(root, "o/kit").entries}
    classes = RepoClasses(root, entries["Margin"].sys_path, "o/kit")
    assert classes.find("Holder", "src/kit/core/base.py") is None
    assert classes.with_bases(entries["Margin"]).entry.methods == ["scores", "fit", "describe"]
