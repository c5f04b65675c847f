"""A bar per long stage on stderr when it is a terminal; silent in CI logs."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

from paperproof.plumbing.terminal import shown

T = TypeVar("T")


def bar(items: Iterable[T], stage: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Iterate with a labelled bar; silent when stderr is not a terminal (CI logs stay readable). The label is
    written as the command layer writes every line (`terminal.shown`); the bar's own `\\r` is tqdm's."""
    yield from tqdm(items, desc=shown(f"{stage:<14}"), total=total, unit=unit, file=sys.stderr, disable=None,
                    dynamic_ncols=True, leave=True)
