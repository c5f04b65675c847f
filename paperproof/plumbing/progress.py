"""Progress of each long stage on stderr: a bar on a terminal, a line at a steady interval in a CI log.

A log gets one line every `EVERY_SECONDS` while a stage runs, and one at its end (stage, done/total, elapsed),
written by a timer thread, so a stage whose one item takes minutes (a slow sample) still shows the log is
alive. Every line, and the bar's label, goes out as the command layer writes a line (`terminal.shown`);
none is written once the command was interrupted (`interrupts.stopping`). Only stderr: progress is never
part of a command's output, nor of a site.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from typing import TypeVar

from tqdm import tqdm

from paperproof.plumbing.interrupts import stopping
from paperproof.plumbing.terminal import shown

T = TypeVar("T")
EVERY_SECONDS = 10.0


def bar(items: Iterable[T], stage: str, total: int | None = None, unit: str = "it",
        every: float | None = None) -> Iterator[T]:
    """Iterate with a labelled bar on a terminal, else with a line every `every` seconds (`EVERY_SECONDS`)
    and one when the last item is handed over."""
    if sys.stderr.isatty():
        yield from tqdm(items, desc=shown(f"{stage:<14}"), total=total, unit=unit, file=sys.stderr,
                        dynamic_ncols=True, leave=True)
        return
    if total is None and isinstance(items, Sized):
        total = len(items)
    yield from _logged(items, _Count(stage, total, unit), EVERY_SECONDS if every is None else every)


class _Count:
    """How far a stage is: what the log lines say."""

    def __init__(self, stage: str, total: int | None, unit: str) -> None:
        self.stage, self.total, self.unit = stage, total, unit
        self.done = 0
        self.started = time.monotonic()
        self.ended = False  # the end's line is the last: a tick that woke beside it says nothing after it
        self._lock = threading.Lock()

    def line(self, end: bool = False) -> str:
        units = "items" if self.unit == "it" else f"{self.unit}s"
        count = f"{self.done:,}" if self.total is None else f"{self.done:,}/{self.total:,}"
        elapsed = f"{time.monotonic() - self.started:.0f} s"
        return f"{self.stage}: {count} {units}, " + (f"done in {elapsed}" if end else f"{elapsed} so far")

    def say(self, end: bool = False) -> None:
        with self._lock:
            if self.ended or stopping.is_set():
                return
            self.ended = end
            sys.stderr.write(shown(self.line(end)) + "\n")
            sys.stderr.flush()


def _logged(items: Iterable[T], count: _Count, every: float) -> Iterator[T]:
    finished = threading.Event()

    def tick() -> None:
        while not finished.wait(every):
            count.say()

    timer = threading.Thread(target=tick, name=f"progress {count.stage}", daemon=True)
    timer.start()
    try:
        for item in items:
            count.done += 1
            if count.done == count.total:  # a consumer such as zip() may never ask past the last one
                count.say(end=True)
            yield item
        count.say(end=True)  # the total was not known, or not reached
    finally:
        finished.set()
