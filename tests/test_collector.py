"""The collector inside a build: frozen and slowed inside `long_lived`, as it was outside."""

import gc
import weakref

from paperproof.build import collector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_what_exists_on_entry_is_frozen_until_exit_and_the_collector_is_then_as_it_was() -> None:
    before = gc.get_threshold()
    kept = Node()
    with collector.long_lived():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (collector.YOUNG, *before[1:])
        assert all(obj is not kept for obj in gc.get_objects())  # frozen: no collection walks it
        collector.settle()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
    assert any(obj is kept for obj in gc.get_objects())


def test_a_cycle_made_inside_is_still_collected() -> None:
    with collector.long_lived():
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
