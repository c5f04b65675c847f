"""`paperproof verify PATH`: extraction, fixtures, the sandbox and the verdict rules on one checkout, as a build
runs them, without the site."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from paperproof.catalogue import licence
from paperproof.catalogue.budget import Budget, noted
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.observed import DriverRun, listed, observations
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import find_readme, git_head, readme_text
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import DEFAULT_PER_REPO, select
from paperproof.plumbing.files import write_atomic
from paperproof.runner import environment
from paperproof.verify import run_inputs
from paperproof.verify.observing import Observer


class NoSuchEntry(ValueError):
    """An `--entry` names no entry of the checkout."""


class Verified(BaseModel):
    """A checkout's samples, and how many of their runs the sandbox made and how many the cache answered (what
    tells a user, and a test, that an unchanged rerun started no sandbox process)."""

    model_config = ConfigDict(frozen=True)

    samples: list[Sample]
    drivers: list[DriverRun] = []  # the repository's own drivers, run or not, and what each called
    ran: int
    from_cache: int


def local_record(path: Path) -> RepoRecord:
    root = path.resolve()
    spdx, licence_file = licence.detect(root)
    return RepoRecord(url=root.as_uri(), repo=root.name, host="local", source="checkout", licence=spdx,
                      licence_file=licence_file, commit=git_head(root), snapshot=str(root), readme=find_readme(root))


def verify_path(path: Path, entries: list[str] | None = None, everything: bool = False,
                workers: int | None = None, per_repo: int = DEFAULT_PER_REPO,
                limits: dict | None = None, environments: Path | None = None, planted: bool = True) -> list[Sample]:
    """The samples of `verify_checkout`, run without a result cache."""
    return verify_checkout(path, entries, everything, workers, per_repo, limits, environments, planted).samples


def verify_checkout(path: Path, entries: list[str] | None = None, everything: bool = False,
                    workers: int | None = None, per_repo: int = DEFAULT_PER_REPO, limits: dict | None = None,
                    environments: Path | None = None, planted: bool = True, cache: Path | None = None,
                    observe: bool = True) -> Verified:
    """Samples for the most relevant entries of a checkout (or the named ones, or all);
    `limits` overrides sandbox limits (`runner.sandbox.Limits` fields); `environments` is where the
    checkout's missing imports are installed from wheels (None: nothing is installed); `cache` is where results
    are kept, by what decides them (`run_inputs`): each run under its `runs/` as a build keeps them, and the samples
    of the whole verify under `verified/`; None: every run is made in the sandbox and nothing is kept. `observe`:
    run the checkout's own drivers first (`runner.observe`), so that what they call returning one value per sample
    is selected, and each sample says which driver called it."""
    root = path.resolve()
    record = local_record(root)
    budget = Budget()  # the checkout's static analysis, as a build's: past it, what was read (and each sample says so)
    found = extract_repo(root, record.repo, budget).entries
    record = noted(record, budget)
    if entries:
        wanted = set(entries)
        matched = {name for e in found for name in (f"{e.path}::{e.qualname}", e.qualname) if name in wanted}
        if wanted - matched:
            known = sorted(f"{e.path}::{e.qualname}" for e in found)
            raise NoSuchEntry(f"--entry {', '.join(sorted(wanted - matched))}: no entry of {path} has that name; "
                              f"entries are PATH::NAME, e.g. {known[0] if known else 'pkg/module.py::function'} "
                              f"({len(known)} found)")
        found = [e for e in found if f"{e.path}::{e.qualname}" in wanted or e.qualname in wanted]
    readme = readme_text(record)
    limit = None if (everything or entries) else per_repo
    key, decided_by = "", ""
    env = environment.for_record(record, environments) if found else None  # installed once, reused by the stage
    if cache is not None:
        runner = run_inputs.runner_inputs()
        arguments = {"entries": sorted(entries or []), "everything": everything, "per_repo": per_repo,
                     "limits": limits, "planted": planted, "observe": observe,
                     "environment": env.path if env else None, "notes": env.describe() if env else []}
        key = run_inputs.verify_digest(root, runner, record.commit, arguments)
        kept = _kept(cache, key)
        if kept is not None:  # nothing that decides them changed: no sandbox, no judging
            return Verified(samples=kept.samples, drivers=kept.drivers, ran=0, from_cache=kept.ran + kept.from_cache)
        decided_by = run_inputs.run_digest(root, runner)
    drivers = []
    if observe and not entries:
        with Observer(environments, limits, cache, workers) as observer:
            drivers = observer.drivers(record, found, env)
    chosen = select(found, set(), readme, limit, observations(drivers))
    work = RepoWork(record.model_copy(update={"drivers": listed(drivers)}), tuple(chosen), analysed=budget.spent)
    # the stage imports torch and the metric core: seconds that a verify answered whole by its cache does without
    from paperproof.verify.stage import RunSettings, run_and_judge

    judged = run_and_judge({"local": work}, RunSettings(workers=workers, limits=limits, environments=environments,
                                                        planted=planted, cache=cache, decided_by=decided_by))
    verified = Verified(samples=list(judged.repos["local"].samples), drivers=drivers, ran=judged.executed,
                        from_cache=judged.cached)
    # never one the machine's load cut short (`cut_by_load`, a runner error), nor one the checkout changed under
    if cache is not None and judged.final and run_inputs.verify_digest(root, runner, record.commit, arguments) == key:
        write_atomic(_kept_path(cache, key), verified.model_dump_json())
    return verified


def _kept_path(cache: Path, key: str) -> Path:
    return cache / "verified" / key[:2] / f"{key}.json"


def _kept(cache: Path, key: str) -> Verified | None:
    """The samples a verify with these inputs gave before, or None (none kept, or not readable as samples)."""
    try:
        return Verified.model_validate_json(_kept_path(cache, key).read_bytes())
    except (OSError, ValueError):
        return None
