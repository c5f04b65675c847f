"""Running entries in the sandbox: a pool of warm zygotes, the result cache, and report parsing.

The parent side of the trust boundary. It sends plain JSON requests to zygotes it started itself,
and turns what comes back (untrusted: written by the sample's process) into validated
`RunResult`s; nothing from the sandbox is unpickled or evaluated.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from pydantic import ValidationError

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.extract import without_defaults
from paperproof.catalogue.fixture_case import FixtureSet
from paperproof.catalogue.run_result import CaseOutcome, ExceptionInfo, Isolation, RunResult

RUNNER_VERSION = "1"
LIBRARIES = ("numpy", "pandas", "torch")
REPEATED_CASE = "typical"  # run twice to tell deterministic outputs from well-formed ones

_SIGNAL_REASONS = {
    signal.SIGXCPU: "CPU time limit reached",
    signal.SIGXFSZ: "file size limit reached (output too large)",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGBUS: "bus error",
    signal.SIGABRT: "aborted",
    signal.SIGKILL: "killed",
}


@dataclass(frozen=True)
class RunRequest:
    """One entry, its cases and where its snapshot lies: everything a zygote needs, as JSON."""

    entry: Entry
    fixtures: FixtureSet
    snapshot: str
    limits: dict | None = None

    def payload(self) -> dict:
        wants_device = any(p.name.lower() in ("device", "dev") for p in self.entry.params)
        return {
            "snapshot": self.snapshot,
            "path": self.entry.path,
            "module": self.entry.module,
            "name": self.entry.name,
            "kind": self.entry.kind,
            "methods": self.entry.methods,
            "closure": self.closure(),
            "cases": [c.model_dump(mode="json") for c in self.fixtures.cases],
            "repeat": [REPEATED_CASE],
            "wants_device": wants_device,
            "limits": self.limits or {},
        }

    def closure(self) -> str:
        """The entry's closure, without the evaluated defaults our fixtures supply instead."""
        supplied = [p for p in self.entry.params if p.name in self.fixtures.supplied_defaults]
        return without_defaults(self.entry.closure, supplied) if supplied else self.entry.closure

    def cache_key(self) -> str:
        """Code, closure, fixtures, runner and library versions: any change means a fresh run."""
        parts = [
            self.entry.code_sha256,
            hashlib.sha256(self.closure().encode()).hexdigest(),
            self.entry.path,
            self.fixtures.digest(),
            RUNNER_VERSION,
            json.dumps(self.limits or {}, sort_keys=True),
            *library_versions(),
        ]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def library_versions() -> list[str]:
    versions = []
    for name in LIBRARIES:
        try:
            versions.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}==absent")
    return versions


class Zygote:
    """One warm fork server process, used by one thread at a time."""

    def __init__(self, slot: int) -> None:
        self.slot = slot
        self.process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES")}
        env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        process = subprocess.Popen(
            [sys.executable, "-I", "-m", "paperproof.runner.zygote", str(self.slot)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env, start_new_session=True,
        )
        ready = process.stdout.readline() if process.stdout else ""
        if not ready.startswith('{"ready": true'):
            process.kill()
            raise RuntimeError(f"the sandbox zygote did not start (said {ready!r}); is paperproof installed?")
        return process

    def run(self, payload: dict) -> dict:
        for attempt in range(2):
            if self.process is None or self.process.poll() is not None:
                self.process = self._start()
            assert self.process.stdin and self.process.stdout
            try:
                self.process.stdin.write(json.dumps(payload) + "\n")
                self.process.stdin.flush()
                line = self.process.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if line:
                return json.loads(line)
            self.close()
        raise RuntimeError("the sandbox zygote died twice on one request")

    def close(self) -> None:
        if self.process is not None:
            try:
                self.process.stdin.close() if self.process.stdin else None
                self.process.wait(timeout=5)
            except (subprocess.TimeoutExpired, OSError):
                self.process.kill()
            self.process = None


class ResultCache:
    """Run results on disk by cache key, written atomically; a rebuild with nothing changed runs nothing."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> RunResult | None:
        if self.directory is None:
            return None
        path = self.directory / key[:2] / f"{key}.json"
        try:
            result = RunResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None
        self.hits += 1
        return result

    def put(self, key: str, result: RunResult) -> None:
        if self.directory is None:
            return
        from paperproof.build.write import write_atomic

        write_atomic(self.directory / key[:2] / f"{key}.json", result.model_dump_json())


class Executor:
    """Runs requests on a pool of zygotes (one per worker), consulting the cache first."""

    def __init__(self, workers: int | None = None, cache: ResultCache | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.cache = cache or ResultCache(None)
        self._all = [Zygote(slot) for slot in range(self.workers)]
        self._zygotes: queue.SimpleQueue[Zygote] = queue.SimpleQueue()
        for zygote in self._all:
            self._zygotes.put(zygote)
        self.executed = 0
        self._lock = threading.Lock()

    def run_one(self, request: RunRequest) -> RunResult:
        key = request.cache_key()
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        zygote = self._zygotes.get()
        try:
            answer = zygote.run(request.payload())
        finally:
            self._zygotes.put(zygote)
        with self._lock:
            self.executed += 1
            self.cache.misses += 1
        result = parse_answer(answer, request)
        self.cache.put(key, result)
        return result

    def run(self, requests: Iterable[RunRequest]) -> Iterator[RunResult]:
        """Results in the order of `requests`, computed `workers` at a time."""
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            yield from pool.map(self.run_one, requests)

    def close(self) -> None:
        for zygote in self._all:
            zygote.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_answer(answer: dict, request: RunRequest) -> RunResult:
    """Turn a zygote's answer into a RunResult; anything malformed is a protocol error, not a crash."""
    base = {
        "code_sha256": request.entry.code_sha256,
        "fixture_digest": request.fixtures.digest(),
        "runner_version": RUNNER_VERSION,
        "device": str(answer.get("device", "cpu")),
        "exit_code": answer.get("exit_code"),
        "signal": answer.get("signal"),
        "stdout_tail": str(answer.get("stdout_tail", ""))[-2048:],
        "stderr_tail": str(answer.get("stderr_tail", ""))[-2048:],
    }
    isolation = Isolation()
    cases: dict[str, CaseOutcome] = {}
    load_error: ExceptionInfo | None = None
    protocol: str | None = None
    for line in answer.get("report", []):
        try:
            event = json.loads(line)
            kind = event.get("event")
            if kind == "isolation":
                isolation = Isolation.model_validate({k: v for k, v in event.items() if k != "event"})
            elif kind == "load_failed":
                load_error = ExceptionInfo.model_validate({**event["exception"], "where": "load"})
            elif kind == "case":
                outcome = CaseOutcome.model_validate({k: v for k, v in event.items() if k != "event"})
                cases.setdefault(outcome.case_id, outcome)
        except (ValueError, ValidationError, KeyError, TypeError, AttributeError) as exc:
            protocol = f"malformed report line: {str(exc).splitlines()[0][:200]}"
            break
    wanted = [c.case_id for c in request.fixtures.cases]
    ordered = [cases.get(cid) or CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted]
    complete = all(cid in cases for cid in wanted)
    end, reason = _how_it_ended(answer, load_error, complete, protocol)
    return RunResult(**base, end=end, reason=reason, load_error=load_error,
                     cases=ordered if load_error is None else [], isolation=isolation)


def _how_it_ended(answer: dict, load_error: ExceptionInfo | None, complete: bool,
                  protocol: str | None) -> tuple[str, str | None]:
    limit = answer.get("limit_seconds")
    if answer.get("timed_out"):
        return "timeout", f"wall-clock limit{f' of {limit} s' if limit else ''} reached; the process tree was killed"
    number = answer.get("signal")
    if number:
        if number == signal.SIGXFSZ:
            return "output_limit", _SIGNAL_REASONS[signal.SIGXFSZ]
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        return "killed", f"ended by {name}: {_SIGNAL_REASONS.get(number, 'signal')}"
    if answer.get("report_truncated"):
        return "output_limit", "its report exceeded the size cap"
    if protocol:
        return "protocol_error", protocol
    if load_error is not None:
        return "load_failed", None
    code = answer.get("exit_code")
    if not complete:
        return "exited", f"exited with status {code} before reporting every case"
    if code not in (0, None):
        return "exited", f"exited with status {code} after reporting"
    return "completed", None
