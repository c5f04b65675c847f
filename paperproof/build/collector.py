"""Python's cyclic garbage collector during a build, told what lives for the whole of it.

A build keeps a large set of objects for its whole length (imported modules, templates, the
repositories with their samples) and streams millions of short-lived ones past it (archive rows,
records, rendered pages). Left as it is, CPython's collector runs a young collection every 700
allocations of containers and, every so often, a full collection that walks the whole long-lived
set again, in the build's process and in each render process. At 50,000 papers (`bench/`'s
synthetic archive) that was 3.6 s of the build process's 40 s of CPU and 0.8–1.0 s in each render
process; inside `long_lived` it was 0.3 s, and no collection at all ran in a render process (the young
generation is counted net of what was freed, and theirs never grows by 20,000).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 20_000  # allocations between young collections (CPython's default is 700)


@contextmanager
def long_lived() -> Iterator[None]:
    """Inside: what exists on entry, and at each `settle`, is never walked by a collection again, and young
    collections are rarer. Render processes forked inside inherit both, and, since no collection of
    theirs writes to the frozen objects, they share those pages with the build's process instead of
    copying them. On exit the collector is as it was."""
    before = gc.get_threshold()
    settle()
    gc.set_threshold(YOUNG, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def settle() -> None:
    """What exists now lives until the build ends: collect the garbage once, then freeze the rest."""
    gc.collect()
    gc.freeze()
