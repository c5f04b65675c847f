"""The render pool: results in submission order, and a render process that dies fails the build at once."""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool

import pytest

from paperproof.build import renderer
from paperproof.build.renderer import RenderPool


def _double(chunk: list[int], fresh: bool) -> list[int]:
    return [2 * x for x in chunk]


def _die(chunk: list[int], fresh: bool) -> list[int]:
    os._exit(3)  # as a process killed by libgomp's fork check, or by the out-of-memory killer, would end


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setitem(renderer.WORK, "double", _double)
    monkeypatch.setitem(renderer.WORK, "die", _die)
    made = RenderPool(renderer=None, jobs=2, depth=1)  # type: ignore[arg-type]
    yield made
    made.close(wait=False)


def test_results_come_back_in_the_order_sent(pool):
    got: list[tuple[int, list[int]]] = []
    for i in range(12):
        pool.submit("double", list(range(i, i + 3)), i, lambda context, results: got.append((context, results)))
    pool.drain()
    assert got == [(i, [2 * i, 2 * i + 2, 2 * i + 4]) for i in range(12)]


def test_a_render_process_that_dies_fails_the_build_instead_of_hanging(pool):
    pool.submit("die", [1], None, lambda context, results: None)
    with pytest.raises(BrokenProcessPool):
        pool.drain()
