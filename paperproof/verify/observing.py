"""The repository's own drivers run for a build or a verify (`runner.observe`), kept in the cache by what decides
them, so that a rebuild of unchanged checkouts starts no driver again.

What decides a repository's drivers is all of its files (modules too: what the drivers call), its commit,
paperproof's code (the finder, the stand-ins, the tracer), the interpreter and its packages, the repository's
environment and the limits: `run_inputs.verify_digest` over those. A set of runs in which the sandbox itself failed
(a runner error) is not kept: the next build runs them again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.observed import DriverRun
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.plumbing.files import write_atomic
from paperproof.runner import environment
from paperproof.verify import run_inputs

RUNS = TypeAdapter(list[DriverRun])


class Observer:
    """Runs the drivers of one repository after another on one sandbox executor (`workers` zygotes, so as many
    drivers side by side), opened at the first repository that has drivers to run and closed with the observer."""

    def __init__(self, environments: Path | None = None, limits: dict | None = None, cache: Path | None = None,
                 workers: int | None = None):
        self.environments, self.limits, self.cache, self.workers = environments, limits, cache, workers
        self._executor: Any = None
        self._runner: list[str] | None = None

    def __enter__(self) -> Observer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            self._executor.__exit__(*exc)
            self._executor = None

    def drivers(self, record: RepoRecord, entries: Sequence[Entry],
                env: environment.Environment | None = None) -> list[DriverRun]:
        """The repository's drivers, run or not, and what each called (from the cache when nothing that decides
        them changed). `env`: the repository's environment when the caller has prepared it already."""
        if not entries or record.snapshot is None:
            return []
        root = Path(record.snapshot)
        env = env if env is not None else environment.for_record(record, self.environments)
        path = env.path if env is not None else None
        key = None
        if self.cache is not None:
            if self._runner is None:
                self._runner = run_inputs.runner_inputs()
            key = run_inputs.verify_digest(root, self._runner, record.commit, {
                "drivers": sorted(f"{e.path}::{e.qualname}" for e in entries), "limits": self.limits,
                "environment": path, "notes": env.describe() if env is not None else []})
            kept = self._kept(key)
            if kept is not None:
                return kept
        runs = self._run(root, entries, path)
        if key is not None and not any(r.ended.startswith("runner error") for r in runs):
            write_atomic(self._path(key), RUNS.dump_json(runs))
        return runs

    def _run(self, root: Path, entries: Sequence[Entry], env_path: str | None) -> list[DriverRun]:
        from paperproof.catalogue.drivers import find_drivers
        from paperproof.catalogue.select import judge
        from paperproof.fixtures.stubs import missing_imports
        from paperproof.runner.executor import Executor
        from paperproof.runner.observe import observe

        # drivers of what selection could take first: an entry its code excludes (a model, a loader) is no score
        wanted = [f"{j.entry.path}::{j.entry.qualname}" for j in judge(list(entries)) if not j.excluded]
        found = find_drivers(root, entries, wanted)
        if not found:
            return []  # no zygote started for a repository without drivers
        if self._executor is None:
            self._executor = Executor(workers=self.workers).__enter__()
        return observe(root, entries, self._executor, env_path,
                       missing_imports(str(root), (env_path,) if env_path else ()), self.limits, drivers=found)

    def _path(self, key: str) -> Path:
        assert self.cache is not None
        return self.cache / "drivers" / key[:2] / f"{key}.json"

    def _kept(self, key: str) -> list[DriverRun] | None:
        try:
            return RUNS.validate_json(self._path(key).read_bytes())
        except (OSError, ValidationError, ValueError):
            return None


__all__ = ["Observer"]
