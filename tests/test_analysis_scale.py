"""Reading a repository with `ast` costs time near-linear in its size, whatever its shape, and a repository that
still spends its analysis budget is cut, says so on its page and twin, and leaves the next repository whole.

The scale test measures CPU time (`time.process_time`) at 10, 100 and 1,000 normal files' worth of each shape
(`tests/analysis_shapes.py`), side by side in one process, and compares the cost per file: linear code keeps it
(n log n lets it grow by a third a step), quadratic code multiplies it by 10 a step. The bound, 4 a step, leaves a
busy machine room on both sides. The code before this test failed every shape: the cost per file grew 5 to 13 times
from 10 to 100 (from 100 to 1,000 for the cycle of modules, which took 64 s at 1,000); the three others did not end
within 300 CPU seconds at 1,000. Now the four take 2.5 to 9.5 s there.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.build.pipeline import select_entries
from paperproof.build.renderer import Renderer, RepoJob
from paperproof.build.summary import BuildSummary
from paperproof.build.urls import SiteUrls
from paperproof.catalogue import budget as budget_module
from paperproof.catalogue.budget import CUT, Budget, cut_note, noted
from paperproof.catalogue.callsites import find_call_sites
from paperproof.catalogue.extract import _PARAM_HEAD, _RETURNS_HEAD, _rst_params, extract_module, extract_repo
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import readme_text
from paperproof.catalogue.select import _in_readme, select
from tests.analysis_shapes import SHAPES, class_chain, cpu_seconds, function_chain

STEP = 4.0  # how much the CPU time per normal file may grow from one size to the next, 10 times larger
RESEARCH = Path(__file__).parent / "research"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_analysis_grows_linearly_with_the_repository(shape: str, tmp_path: Path) -> None:
    per_file: dict[int, float] = {}
    for scale in (10, 100, 1000):
        root = tmp_path / str(scale)
        root.mkdir()
        SHAPES[shape](root, scale)
        per_file[scale] = cpu_seconds(root) / scale
        print(f"{shape}: {scale:5} normal files, {per_file[scale] * scale:8.3f} CPU s")
        if scale > 10:  # checked at once: quadratic code would take hours at the next size
            growth = per_file[scale] / per_file[scale // 10]
            assert growth <= STEP, f"{shape}: the CPU time per file grew {growth:.1f} times from {scale // 10} to {scale}"
        shutil.rmtree(root)


def _record(name: str, root: Path) -> RepoRecord:
    return RepoRecord(url=f"https://github.com/o/{name}", repo=f"o/{name}", host="github.com", source="checkout",
                      snapshot=str(root))


def test_a_repository_past_its_budget_is_cut_and_said_so_while_the_next_is_read_whole(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    hostile, honest = tmp_path / "hostile", tmp_path / "honest"
    hostile.mkdir()
    for k in range(16):  # 32,000 functions: seconds to read, against a budget of one
        (hostile / f"funcs{k:02}.py").write_text("".join(f"def f_{i}(x):f_{i + 1}(x)\n" for i in range(2000)))
    (hostile / "main.py").write_text("from funcs00 import f_0\n\nf_0(1)\n")
    shutil.copytree(RESEARCH, honest)  # read in a few hundredths of one
    monkeypatch.setattr(budget_module, "ANALYSIS_SECONDS", 1.0)
    repos = {"a": RepoWork(_record("hostile", hostile)), "b": RepoWork(_record("honest", honest))}
    summary = BuildSummary(out=str(tmp_path / "site"))
    chosen = select_entries(repos, {}, 8, summary)

    cut, whole = chosen["a"], chosen["b"]
    assert cut.record.note is not None and cut.record.note.startswith(CUT)
    assert re.search(r"passed 1 CPU seconds while reading funcs\d\d\.py", cut.record.note)  # where it stopped
    assert cut.selected and cut.analysed > 1.0  # what was read before is kept, and chosen from
    assert any(path == "main.py" and "budget was spent" in why for repo, path, why in summary.skipped_files
               if repo == "o/hostile")
    assert whole.record.note is None and whole.analysed < 1.0
    read = extract_repo(honest, "o/honest", Budget(seconds=3600))
    assert [s.entry.qualname for s in whole.selected] == \
        [s.entry.qualname for s in select(read.entries, set(), readme_text(whole.record), 8)]
    assert read.cut is None and not any("budget" in why for _, why in read.skipped)

    # The repository's page and its JSON twin carry the note; the honest one's carry none.
    site = tmp_path / "site"
    renderer = Renderer(SiteUrls(""), "2025-07-28T00:00:00+00:00", site, False)
    for work, shown in ((cut, True), (whole, False)):
        files = renderer.repository(RepoJob(work.record, (), [], {}, None, {}))
        page = next(site / f for f in files if f.endswith(".html"))
        twin = json.loads(next(site / f for f in files if f.endswith(".json")).read_text())
        assert (CUT in (twin["note"] or "")) is shown and (CUT in page.read_text()) is shown


def test_the_call_site_scan_stops_on_what_extraction_left_and_the_record_says_so(tmp_path: Path) -> None:
    class_chain(tmp_path, 10)
    entries = extract_repo(tmp_path, "o/r").entries
    whole = find_call_sites(tmp_path, entries, budget=Budget(seconds=3600))
    assert any(whole.values())
    spent = Budget(seconds=1.0, spent=1.5)  # extraction already used more than all of it
    skipped: list[tuple[str, str]] = []
    assert not any(find_call_sites(tmp_path, entries, skipped, budget=spent).values())
    assert spent.cut is not None and any("budget was spent" in why for _, why in skipped)
    record = noted(_record("r", tmp_path), spent)
    assert record.note is not None and record.note.startswith(CUT) and cut_note(record) == record.note
    assert noted(record, spent) == record  # noted once, whichever stage cut it


def test_closures_are_made_when_read_and_travel_made(tmp_path: Path) -> None:
    text = "import numpy as np\nEPS = 1e-9\n\n\ndef helper(x):\n    return np.log(x + EPS)\n\n\n" \
           "def score(p):\n    return helper(p)\n\n\ndef other():\n    return 1\n"
    score = next(e for e in extract_module(text, repo="o/r", path="m.py") if e.name == "score")
    assert score.closure_names == ["EPS", "helper", "np"] and score.closure_imports == ["numpy"]
    assert "def other" not in score.closure and score.closure.splitlines()[8] == "def score(p):"
    copied = pickle.loads(pickle.dumps(score))
    assert copied.closure == score.closure and copied.closure_names == score.closure_names and copied == score
    # 4,000 one-line functions each calling the next: extraction makes none of their closures, reading one does.
    function_chain(tmp_path, 200)
    entries = extract_repo(tmp_path, "o/r").entries
    assert not any(e.closure_source._made for e in entries if e.name != "f_0")
    first = next(e for e in entries if e.name == "f_0")
    assert len(first.closure_names) == 4000 and len(first.closure_modules) == 1
    assert first.closure_source._made is not None


OLD_PARAM = re.compile(r":param\s+(?:[\w\[\], .]+\s+)?(\w+):\s*(.+)")  # the pattern `_rst_params` replaces
OLD_HEAD = re.compile(r"^\s*\*{0,2}(\w+)\s*(\(([^)]*)\))?\s*:\s*(.*)$")
OLD_RETURNS = re.compile(r"^\s*(Returns?|Yields?)\s*:?\s*$", re.IGNORECASE)
PIECES = st.sampled_from([":param", ":", " ", "  ", "\n", "\t", "x", "ab", "[", "]", ",", ".", "_", "é", "\xa0", "(",
                          ")", "*", "Returns", "s", "-", "int"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(PIECES, max_size=14).map("".join))
def test_docstring_readers_read_what_the_backtracking_patterns_read(text: str) -> None:
    assert _rst_params(text) == [(m.group(1), m.group(2).strip()) for m in OLD_PARAM.finditer(text)]
    for line in text.splitlines() or [text]:
        old, new = OLD_HEAD.match(line), _PARAM_HEAD.match(line)
        assert (old and old.groups()) == (new and new.groups())
        assert bool(OLD_RETURNS.match(line)) == bool(_RETURNS_HEAD.match(line))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab_1 .é\u0301\n-", max_size=12), st.text(alphabet="ab_1é\u0301", min_size=1, max_size=4))
def test_a_readme_names_an_entry_as_the_word_boundary_search_says(readme: str, name: str) -> None:
    assert _in_readme(name, readme) == (re.search(rf"\b{re.escape(name)}\b", readme) is not None)


def test_docstrings_built_to_make_the_patterns_backtrack_are_read_in_linear_time() -> None:
    spaces = " " * 200_000
    doc = f":param{spaces}x\nReturns{spaces}y\nArgs:{spaces}\n    x{spaces}y\n" + "Args:\n" * 20_000
    start = time.process_time()
    extract_module(f'def f(x):\n    """{doc}"""\n', repo="o/r", path="m.py")
    assert time.process_time() - start < 10  # the patterns before took minutes on one of these lines
