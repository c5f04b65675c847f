"""Running entries in the sandbox: a pool of warm zygotes and the result cache.

The parent side of the trust boundary. It sends plain JSON requests to zygotes it started itself,
and turns what comes back (the report of each run's harness, which alone reads what the sample's
processes hand back) into validated `RunResult`s (`answer.parse_answer`); nothing from the
sandbox is unpickled or evaluated.
A zygote that dies or stops answering is restarted, and the sample it was running is recorded
as a runner error, never cached, so the build goes on and the next build runs it again. A run the
machine's load cut short (its processes starved of a CPU until the wall-clock backstop,
`runner.meter`) is run again at once, with the same budgets; cut again, it is recorded as
`cut_by_load` and never cached either: such a result is the machine's, not the sample's.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from pydantic import ValidationError

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.extract import without_defaults
from paperproof.catalogue.fixture_case import FixtureSet
from paperproof.catalogue.run_result import RunResult
from paperproof.plumbing.interrupts import stopping
from paperproof.runner.answer import RUNNER_VERSION, load_cut, parse_answer
from paperproof.runner.sandbox import Limits
from paperproof.runner.slots import Slot

LIBRARIES = ("numpy", "pandas", "torch")
REPEATED_CASE = "typical"  # run twice to tell deterministic outputs from well-formed ones
START_SECONDS = 180.0  # a zygote importing torch on a loaded machine
ANSWER_GRACE_SECONDS = 60.0  # beyond the wall-clock backstop, before a silent zygote is given up
NOT_FINAL = frozenset({"runner_error", "cut_by_load"})  # ends that are not the sample's result: never cached


@dataclass(frozen=True)
class RunRequest:
    """One entry, its cases and where its snapshot lies: everything a zygote needs, as JSON."""

    entry: Entry
    fixtures: FixtureSet
    snapshot: str
    limits: dict | None = None
    commit: str | None = None  # the repository's commit, when known: part of the cache key
    environment: str | None = None  # a folder of packages installed for the repository (`runner.environment`)
    decided_by: str = ""  # what else decides the result, folded into the cache key (`verify.run_inputs`)

    def payload(self) -> dict:
        wants_device = any(p.name.lower() in ("device", "dev") for p in self.entry.params)
        return {
            "snapshot": self.snapshot,
            "path": self.entry.path,
            "module": self.entry.module,
            "import_name": self.entry.import_name,
            "sys_path": self.entry.sys_path,
            "name": self.entry.name,
            "kind": self.entry.kind,
            "methods": self.entry.methods,
            "closure": self.closure(),
            "cases": [c.model_dump(mode="json") for c in self.fixtures.cases],
            "repeat": [REPEATED_CASE],
            "wants_device": wants_device,
            "stubs": self.fixtures.stubs,
            "environment": self.environment,
            "limits": self.limits or {},
        }

    def closure(self) -> str:
        """The entry's closure, without the evaluated defaults our fixtures supply instead."""
        supplied = [p for p in self.entry.params if p.name in self.fixtures.supplied_defaults]
        return without_defaults(self.entry.closure, supplied) if supplied else self.entry.closure

    def cache_key(self) -> str:
        """Everything that can change a result: the repository and its commit, the entry's code and
        closure, the content of every repository module the closure may import, the fixtures, the
        runner, the limits, the library versions and what else the caller says decides it
        (`decided_by`). Text from the repository (paths may hold bytes that are not UTF-8) is encoded
        so that no name can fail to be a key."""
        parts = [
            self.entry.repo,
            self.commit or "no commit",
            self.entry.code_sha256,
            hashlib.sha256(self.closure().encode("utf-8", "surrogateescape")).hexdigest(),
            self.entry.path,
            self.entry.import_name,
            *self.entry.sys_path,
            *(f"{path} {sha256}" for path, sha256 in sorted(self.entry.closure_modules.items())),
            self.fixtures.digest(),
            RUNNER_VERSION,
            json.dumps(self.limits or {}, sort_keys=True),
            self.environment or "no environment",
            *library_versions(),
            *([self.decided_by] if self.decided_by else []),  # absent, a build's keys are as they were
        ]
        return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def library_versions() -> list[str]:
    versions = []
    for name in LIBRARIES:
        try:
            versions.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}==absent")
    return versions


class Zygote:
    """One warm fork server process on its own worker slot, used by one thread at a time."""

    def __init__(self) -> None:
        self._slot = Slot()
        self.slot = self._slot.number
        self.process: subprocess.Popen[bytes] | None = None
        self.runs_root: str | None = None
        self.hello: dict = {}  # the zygote's ready line: what it warmed, whether CUDA was touched
        self._buffer = b""
        self._closed = False

    def _start(self) -> subprocess.Popen[bytes]:
        keep = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "TMPDIR")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        self._buffer = b""
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "paperproof.runner.zygote", str(self.slot)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
            env=env, start_new_session=True, pass_fds=(self._slot.fd,),
            cwd="/",  # never the builder's folder (`verify .` runs in the checkout): the zygote reads nothing relative
        )
        if stopping.is_set():  # the signal came while it was being started: after the others were ended
            self._stop()
            raise RuntimeError("the command was interrupted while a sandbox zygote started")
        ready = self._read_line(START_SECONDS)
        try:
            hello = json.loads(ready or b"{}")
        except ValueError:
            hello = {}
        if not hello.get("ready"):
            self._stop()
            raise RuntimeError(f"the sandbox zygote did not start (said {ready!r}); is paperproof installed?")
        self.runs_root = str(hello.get("runs_root") or "") or None
        self.hello = hello
        return self.process

    def _read_line(self, timeout: float) -> bytes | None:
        """One answer line, or None when the zygote closed its end or stayed silent past `timeout`."""
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        self._closed = False
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], left)
            if readable:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self._closed = True
                    return None
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _send(self, payload: dict) -> bool:
        if self.process is None or self.process.poll() is not None:
            if stopping.is_set():  # Ctrl-C or SIGTERM ended the zygotes: start none again (`plumbing.interrupts`)
                return False
            self._stop()
            self._start()
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(payload).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            return False
        return True

    def run(self, payload: dict) -> dict:
        """The zygote's answer; a zygote that died (before or during this run) is restarted, and an
        answer of `runner_error` says what happened to it during this run. A run that the machine's
        load cut short is run once more, from the start and with its whole budget: the answer is the
        second try's, with the first's cut in its `load_cuts`."""
        answer = self._run_once(payload)
        first = None if "runner_error" in answer else load_cut(answer)
        if first is not None:
            answer = self._run_once(payload)
            answer["load_cuts"] = [first]
        return answer

    def _run_once(self, payload: dict) -> dict:
        if not self._send(payload):  # it had died between runs: not this sample's doing
            self._stop()
            if not self._send(payload):
                return {"runner_error": "the sandbox zygote could not be restarted"}
        wall = Limits(**payload.get("limits", {})).run_backstop(len(payload.get("cases", [])))
        line = self._read_line(wall + ANSWER_GRACE_SECONDS)
        if line is not None:
            try:
                return json.loads(line)
            except ValueError:
                pass
        how = self._stop(closed=line is None and self._closed)
        return {"runner_error": f"the sandbox zygote {how} while running this sample; it was restarted for the next one"}

    def _stop(self, closed: bool = False) -> str:
        """Kill the zygote (its samples and reaper die with it) and clear its runs; says how it had
        ended. `closed`: it closed its end of the channel, so it is exiting: wait for that first."""
        if self.process is None:
            return "was not running"
        if closed:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        code = self.process.poll()
        if code is None:
            how = "stopped answering"
            self.process.kill()
            self.process.wait()
        else:
            how = f"died (signal {-code})" if code < 0 else f"exited with status {code}"
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        if self.runs_root:
            shutil.rmtree(self.runs_root, ignore_errors=True)
        self.process, self.runs_root, self._buffer = None, None, b""
        return how

    def close(self) -> None:
        if self.process is not None:
            try:
                if self.process.stdin is not None:
                    self.process.stdin.close()
                self.process.wait(timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                pass
            self._stop()
        self._slot.release()


class ResultCache:
    """Run results on disk by cache key, written atomically; a rebuild with nothing changed runs nothing."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.hits = 0
        self.misses = 0
        self.unkept = 0  # results not kept because they are not the sample's (`NOT_FINAL`)

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
        """Keep a final result; one the runner or the machine's load cut short is run again next time."""
        if result.end in NOT_FINAL:
            self.unkept += 1
            return
        if self.directory is None:
            return
        from paperproof.plumbing.files import write_atomic

        write_atomic(self.directory / key[:2] / f"{key}.json", result.model_dump_json())


class Executor:
    """Runs requests on a pool of zygotes (one per worker), consulting the cache first."""

    def __init__(self, workers: int | None = None, cache: ResultCache | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.cache = cache or ResultCache(None)
        self._all = [Zygote() for _ in range(self.workers)]
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
        answer = self.answer(request.payload())
        with self._lock:
            self.executed += 1
            self.cache.misses += 1
        result = parse_answer(answer, request)
        if not stopping.is_set():  # an answer after Ctrl-C or SIGTERM may be theirs, not the sample's
            self.cache.put(key, result)  # unless it is not the sample's result (`NOT_FINAL`)
        return result

    def answer(self, payload: dict) -> dict:
        """A zygote's answer to a request, uncached: an entry's run (`run_one` caches it) or a driver's
        (`runner.observe`)."""
        zygote = self._zygotes.get()
        try:
            return zygote.run(payload)
        finally:
            self._zygotes.put(zygote)

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


__all__ = ["Executor", "ResultCache", "RunRequest", "Zygote", "parse_answer", "RUNNER_VERSION"]
