"""`paperproof harvest --from-checkouts DIR --results-only`: the shipped records, made again from checkouts.

The repositories are those the archive's code links (and the curated community list) name that have a
checkout under DIR (`owner+name/`, with a `.git` naming its commit). Each goes through the build's own
stages, extraction, selection, fixtures, the sandbox and the verdict, and what came out is written as one
`ShippedRepo` per repository: the record and samples without any of the repository's text, local paths
replaced by placeholders, deterministic JSON. Same checkouts, same code: byte-identical files.
"""

from __future__ import annotations

import platform
import re
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from paperproof import __version__
from paperproof.build import guard
from paperproof.build.pipeline import (
    collect_paper_terms,
    observer_for,
    read_links,
    resolve_repositories,
    select_entries,
)
from paperproof.build.shipped import REGENERATE
from paperproof.build.summary import BuildSummary
from paperproof.catalogue.archive import open_archive
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import LocalRepos
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import DEFAULT_PER_REPO
from paperproof.catalogue.shipped import (
    MadeBy,
    RunEnvironment,
    ShippedRepo,
    code_fingerprint,
    dump,
    path_for,
    record_key,
    without_source,
)
from paperproof.plumbing.files import write_atomic
from paperproof.runner import environment
from paperproof.verify.stage import RunSettings, run_and_judge

# The runner's own packages a sample may use, recorded with their versions when installed.
RUNNER_PACKAGES = ("numpy", "pandas", "scikit-learn", "scipy", "tensorflow", "tensorflow-cpu", "torch")


@dataclass
class RegenerateSummary:
    into: str
    written: list[str] = field(default_factory=list)  # owner/name (samples, ran)
    unchanged: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (checkout, reason)
    without_checkout: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"shipped records in {self.into}: {len(self.written)} repositories written or checked, "
               f"{self.unchanged} unchanged"]
        out.extend(f"  {line}" for line in self.written)
        out.extend(f"  refused {name}: {reason}" for name, reason in self.refused)
        if self.without_checkout:
            out.append(f"linked repositories without a checkout (no records made): {len(self.without_checkout)}")
        return out


def run_environment(work: RepoWork, environments: Path | None) -> RunEnvironment:
    """The environment the samples of one repository ran in (the per-repository one is cached: cheap now)."""
    packages = {}
    for name in RUNNER_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    env = environment.for_record(work.record, environments)
    return RunEnvironment(python=platform.python_version(), platform=f"{platform.system()} {platform.machine()}",
                          packages=packages, installed=sorted(env.installed) if env else [],
                          not_installed=dict(sorted(env.not_installed.items())) if env else {})


# Quotes of the repository's own text in what a build writes: a docstring in a drafted clause, a default's code.
QUOTES = ((re.compile(r'\(docstring: "[^"]*"\)'), "(docstring)"), (re.compile(r" \(`[^`]*`\) runs code"), " runs code"))


def _scrubbed(value: Any, places: dict[str, str]) -> Any:
    """Local paths (the checkout, the environments and cache folders) replaced by their placeholders, and
    quotes of the repository's text left out, in every string of a dumped record."""
    if isinstance(value, dict):
        return {k: _scrubbed(v, places) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, places) for v in value]
    if not isinstance(value, str):
        return value
    for path, name in sorted(places.items(), key=lambda item: -len(item[0])):
        value = value.replace(path + "/", "" if name == "" else name + "/").replace(path, name or ".")
    for pattern, replacement in QUOTES:
        value = pattern.sub(replacement, value)
    return value


def shipped_repo(work: RepoWork, made_by: MadeBy, env: RunEnvironment, places: dict[str, str]) -> ShippedRepo:
    record = work.record
    root = record.snapshot or ""
    here = {**places, root: ""} if root else places
    bare = record.model_copy(update={"source": "shipped", "snapshot": None, "readme": None, "specimen": False,
                                     "etags": None, "tarball_sha256": None, "reach": record.reach})
    samples = [Sample.model_validate(_scrubbed(without_source(s).model_dump(mode="json"), here)) for s in work.samples]
    return ShippedRepo(made_by=made_by, environment=env,
                       record=type(record).model_validate(_scrubbed(bare.model_dump(mode="json"), here)), samples=samples)


def regenerate(checkouts: Path, into: Path, *, archive: str | None = None, settings: RunSettings | None = None,
               per_repo: int = DEFAULT_PER_REPO) -> RegenerateSummary:
    """Verify every linked repository that has a checkout under `checkouts`; write its records under `into`."""
    settings = settings or RunSettings()
    if settings.cache is not None:  # the build's cache: refused when not ours, tagged as a build tags it
        guard.check_cache(settings.cache)
        guard.claim_cache(settings.cache)
    source = LocalRepos(checkouts, missing_note="no checkout")
    the_archive = open_archive(archive)
    links = read_links(the_archive)
    repos = resolve_repositories(links, source)
    summary = RegenerateSummary(into=str(into))
    chosen: dict[str, RepoWork] = {}
    for key, work in sorted(repos.items()):
        if not work.record.has_source:
            summary.without_checkout.append(work.record.repo)
        elif work.record.commit is None:
            summary.refused.append((work.record.repo, "its checkout names no commit (no .git naming one): shipped "
                                    "records are pinned to a commit, so clone it, or write the commit id to "
                                    ".git/HEAD of the exported tree"))
        else:
            chosen[key] = work
    terms = collect_paper_terms(the_archive, links, chosen)
    with observer_for(settings) as observer:
        chosen = select_entries(chosen, terms, per_repo, BuildSummary(), observer)
    judged = run_and_judge(chosen, settings).repos
    made_by = MadeBy(paperproof=__version__, code=code_fingerprint(), command=REGENERATE)
    places = {str(checkouts.resolve()): "DIR", sys.prefix: "PYTHON"}  # PYTHON: the runner's, whose paths errors quote
    if settings.environments is not None:
        places[str(settings.environments.resolve())] = "ENVIRONMENTS"
    if settings.cache is not None:
        places[str(settings.cache.resolve())] = "CACHE"
    for key in sorted(judged):
        work = judged[key]
        shipped = shipped_repo(work, made_by, run_environment(work, settings.environments), places)
        target = path_for(into, record_key(work.record))
        text = dump(shipped)
        ran = sum(1 for s in shipped.samples if s.status.startswith("ran"))
        summary.written.append(f"{work.record.repo} at {work.record.commit}: {len(shipped.samples)} samples, "
                               f"{ran} ran")
        try:
            if target.read_text(encoding="utf-8") == text:
                summary.unchanged += 1
                continue
        except OSError:
            pass
        write_atomic(target, text)
    return summary
