"""Scale-out: the same run requests on a Dask distributed cluster, and the executor factory.

Each task carries one request's JSON payload, exactly what a local zygote receives, and returns
the zygote's JSON answer; the client parses it (`parse_answer`) and keeps the cache, so results
and cache keys are the same as the local pool's. On a worker, runs go through that worker
process's own zygotes, started lazily, at most one per task running at once (one per thread
slot); every zygote claims a machine-wide slot (`slots`), so workers sharing a machine never
share a sandbox uid. Workers must see the snapshot at the same path as the client.
"""

from __future__ import annotations

import atexit
import queue
import threading
from collections.abc import Iterable, Iterator

from paperproof.catalogue.run_result import RunResult
from paperproof.runner.answer import parse_answer
from paperproof.runner.executor import Executor, ResultCache, RunRequest, Zygote

_idle: queue.SimpleQueue[Zygote] = queue.SimpleQueue()
_every: list[Zygote] = []
_lock = threading.Lock()


def run_payload(payload: dict) -> dict:
    """The Dask task: run one request through this worker process's zygotes."""
    try:
        zygote = _idle.get_nowait()
    except queue.Empty:
        zygote = Zygote()
        with _lock:
            if not _every:
                atexit.register(_close_all)
            _every.append(zygote)
    try:
        return zygote.run(payload)
    finally:
        _idle.put(zygote)


def _close_all() -> None:
    for zygote in _every:
        zygote.close()


class DaskExecutor:
    """Runs requests on a Dask cluster at `address`, consulting the same cache as `Executor`."""

    def __init__(self, address: str, cache: ResultCache | None = None) -> None:
        from distributed import Client

        self.client = Client(address)
        self.cache = cache or ResultCache(None)
        self.executed = 0

    def run(self, requests: Iterable[RunRequest]) -> Iterator[RunResult]:
        """Results in the order of `requests`; the cluster runs the uncached ones all at once."""
        requests = list(requests)
        keys = [r.cache_key() for r in requests]
        cached = [self.cache.get(k) for k in keys]
        todo = [i for i, result in enumerate(cached) if result is None]
        submitted = self.client.map(run_payload, [requests[i].payload() for i in todo],
                                    key=[f"paperproof-run-{keys[i]}" for i in todo], pure=False)
        futures = dict(zip(todo, submitted, strict=True))
        for index, request in enumerate(requests):
            hit = cached[index]
            if hit is not None:
                yield hit
                continue
            result = parse_answer(futures.pop(index).result(), request)
            self.executed += 1
            self.cache.misses += 1
            if result.end != "runner_error":
                self.cache.put(keys[index], result)
            yield result

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_executor(workers: int | None, cache: ResultCache, scheduler: str | None = None) -> Executor | DaskExecutor:
    """The single-machine pool by default; a Dask cluster when a scheduler address is given."""
    if scheduler:
        return DaskExecutor(scheduler, cache)
    return Executor(workers, cache)
