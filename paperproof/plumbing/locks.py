"""Exclusive locks on what a process is about to write: the run cache, the store, the published site."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class Busy(Exception):
    """Another process holds the lock of what this one was about to write."""


@contextmanager
def hold(lock: Path, busy: str) -> Iterator[int]:
    """Hold `lock` (a file, created if missing) exclusively while writing what it guards; raise `Busy(busy)`
    at once when another process holds it. The kernel releases it when every process holding it has ended,
    however it ended (so a forked child that outlives its parent should close the descriptor yielded)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise Busy(busy) from exc
        try:
            yield handle.fileno()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
