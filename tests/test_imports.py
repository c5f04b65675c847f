"""Where a repository imports itself from: package roots, `src/` layouts and the sys.path its scripts set."""

from __future__ import annotations

import ast

import pytest

from paperproof.catalogue.imports import import_name, import_roots, package_root, script_sys_paths

FILES = {
    "src/trackers/__init__.py", "src/trackers/dynamics.py", "src/trackers/plugins/__init__.py",
    "src/trackers/plugins/margin.py", "lib/helpers.py", "scores.py", "scripts/run.py",
    "code/pkg/__init__.py", "code/pkg/core.py",
}


@pytest.mark.parametrize(("rel", "root", "name"), [
    ("src/trackers/dynamics.py", "src", "trackers.dynamics"),
    ("src/trackers/plugins/margin.py", "src", "trackers.plugins.margin"),
    ("src/trackers/__init__.py", "src", "trackers"),
    ("code/pkg/core.py", "code", "pkg.core"),
    ("scores.py", "", "scores"),
    ("lib/helpers.py", "lib", "helpers"),  # a folder that is no package: its modules import by their own name
])
def test_a_module_is_named_from_its_package_root(rel: str, root: str, name: str) -> None:
    assert package_root(rel, FILES) == root
    assert import_name(rel, FILES) == name


def test_roots_are_the_checkout_src_and_every_package_root_then_what_scripts_add() -> None:
    assert import_roots(FILES, ["scripts/vendor"]) == ["", "src", "code", "scripts/vendor"]


@pytest.mark.parametrize(("line", "rel", "expected"), [
    ("sys.path.append(os.path.join(os.path.dirname(__file__), '..'))", "scripts/run.py", [""]),
    ("sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), '../src')))", "scripts/run.py", ["src"]),
    ("sys.path.append(str(Path(__file__).resolve().parent.parent / 'lib'))", "scripts/run.py", ["lib"]),
    ("sys.path.append(str(Path(__file__).parents[1]))", "scripts/deep/run.py", ["scripts"]),
    ("sys.path.insert(0, 'src')", "train.py", ["src"]),
    ("sys.path.append('..')", "notebooks/run.py", [""]),  # from its own folder; from the root it would leave
    ("sys.path.append('/opt/elsewhere')", "run.py", []),
    ("sys.path.append(os.path.join(os.path.dirname(__file__), '..', '..', '..'))", "a/run.py", []),
    ("sys.path.append(some_function())", "run.py", []),
])
def test_the_sys_path_a_script_sets_is_read_without_running_it(line: str, rel: str, expected: list[str]) -> None:
    assert script_sys_paths(ast.parse(f"import os, sys\nfrom pathlib import Path\n{line}\n"), rel) == expected
