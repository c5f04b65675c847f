"""`paperproof verify PATH`: extraction, fixtures, the sandbox and the verdict rules on one checkout, as a build
runs them, without the site."""

from __future__ import annotations

from pathlib import Path

from paperproof.catalogue import licence
from paperproof.catalogue.budget import Budget, noted
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import find_readme, git_head, readme_text
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import DEFAULT_PER_REPO, select
from paperproof.verify.stage import RunSettings, run_and_judge


class NoSuchEntry(ValueError):
    """An `--entry` names no entry of the checkout."""


def failures(samples: list[Sample]) -> dict[str, list[str]]:
    """What makes `verify` exit 1, by kind: contract violations, departures from a paper's definition, and
    attempts the sandbox blocked (network, writing outside its folder), each as `path::entry`."""
    found: dict[str, list[str]] = {"violations": [], "departures": [], "blocked": []}
    for s in samples:
        name = f"{s.path}::{s.entry}"
        if s.status == "ran_violates":
            found["violations"].append(name)
        for f in s.fidelity:
            if f.departures:
                found["departures"].append(f"{name} ({f.metric}: {'; '.join(f.departures)})")
        if any(c.outcome == "blocked" for c in s.cases):
            found["blocked"].append(name)
    return {kind: sorted(names) for kind, names in found.items()}


def local_record(path: Path) -> RepoRecord:
    root = path.resolve()
    spdx, licence_file = licence.detect(root)
    return RepoRecord(url=root.as_uri(), repo=root.name, host="local", source="checkout", licence=spdx,
                      licence_file=licence_file, commit=git_head(root), snapshot=str(root), readme=find_readme(root))


def verify_path(path: Path, entries: list[str] | None = None, everything: bool = False,
                workers: int | None = None, per_repo: int = DEFAULT_PER_REPO,
                limits: dict | None = None, environments: Path | None = None, planted: bool = True) -> list[Sample]:
    """Samples for the most relevant entries of a checkout (or the named ones, or all);
    `limits` overrides sandbox limits (`runner.sandbox.Limits` fields); `environments` is where the
    checkout's missing imports are installed from wheels (None: nothing is installed)."""
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
    chosen = select(found, set(), readme, None if (everything or entries) else per_repo)
    judged = run_and_judge({"local": RepoWork(record, tuple(chosen), analysed=budget.spent)},
                           RunSettings(workers=workers, limits=limits, environments=environments, planted=planted))
    return list(judged.repos["local"].samples)
