"""`paperproof verify PATH`: the build's extraction, fixtures, sandbox and rules on one checkout."""

from __future__ import annotations

from pathlib import Path

from paperproof.build.pipeline import BuildConfig, RepoWork, run_and_judge
from paperproof.build.progress import BuildSummary
from paperproof.catalogue import licence
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repos import find_readme, git_head
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import DEFAULT_PER_REPO, select


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
    record = local_record(path)
    root = Path(record.snapshot)
    found = extract_repo(root, record.repo).entries
    if entries:
        wanted = set(entries)
        found = [e for e in found if f"{e.path}::{e.qualname}" in wanted or e.qualname in wanted]
    readme = (root / record.readme).read_text(encoding="utf-8", errors="replace") if record.readme else ""
    work = RepoWork(record, select(found, set(), readme, len(found) if (everything or entries) else per_repo))
    run_and_judge({"local": work}, BuildConfig(workers=workers, cache=None, limits=limits, environments=environments), BuildSummary())
    return work.samples
