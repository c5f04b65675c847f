"""`paperproof verify PATH`: extraction, fixtures, the sandbox and the verdict rules on one checkout, as a build
runs them, without the site."""

from __future__ import annotations

from pathlib import Path

from paperproof.catalogue import licence
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import find_readme, git_head
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import DEFAULT_PER_REPO, select
from paperproof.verify.stage import RunSettings, run_and_judge


def local_record(path: Path) -> RepoRecord:
    root = path.resolve()
    spdx, licence_file = licence.detect(root)
    return RepoRecord(url=root.as_uri(), repo=root.name, host="local", source="checkout", licence=spdx,
                      licence_file=licence_file, commit=git_head(root), snapshot=str(root), readme=find_readme(root))


def verify_path(path: Path, entries: list[str] | None = None, everything: bool = False,
                workers: int | None = None, per_repo: int = DEFAULT_PER_REPO,
                limits: dict | None = None, environments: Path | None = None) -> list[Sample]:
    """Samples for the most relevant entries of a checkout (or the named ones, or all);
    `limits` overrides sandbox limits (`runner.sandbox.Limits` fields); `environments` is where the
    checkout's missing imports are installed from wheels (None: nothing is installed)."""
    root = path.resolve()
    record = local_record(root)
    found = extract_repo(root, record.repo).entries
    if entries:
        wanted = set(entries)
        found = [e for e in found if f"{e.path}::{e.qualname}" in wanted or e.qualname in wanted]
    readme = (root / record.readme).read_text(encoding="utf-8", errors="replace") if record.readme else ""
    chosen = select(found, set(), readme, None if (everything or entries) else per_repo)
    judged = run_and_judge({"local": RepoWork(record, tuple(chosen))}, RunSettings(workers=workers, limits=limits,
                                                                                 environments=environments))
    return list(judged.repos["local"].samples)
