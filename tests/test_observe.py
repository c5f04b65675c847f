"""The repository's own drivers run in the sandbox: what they call is recorded, what returns one value per sample is
selected, and each sample says which driver called it; a failing or endless driver blames itself, never an entry.

The specimen is ours, in the style of a small label-noise library: a per-sample score whose name and body carry no
hardness vocabulary, a helper that only transforms, a class that records per-sample state, their tests and an
example script, one test that fails and one that never ends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from paperproof.build.pipeline import BuildConfig, build
from paperproof.catalogue.budget import Budget
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.observed import observations
from paperproof.catalogue.repo_url import safe_key
from paperproof.catalogue.repos import LocalRepos
from paperproof.runner.executor import Executor
from paperproof.runner.observe import observe
from paperproof.verify.checkout import verify_checkout
from paperproof.verify.observing import Observer
from tests.test_archive import LINK, PAPER, write_dump

SPECIMEN = {
    "tidylabels/__init__.py": "",
    "tidylabels/core.py": '''"""Small tools for tidy labels."""
import numpy as np


def normalise_rows(m):
    """Rows that sum to one."""
    m = np.asarray(m, dtype=float)
    return m / m.sum(axis=1, keepdims=True)


def self_agreement(p, y):
    """How far each row's mass on its given label lies behind the largest other mass."""
    p = normalise_rows(p)
    idx = np.arange(len(y))
    own = p[idx, y].copy()
    p[idx, y] = -np.inf
    return own - p.max(axis=1)


def flip_rate(before, after):
    """The share of labels that changed."""
    return float(np.mean(np.asarray(before) != np.asarray(after)))


class RunningTally:
    """Keeps, per row, how often the argmax agreed with the given label."""

    def __init__(self, n_rows):
        self.hits = np.zeros(n_rows)
        self.seen = 0

    def add(self, p, y):
        self.hits += np.asarray(p).argmax(axis=1) == np.asarray(y)
        self.seen += 1

    def result(self):
        return self.hits / max(self.seen, 1)
''',
    "tests/test_core.py": '''import numpy as np

from tidylabels.core import RunningTally, self_agreement


def test_agreement_has_one_value_per_row():
    rng = np.random.default_rng(0)
    p = rng.random((40, 3))
    y = rng.integers(0, 3, 40)
    assert self_agreement(p, y).shape == (40,)


def test_tally_over_rounds():
    rng = np.random.default_rng(1)
    tally = RunningTally(25)
    for _ in range(4):
        tally.add(rng.random((25, 5)), rng.integers(0, 5, 25))
    assert tally.result().shape == (25,)
''',
    "tests/test_broken.py": '''from tidylabels.core import flip_rate


def test_half_flipped():
    assert flip_rate([0, 1, 1, 0], [0, 1, 0, 0]) == 0.5
''',
    "tests/test_forever.py": '''import numpy as np

from tidylabels.core import self_agreement


def test_until_it_settles():
    while True:
        self_agreement(np.ones((4, 2)), np.zeros(4, dtype=int))
''',
}


@pytest.fixture(scope="module")
def specimen(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("observe") / "tidylabels"
    for name, text in SPECIMEN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def runs(specimen):
    entries = extract_repo(specimen, "tidylabels", Budget()).entries
    with Executor(workers=1) as executor:
        return observe(specimen, entries, executor, limits={"cpu_seconds": 8})


def test_each_driver_runs_in_the_sandbox_and_says_how_it_ended(runs):
    by_target = {r.driver.target: r for r in runs}
    assert by_target["tests/test_core.py::test_tally_over_rounds"].status == "ran"
    assert by_target["tests/test_core.py::test_tally_over_rounds"].ended == "passed"
    broken = by_target["tests/test_broken.py::test_half_flipped"]
    assert broken.status == "failed" and broken.ended == "pytest exit 1"
    assert [o.key for o in broken.observed] == ["tidylabels/core.py::flip_rate"]  # it called it, then failed
    forever = by_target["tests/test_forever.py::test_until_it_settles"]
    assert forever.status == "cut" and forever.cpu_seconds is not None and forever.cpu_seconds < 8
    assert any(o.key == "tidylabels/core.py::self_agreement" and o.count > 100 for o in forever.observed)
    assert len(runs) == 4 and all(r.status != "not_run" for r in runs)


def test_what_returns_one_value_per_row_is_a_score_and_a_transform_is_not(runs):
    seen = observations(runs)
    assert seen["tidylabels/core.py::self_agreement"].per_sample
    assert seen["tidylabels/core.py::RunningTally"].per_sample  # `result()` returns what `add` recorded
    assert seen["tidylabels/core.py::RunningTally"].returns == "numpy.ndarray float64 [25]"
    assert not seen["tidylabels/core.py::normalise_rows"].per_sample
    assert not seen["tidylabels/core.py::flip_rate"].per_sample and seen["tidylabels/core.py::flip_rate"].returns == "float"


def test_verify_selects_the_observed_scores_and_each_sample_names_its_driver(specimen, tmp_path):
    verified = verify_checkout(specimen, workers=1, planted=False, limits={"cpu_seconds": 8})
    chosen = {s.qualname: s for s in verified.samples}
    assert set(chosen) == {"self_agreement", "RunningTally"}  # helpers a driver saw transform or average: left out
    for sample in chosen.values():
        # `behaviour` where what it returned was then recognised as a metric of the reference core
        assert sample.link_basis in ("observed", "behaviour") and sample.why_chosen.startswith("observed: the repository's test")
        assert sample.observed is not None and sample.observed.caller_path.startswith("tests/test_")
        assert sample.observed.url == f"{specimen.as_uri()}/{sample.observed.caller_path}#L{sample.observed.line}"
    agreement = chosen["self_agreement"]  # its arguments: the roles the driver's call showed, the planted values
    assert {(a.param, a.source) for a in agreement.arguments} == {("p", "observed"), ("y", "observed")}
    assert "passed numpy.ndarray int64 [4] in [0, 0]: the labels" in next(a.why for a in agreement.arguments if a.param == "y")
    assert agreement.status == "ran"
    assert chosen["RunningTally"].observed.calls == 4
    assert chosen["RunningTally"].observed.replay == "python -m pytest 'tests/test_core.py::test_tally_over_rounds'"
    assert {d.status for d in verified.drivers} >= {"ran", "failed", "cut"}


def test_the_command_says_what_its_drivers_did(specimen, tmp_path):
    done = subprocess.run([sys.executable, "-m", "paperproof", "verify", str(specimen), "--no-install", "--no-cache",
                           "--json", "--limit", "cpu_seconds=8"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert "drivers (the repository's tests, examples and scripts): ran 2, failed 1, cut 1; 2 of 2 " \
           "sample(s) observed being called by them" in done.stderr, done.stderr
    records = json.loads(done.stdout)
    assert {r["qualname"]: r["observed"]["driver"] for r in records} == {
        "self_agreement": "tests/test_forever.py::test_until_it_settles",
        "RunningTally": "tests/test_core.py::test_tally_over_rounds"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A site built from an archive linking the specimen: its drivers run in the build, as verify runs them."""
    root = tmp_path_factory.mktemp("observed-site")
    for name, text in SPECIMEN.items():
        (root / "repos" / "lab+tidylabels" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "repos" / "lab+tidylabels" / name).write_text(text)
    write_dump(root / "archive", "papers-with-abstracts", [PAPER])
    write_dump(root / "archive", "links-between-papers-and-code",
               [{**LINK, "repo_url": "https://github.com/lab/tidylabels"}])
    summary = build(BuildConfig(archive=str(root / "archive"), repos=root / "repos", out=root / "site",
                                cache=root / "cache", workers=1, jobs=1, limits={"cpu_seconds": 8}))
    (root / "summary.txt").write_text("\n".join(summary.lines()))
    return root


def test_a_build_runs_the_drivers_and_the_repository_page_lists_them(built):
    twin = json.loads((built / "site" / "repo" / "lab+tidylabels.json").read_text())
    drivers = {d["target"]: d for d in twin["drivers"]}
    assert {d["status"] for d in twin["drivers"]} == {"ran", "failed", "cut"}
    tally = drivers["tests/test_core.py::test_tally_over_rounds"]
    assert tally["ended"] == "passed" and tally["url"] == "https://github.com/lab/tidylabels/blob/HEAD/tests/test_core.py#L13"
    called = {c["entry"]: c for c in tally["called"]}
    assert called["tidylabels/core.py::RunningTally"]["per_sample"] and called["tidylabels/core.py::RunningTally"]["calls"] == 4
    sample = json.loads((built / "site" / (called["tidylabels/core.py::RunningTally"]["url"].strip("/") + ".json"))
                        .read_text())
    assert sample["observed"]["driver"] == tally["target"]
    broken = drivers["tests/test_broken.py::test_half_flipped"]
    assert broken["status"] == "failed" and [c["entry"] for c in broken["called"]] == ["tidylabels/core.py::flip_rate"]
    assert broken["called"][0]["url"] is None  # a helper it called: no sample of it
    assert ("drivers (the repositories' own tests, examples, scripts and notebooks): cut 1, failed 1, ran 2; 2 "
            "sample(s) observed being called by them") in (built / "summary.txt").read_text()
    page = (built / "site" / "repo" / "lab+tidylabels" / "index.html").read_text()
    assert "Its own drivers" in page and "tests/test_forever.py::test_until_it_settles" in page


def test_a_rebuild_answers_the_drivers_from_the_cache_without_a_sandbox(built):
    entries = extract_repo(built / "repos" / "lab+tidylabels", "tidylabels", Budget()).entries
    record = LocalRepos(built / "repos").record_for(safe_key("https://github.com/lab/tidylabels"))
    with Observer(limits={"cpu_seconds": 8}, cache=built / "cache") as observer:
        runs = observer.drivers(record, entries)
        assert observer._executor is None  # every driver's run came from the cache
    twin = json.loads((built / "site" / "repo" / "lab+tidylabels.json").read_text())
    assert [r.driver.target for r in runs] == [d["target"] for d in twin["drivers"]]


def test_a_temporary_path_the_driver_made_is_not_part_of_its_record():
    from paperproof.catalogue.drivers import Driver
    from paperproof.runner.observe import parse

    driver = Driver(kind="test", target="tests/test_io.py::test_save", path="tests/test_io.py", line=3, cost=4)
    trace = {"ended": "pytest exit 1", "error": "ValueError: cannot save to /tmp/tmp3gvt5473/model.h5",
             "cpu_seconds": 1.0, "observed": []}
    answer = {"report": [json.dumps({"event": "case", "outcome": "returned", "trace": trace})]}
    run = parse(driver, answer, set())
    assert run.status == "failed" and run.error == "ValueError: cannot save to <a temporary path>/model.h5"
