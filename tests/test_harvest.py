"""The harvest stage against a real HTTP server on loopback that plays GitHub (tests/github_server.py).

No transport is mocked: requests go through httpx to a `ThreadingHTTPServer` on 127.0.0.1, which
logs every request so the tests can count what was asked, answered, and downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from paperproof.build.pipeline import BuildConfig, build
from paperproof.catalogue import licence
from paperproof.catalogue.archive import bundled_root
from paperproof.catalogue.community import Community, CommunityRepo
from paperproof.catalogue.harvest import HarvestConfig, harvest
from paperproof.catalogue.repo_url import normalise_repo_url
from paperproof.catalogue.store import Store, StoreRepos
from paperproof.plumbing.locks import Busy
from tests.github_server import FakeRepo, GitHubServer, files_of
from tests.tar_corpus import SMALL, benign, corpus

SPECIMEN_LICENCES = {"dynamics-maps": "MIT", "dynamics-maps-fork": "MIT", "legacy-tf-maps": "Apache-2.0",
                     "perturb-kit": "Apache-2.0", "stats-plots": None, "hardness-bench": "Apache-2.0"}
SPECIMEN_PAPER = "specimen-mapping-sample-hardness-with-training"


def add_specimens(server: GitHubServer) -> None:
    for name, spdx in SPECIMEN_LICENCES.items():
        files = files_of(bundled_root() / "repos" / f"paperproof-specimens+{name}")
        server.add(FakeRepo(f"paperproof-specimens/{name}", files, spdx=spdx))


@pytest.fixture
def server():
    with GitHubServer() as running:
        add_specimens(running)
        yield running


def links_archive(tmp_path: Path, *urls: str) -> str:
    """An archive directory with one paper's code links (the harvest reads only links)."""
    folder = tmp_path / "archive"
    folder.mkdir(exist_ok=True)
    rows = [{"paper_url": "https://paperswithcode.com/paper/a-paper", "paper_title": "A paper", "repo_url": url,
             "is_official": True, "mentioned_in_paper": True, "mentioned_in_github": False, "framework": "none"}
            for url in urls]
    (folder / "links-between-papers-and-code.json").write_text(json.dumps(rows))
    return str(folder)


def config(server: GitHubServer, store: Path, archive: str | None = None, **overrides) -> HarvestConfig:
    settings = dict(archive=archive, store=store, api_url=server.url, backoff=0.01, timeout=5.0,
                    community=Community() if archive else None)
    settings.update(overrides)
    return HarvestConfig(**settings)


def record(store: Path, url: str):
    return Store(store).read_record(normalise_repo_url(url))


def specimen(name: str) -> str:
    return f"https://github.com/paperproof-specimens/{name}"


def asked_about(hits, repo: str) -> list:
    """The requests about one repository (`owner/name`), not about others whose names start alike."""
    base = f"/repos/{repo}".lower()
    return [h for h in hits if h.path.lower() == base or h.path.lower().startswith(base + "/")]


def store_files(store: Path) -> dict[str, tuple[int, str]]:
    """Every file of the store (but the run bookkeeping) with its mtime and content hash."""
    out = {}
    for path in sorted(store.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name not in ("state.json", ".lock"):
            out[str(path.relative_to(store))] = (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


# --- the done-when checks ---------------------------------------------------------------------


def _comparable(twin: object) -> object:
    """A paper twin without what only a harvest can know: `reach` (local checkouts are not probed) and the
    pinned commit in `file_url`s (a checkout without `.git` links to HEAD). Everything else must match."""
    if isinstance(twin, dict):
        return {k: (None if k == "reach" else _comparable(v)) for k, v in twin.items()}
    if isinstance(twin, list):
        return [_comparable(v) for v in twin]
    if isinstance(twin, str):
        return re.sub(r"/blob/[0-9a-f]{40}/", "/blob/HEAD/", twin)
    return twin


def test_harvested_snapshot_builds_the_same_twins_as_local_checkouts(server: GitHubServer, tmp_path: Path) -> None:
    store = tmp_path / "store"
    summary = harvest(config(server, store, concurrency=4))
    assert summary.complete and summary.downloaded == len(SPECIMEN_LICENCES)
    local = tmp_path / "local"
    harvested = tmp_path / "harvested"
    build(BuildConfig(out=local, cache=tmp_path / "cache-local", workers=2))
    build(BuildConfig(out=harvested, cache=tmp_path / "cache-harvested", workers=2, store=store))

    papers = sorted(p.name for p in (local / "paper").glob("*.json"))
    assert papers == sorted(p.name for p in (harvested / "paper").glob("*.json")) and len(papers) == 4
    for name in papers:
        mine = json.loads((local / "paper" / name).read_text())
        theirs = json.loads((harvested / "paper" / name).read_text())
        assert _comparable(mine) == _comparable(theirs), name

    # What the harvest adds: reach answered by the host, and file links pinned at the served commit.
    twin = json.loads((harvested / "paper" / f"{SPECIMEN_PAPER}.json").read_text())
    reach = {link["repo_url"]: link["reach"] for link in twin["code_links"]}
    assert reach[specimen("dynamics-maps")] == {"status": "ok", "spdx": "MIT"}
    assert reach[specimen("legacy-tf-maps")] == {"status": "ok", "spdx": "Apache-2.0"}
    commit = server.repos["paperproof-specimens/dynamics-maps"].sha
    assert any(f"/blob/{commit}/" in s["file_url"] for s in twin["verification"]["samples"])
    real = json.loads((harvested / "paper" / "dataset-cartography-mapping-and-diagnosing.json").read_text())
    assert {link["reach"]["status"] for link in real["code_links"]} == {"not_found"}  # the loopback has none of them

    # Every sample has the same status, whichever source it came from.
    statuses = {p.name: json.loads(p.read_text())["status"] for p in (local / "sample").glob("*.json")}
    assert statuses and statuses == {p.name: json.loads(p.read_text())["status"]
                                     for p in (harvested / "sample").glob("*.json")}
    page = json.loads((harvested / "repo" / "paperproof-specimens+stats-plots.json").read_text())
    assert page["source"] == "harvest" and page["licence"] == "NONE" and page["reach"] == {"status": "ok"}
    assert page["commit"] == server.repos["paperproof-specimens/stats-plots"].sha
    assert str(store) not in (harvested / "repo" / "paperproof-specimens+stats-plots.json").read_text()


def test_second_harvest_of_unchanged_repositories_gets_only_304s_and_writes_nothing(server: GitHubServer,
                                                                                   tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = harvest(config(server, store))
    assert first.complete and first.downloaded == len(SPECIMEN_LICENCES) and first.written == 14
    before = store_files(store)
    server.reset_log()

    second = harvest(config(server, store))
    hits = server.requests()
    assert second.complete and second.downloaded == 0 and second.written == 0 and second.unchanged == first.written
    assert not server.requests("/codeload"), "no tarball downloaded again"
    for hit in hits:
        if hit.path.startswith("/repos/paperproof-specimens/"):
            assert hit.status == 304 and hit.conditional, hit
        else:  # repositories the loopback does not have: 404 carries no ETag, GitHub's neither
            assert hit.status == 404, hit
    assert {h.status for h in hits} == {304, 404}
    assert store_files(store) == before, "nothing in the store was rewritten"


def test_killed_harvest_resumes_without_losing_or_fetching_anything_twice(server: GitHubServer, tmp_path: Path) -> None:
    store = tmp_path / "store"
    slow = "/repos/paperproof-specimens/stats-plots"
    server.slow[slow] = 30.0
    server.slow_once.add(slow)
    command = [sys.executable, "-m", "paperproof", "harvest", "--store", str(store), "--api-url", server.url,
               "--concurrency", "1", "--timeout", "60"]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert server.slow_entered.wait(60), "the harvest never reached the slow repository"
        time.sleep(0.5)  # let the main thread journal the repository before it
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    settled_first = [line for line in (store / "journal.txt").read_text().splitlines() if line]
    assert len(settled_first) >= 5 and Store(store).read_state().status == "running"
    first_hits = server.requests()
    server.reset_log()

    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"({len(settled_first)} already settled by the interrupted run)" in second.stdout
    second_hits = server.requests()

    assert Store(store).read_state().status == "complete" and not (store / "journal.txt").exists()
    assert len(list((store / "records").rglob("*.json"))) == 14, "every repository is recorded"
    for key in settled_first:
        asked = asked_about(second_hits, key.split("/", 1)[1])
        assert not asked, f"{key} was settled before the kill and asked again: {asked}"
    tarballs = [h.path for h in first_hits + second_hits if h.path.startswith("/codeload/")]
    assert len(tarballs) == len(set(tarballs)) == len(SPECIMEN_LICENCES), "each tarball downloaded exactly once"
    repeated = {h.path for h in first_hits} & {h.path for h in second_hits}
    assert repeated <= {slow}, f"only the request the kill cut short is asked again: {repeated}"
    assert record(store, specimen("stats-plots")).reach.status == "ok"


def test_every_hostile_tarball_is_refused_with_its_reason_and_nothing_escapes(tmp_path: Path) -> None:
    escape = tmp_path / "escape"
    cases = corpus(escape)
    work = tmp_path / "work"
    work.mkdir()
    store = work / "store"
    with GitHubServer() as server:
        for name, (data, _) in cases.items():
            server.add(FakeRepo(f"evil/{name.replace('_', '-')}", tarball=data, spdx="MIT"))
        server.add(FakeRepo("fine/benign", tarball=benign(), spdx="MIT"))
        urls = [f"https://github.com/evil/{name.replace('_', '-')}" for name in cases] + ["https://github.com/fine/benign"]
        archive = links_archive(tmp_path, *urls)
        outside_before = {p for p in tmp_path.rglob("*") if store not in p.parents and p != store}
        summary = harvest(config(server, store, archive, limits=SMALL))
        assert summary.complete

        for name, (_, reason) in cases.items():
            got = record(store, f"https://github.com/evil/{name.replace('_', '-')}")
            assert got.reach.status == "ok" and got.snapshot is None and got.source == "none", name
            assert got.refused and reason in got.refused, (name, got.refused)
            assert reason in (got.note or ""), "the page's note says why too"
        assert len(summary.refused) == len(cases)
        fine = record(store, "https://github.com/fine/benign")
        assert fine.source == "harvest" and fine.refused is None and fine.readme == "README.md"

        assert not escape.exists() and not Path(str(escape / "absolute")).exists()
        outside_after = {p for p in tmp_path.rglob("*") if store not in p.parents and p != store}
        assert outside_after == outside_before, "nothing written outside the store"
        assert len(list((store / "trees").iterdir())) == 1, "only the benign tarball was unpacked"
        for tree in (store / "trees").rglob("*"):
            if tree.is_symlink():
                assert tree.resolve().is_relative_to((store / "trees").resolve())

        server.reset_log()
        again = harvest(config(server, store, archive, limits=SMALL))
        assert again.written == 0 and not server.requests("/codeload"), "a refused tarball is not fetched again"


# --- reach and licences -----------------------------------------------------------------------


def test_reach_statuses_are_what_the_host_answered(server: GitHubServer, tmp_path: Path) -> None:
    stats = server.repos["paperproof-specimens/stats-plots"].files
    server.add(FakeRepo("new-owner/new-name", stats, spdx="MIT", renamed_from=("old-owner/old-name",)))
    server.add(FakeRepo("dmca/repo", stats, status=451))
    server.add(FakeRepo("blocked/repo", stats, status=403))
    server.add(FakeRepo("secret/repo", stats, private=True))
    server.add(FakeRepo("empty/repo", {}, empty=True, spdx="MIT"))
    archive = links_archive(
        tmp_path, specimen("dynamics-maps"), specimen("dynamics-maps") + "/tree/main/dynamics_maps",
        "https://github.com/Old-Owner/old-name.git", "https://github.com/gone/repo", "https://github.com/dmca/repo",
        "https://github.com/blocked/repo", "https://github.com/secret/repo", "https://github.com/empty/repo",
        "https://gitlab.com/group/project",
    )
    store = tmp_path / "store"
    summary = harvest(config(server, store, archive))
    assert summary.complete and summary.repositories == 8

    ok = record(store, specimen("dynamics-maps"))
    assert ok.reach.status == "ok" and ok.source == "harvest" and ok.commit == server.repos["paperproof-specimens/dynamics-maps"].sha
    assert len(server.requests("/repos/paperproof-specimens/dynamics-maps/license")) == 1, "one key, asked once"
    moved = record(store, "https://github.com/old-owner/old-name")
    assert moved.reach.status == "moved" and moved.moved_to == "https://github.com/new-owner/new-name"
    assert moved.source == "harvest" and moved.commit == server.repos["new-owner/new-name"].sha
    assert "moved to https://github.com/new-owner/new-name" in moved.note
    assert record(store, "https://github.com/gone/repo").reach.status == "not_found"
    assert record(store, "https://github.com/dmca/repo").reach.status == "unavailable"
    assert record(store, "https://github.com/blocked/repo").reach.status == "unavailable"
    private = record(store, "https://github.com/secret/repo")
    assert private.reach.status == "private" and private.snapshot is None
    empty = record(store, "https://github.com/empty/repo")
    assert empty.reach.status == "ok" and empty.snapshot is None and "empty repository" in empty.note
    other = record(store, "https://gitlab.com/group/project")
    assert other.reach is None and other.source == "none" and "not GitHub" in other.note
    assert not server.requests("/repos/secret/repo/"), "a private repository is not harvested"

    server.reset_log()
    again = harvest(config(server, store, archive))
    assert again.written == 0
    renamed = [h.status for h in server.requests() if "old-name" in h.path or "/repositories/" in h.path]
    assert renamed == [301, 304], "a rename is followed, and the new name's answer is conditional"


def test_licence_answers_stay_distinct(server: GitHubServer, tmp_path: Path) -> None:
    files = server.repos["paperproof-specimens/dynamics-maps"].files
    server.add(FakeRepo("lic/mit", files, spdx="MIT"))
    server.add(FakeRepo("lic/other", files, spdx="NOASSERTION"))
    server.add(FakeRepo("lic/none", {k: v for k, v in files.items() if k != "LICENSE"}, spdx=None))
    server.add(FakeRepo("lic/broken", files, spdx="MIT"))
    server.fail["/repos/lic/broken/license"] = -1
    store = tmp_path / "store"
    names = ("mit", "other", "none", "broken")
    harvest(config(server, store, links_archive(tmp_path, *(f"https://github.com/lic/{n}" for n in names))))
    got = {n: record(store, f"https://github.com/lic/{n}") for n in names}
    assert (got["mit"].licence, got["mit"].reach.spdx) == ("MIT", "MIT")
    assert (got["other"].licence, got["other"].reach.spdx) == ("NOASSERTION", "NOASSERTION")
    assert got["none"].licence == "NONE" and "spdx" not in got["none"].reach.model_dump()
    assert got["broken"].licence == "MIT" and "licence read from the snapshot" in got["broken"].note
    assert [licence.inline_ok(got[n].licence) for n in names] == [True, False, False, True]


# --- good citizenship -------------------------------------------------------------------------


def test_rate_limit_near_its_reset_is_waited_for(server: GitHubServer, tmp_path: Path) -> None:
    server.limited_from = 2
    server.limited_until = time.time() + 1.0
    started = time.monotonic()
    summary = harvest(config(server, tmp_path / "store", links_archive(tmp_path, *map(specimen, SPECIMEN_LICENCES)),
                             max_wait=10))
    assert summary.complete and summary.reach["ok"] == len(SPECIMEN_LICENCES)
    assert any(h.status == 403 for h in server.requests()), "the server did refuse"
    assert time.monotonic() - started >= 1.0, "the harvest waited for the reset"


def test_rate_limit_far_from_its_reset_stops_with_resumable_state(server: GitHubServer, tmp_path: Path) -> None:
    store = tmp_path / "store"
    archive = links_archive(tmp_path, *map(specimen, SPECIMEN_LICENCES))
    server.limited_from = 4
    server.limited_until = time.time() + 1.5
    stopped = harvest(config(server, store, archive, max_wait=0.2, concurrency=1))
    assert not stopped.complete and stopped.resume_after and "rate limit" in stopped.stopped
    state = Store(store).read_state()
    assert state.status == "stopped" and state.resume_after == stopped.resume_after
    statuses = {r.reach.status for r in (Store(store).read_record(normalise_repo_url(specimen(n)))
                                         for n in SPECIMEN_LICENCES) if r is not None}
    assert "rate_limited" in statuses and "not_found" not in statuses, "no answer is never recorded as nothing there"
    settled = set(Store(store).settled())
    assert settled and len(settled) < 5

    asked = len(server.requests())
    early = harvest(config(server, store, archive, max_wait=0.2))
    assert not early.complete and len(server.requests()) == asked, "before resume_after nothing is asked"
    assert "nothing was asked" in early.stopped

    time.sleep(max(0.0, datetime.fromisoformat(state.resume_after).timestamp() - time.time()) + 0.1)
    server.reset_log()
    resumed = harvest(config(server, store, archive, max_wait=0.2))
    assert resumed.complete and resumed.already_settled == len(settled)
    assert all(Store(store).read_record(normalise_repo_url(specimen(n))).reach.status == "ok" for n in SPECIMEN_LICENCES)
    for key in settled:
        assert not asked_about(server.requests(), key.split("/", 1)[1]), key


def test_the_command_says_when_to_resume_and_exits_75(server: GitHubServer, tmp_path: Path) -> None:
    server.limited_from = 0
    server.limited_until = time.time() + 3600
    done = subprocess.run([sys.executable, "-m", "paperproof", "harvest", "--store", str(tmp_path / "store"),
                           "--api-url", server.url, "--max-wait", "1", "--archive",
                           links_archive(tmp_path, specimen("dynamics-maps"))],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 75, done.stdout + done.stderr
    assert "stopped: HTTP 403 rate limit" in done.stdout and "resume after " in done.stdout
    assert record(tmp_path / "store", specimen("dynamics-maps")).reach.status == "rate_limited"


def test_retry_after_is_honoured(server: GitHubServer, tmp_path: Path) -> None:
    server.retry_after_once["/repos/paperproof-specimens/dynamics-maps"] = (429, 1)
    server.retry_after_once["/repos/paperproof-specimens/perturb-kit/license"] = (403, 1)
    started = time.monotonic()
    summary = harvest(config(server, tmp_path / "store", links_archive(tmp_path, *map(specimen, SPECIMEN_LICENCES))))
    assert summary.complete and summary.reach["ok"] == len(SPECIMEN_LICENCES)
    assert {h.status for h in server.requests()} >= {429, 403}
    assert time.monotonic() - started >= 1.0


def test_server_errors_timeouts_and_truncated_bodies_are_retried(server: GitHubServer, tmp_path: Path) -> None:
    repo = server.repos["paperproof-specimens/dynamics-maps"]
    server.fail["/repos/paperproof-specimens/dynamics-maps"] = 2
    server.truncate["/repos/paperproof-specimens/dynamics-maps/license"] = 1
    server.truncate[f"/codeload/paperproof-specimens/dynamics-maps/legacy.tar.gz/{repo.sha}"] = 1
    server.slow["/repos/paperproof-specimens/perturb-kit"] = 0.6
    server.slow_once.add("/repos/paperproof-specimens/perturb-kit")
    store = tmp_path / "store"
    summary = harvest(config(server, store, links_archive(tmp_path, specimen("dynamics-maps"), specimen("perturb-kit")),
                             timeout=0.3, retries=3))
    assert summary.complete and summary.reach["ok"] == 2, summary.lines()
    assert [h.status for h in server.requests("/repos/paperproof-specimens/dynamics-maps")][:3] == [502, 502, 200]
    assert record(store, specimen("dynamics-maps")).licence == "MIT"


def test_no_answer_is_an_error_never_not_found(server: GitHubServer, tmp_path: Path) -> None:
    server.fail["/repos/paperproof-specimens/dynamics-maps"] = -1
    server.slow["/repos/paperproof-specimens/perturb-kit"] = 1.0
    store = tmp_path / "store"
    summary = harvest(config(server, store, links_archive(tmp_path, specimen("dynamics-maps"), specimen("perturb-kit")),
                             timeout=0.2, retries=1))
    failing = record(store, specimen("dynamics-maps"))
    slow = record(store, specimen("perturb-kit"))
    assert failing.reach.status == "error" and "HTTP 502 after 2 tries" in failing.note
    assert slow.reach.status == "error" and "timed out after 2 tries" in slow.note
    assert summary.reach["error"] == 2 and not summary.reach["not_found"]
    assert not failing.has_source and not slow.has_source


def test_a_failed_refresh_never_deletes_the_last_good_snapshot(server: GitHubServer, tmp_path: Path) -> None:
    store = tmp_path / "store"
    archive = links_archive(tmp_path, specimen("dynamics-maps"))
    harvest(config(server, store, archive))
    good = record(store, specimen("dynamics-maps"))
    assert good.source == "harvest"

    repo = server.repos["paperproof-specimens/dynamics-maps"]
    repo.files = {**repo.files, "NEWS.md": b"a new commit\n"}
    server.truncate[f"/codeload/paperproof-specimens/dynamics-maps/legacy.tar.gz/{repo.sha}"] = -1
    harvest(config(server, store, archive, retries=1))
    after_failure = record(store, specimen("dynamics-maps"))
    assert after_failure.snapshot == good.snapshot and after_failure.commit == good.commit
    assert after_failure.reach == good.reach and "after 2 tries" in after_failure.refresh_failed
    assert (store / good.snapshot).is_dir()

    hostile, reason = corpus(tmp_path / "escape")["symlink_to_etc"]
    repo.tarball = hostile
    harvest(config(server, store, archive))
    after_refusal = record(store, specimen("dynamics-maps"))
    assert after_refusal.snapshot == good.snapshot and after_refusal.commit == good.commit
    assert reason in after_refusal.refused and f"keeping the snapshot of commit {good.commit}" in after_refusal.note
    assert after_refusal.refresh_failed is None
    server.reset_log()
    again = harvest(config(server, store, archive))
    assert again.written == 0 and not server.requests("/codeload"), "the refused commit is not fetched again"
    built = StoreRepos(store).record_for(normalise_repo_url(specimen("dynamics-maps")))
    assert built.has_source and Path(built.snapshot).is_dir()


def test_token_goes_to_the_api_and_not_along_a_redirect_to_another_host(tmp_path: Path) -> None:
    with GitHubServer() as codeload, GitHubServer(codeload=codeload) as api:
        add_specimens(api)
        summary = harvest(config(api, tmp_path / "store", links_archive(tmp_path, specimen("dynamics-maps")),
                                 token="ghp_loopback"))
        assert summary.complete and summary.downloaded == 1
        assert api.requests() and all(h.authorised for h in api.requests())
        assert codeload.requests() and not any(h.authorised for h in codeload.requests())


def test_one_harvest_per_store(server: GitHubServer, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    with store.lock():
        with pytest.raises(Busy):
            harvest(config(server, store.root, links_archive(tmp_path, specimen("dynamics-maps"))))


def test_store_repos_answers_every_key(server: GitHubServer, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        StoreRepos(tmp_path / "nothing")
    store = tmp_path / "store"
    harvest(config(server, store, links_archive(tmp_path, specimen("perturb-kit"))))
    repos = StoreRepos(store)
    got = repos.record_for(normalise_repo_url(specimen("perturb-kit") + "/tree/main/perturb"))
    assert got.has_source and Path(got.snapshot).is_absolute() and (Path(got.snapshot) / "README.md").is_file()
    missing = repos.record_for(normalise_repo_url("https://github.com/never/asked"))
    assert missing.source == "none" and missing.reach is None and "not harvested" in missing.note


# --- community repositories -------------------------------------------------------------------


SKILL = b"""# Hardness skill

Scores how hard each sample is from its training dynamics: the margin between the gold label's
probability and the largest other one.
"""
CODE = b'''def margin(probs: list[float], label: int) -> float:
    """The gold-label probability minus the largest other probability (area under the margin)."""
    others = [p for i, p in enumerate(probs) if i != label]
    return probs[label] - max(others)
'''


def test_community_repositories_get_pages_and_their_papers_samples(server: GitHubServer, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    server.add(FakeRepo("curator/hardness-skill", {"SKILL.md": SKILL, "hardness.py": CODE, "LICENSE": b"MIT"},
                        spdx="MIT"))
    community = Community([
        CommunityRepo(url="https://github.com/curator/hardness-skill", name="hardness-skill",
                      purpose="Scores sample hardness from training dynamics.", papers=(SPECIMEN_PAPER,)),
        CommunityRepo(url="https://github.com/curator/topic-only", name="topic-only",
                      purpose="A repository without a paper.", topic="data-centric AI"),
    ])
    import paperproof.build.pipeline as pipeline
    import paperproof.catalogue.community as community_module

    monkeypatch.setattr(community_module, "curated", lambda: community)
    monkeypatch.setattr(pipeline, "curated", lambda: community)
    archive = tmp_path / "archive"
    archive.mkdir()
    papers = json.loads((bundled_root() / "specimens" / "papers-with-abstracts.json").read_text())
    (archive / "papers-with-abstracts.json").write_text(json.dumps([p for p in papers if p["paper_url"].endswith(SPECIMEN_PAPER)]))
    (archive / "links-between-papers-and-code.json").write_text("[]")
    store = tmp_path / "store"
    summary = harvest(config(server, store, str(archive), community=community))
    assert summary.repositories == 2 and summary.reach == {"ok": 1, "not_found": 1}

    site = tmp_path / "site"
    build(BuildConfig(archive=str(archive), out=site, cache=tmp_path / "cache", workers=2, store=store))
    twin = json.loads((site / "paper" / f"{SPECIMEN_PAPER}.json").read_text())
    assert twin["code_links"] == [], "a community repository is not an archive code link"
    samples = twin["verification"]["samples"]
    assert samples and {s["repo_kind"] for s in samples} == {"community"}
    assert {s["repo"] for s in samples} == {"curator/hardness-skill"}
    assert twin["verification"]["by_repo_kind"]["community"]["repositories"] == 1
    assert [r["provenance"] for r in twin["verification"]["repos"]] == ["community:paperproof_curated"]

    page = json.loads((site / "repo" / "curator+hardness-skill.json").read_text())
    assert page["readme"] == "SKILL.md" and page["papers"][0]["repo_kind"] == "community"
    assert "Scores how hard each sample is" in (site / "repo" / "curator+hardness-skill" / "index.html").read_text()
    alone = json.loads((site / "repo" / "curator+topic-only.json").read_text())
    assert alone["papers"] == [] and alone["source"] == "none" and "data-centric AI" in alone["note"]
    assert alone["reach"] == {"status": "not_found"}


def test_the_curated_list_carries_the_dataset_audit_skill() -> None:
    from paperproof.catalogue.community import curated

    entries = {entry.key.key: entry for entry in curated()}
    skill = entries["github.com/swaggylei/dataset-difficulty-skill"]
    assert skill.topic == "data-centric AI" and skill.purpose.startswith("Analyze image classification datasets")


def test_a_torn_journal_line_is_not_taken_as_settled(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.root.mkdir()
    store.settle(normalise_repo_url("https://github.com/a/one"))
    with store.journal_path.open("a") as handle:
        handle.write("github.com/a/tw")  # killed mid-write
    assert store.settled() == {"github.com/a/one"}
