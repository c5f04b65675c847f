"""Ctrl-C and SIGTERM: the command's processes end first, then the command unwinds and says what it kept.

Left to Python, SIGINT raises `KeyboardInterrupt` in the main thread while every process the command
started (render processes, sandbox zygotes, Pagefind, uv) goes on: the forked ones print their own
tracebacks, the `with` blocks that hold thread pools wait for the runs in flight, and SIGTERM ends the
command at once and leaves its workers orphaned. So `caught` installs one handler for SIGINT, SIGTERM and
SIGHUP. On the first signal it sets `stopping` (no zygote is started again, no progress line is printed),
ends every descendant of this process (`end_descendants`: SIGTERM to its children, then SIGKILL for what is
left after a grace), and raises `KeyboardInterrupt` (`Terminated` for SIGTERM and SIGHUP) so that each `with` cleans up
after itself while the command unwinds. A second signal while it unwinds ends the descendants and this
process at once.

Descendants are found by walking `/proc` (parent pids), so a zygote in a session of its own, a tool's own
children and a process started a moment before the signal are all found.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

stopping = threading.Event()  # set on the first signal: start nothing more, print no more progress
CAUGHT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 3.0  # for what the SIGTERM reaches to clean up after itself before SIGKILL


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, unwinding the command as Ctrl-C does (`except Exception` does not catch it either)."""

    def __init__(self, number: int) -> None:
        super().__init__(signal.Signals(number).name)
        self.number = number


def exit_status(interrupt: KeyboardInterrupt) -> int:
    """128 + the signal's number, as a shell reports a command its signal ended: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + (interrupt.number if isinstance(interrupt, Terminated) else signal.SIGINT)


_OWNER = [0]  # the process that installed the handler: a process forked from it inherits it too


@contextmanager
def caught() -> Iterator[None]:
    """The handler installed while a command runs (in the main thread), and the earlier ones put back after."""
    _OWNER[0] = os.getpid()
    stopping.clear()
    earlier = {number: signal.signal(number, _first) for number in CAUGHT}
    try:
        yield
    finally:
        for number, handler in earlier.items():
            signal.signal(number, handler)


def _first(number: int, frame: FrameType | None) -> None:
    if os.getpid() != _OWNER[0]:  # a forked process, before it set its own: its parent ends it, quietly
        os._exit(128 + number)
    for caught in CAUGHT:
        signal.signal(caught, _again)
    stopping.set()
    end_descendants()
    if number == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(number)


def _again(number: int, frame: FrameType | None) -> None:
    end_descendants(grace=0.0)
    (sys.__stderr__ or sys.stderr).write("paperproof: stopped at once (a second signal)\n")
    os._exit(128 + number)


def _parents() -> dict[int, int]:
    """Every process's parent, by pid; a process that ends while it is read is left out."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            # pid (comm) state ppid ...: the command may hold spaces and parentheses, so split after the last ')'
            found[int(name)] = int(stat[stat.rindex(b")") + 2:].split()[1])
    return found


def descendants(root: int | None = None) -> list[int]:
    """The pids of every living descendant of `root` (this process by default), parents before children."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, queue = [], [root or os.getpid()]
    while queue:
        for child in sorted(children.get(queue.pop(0), [])):
            found.append(child)
            queue.append(child)
    return found


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has: it only waits to be collected)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] not in (b"Z", b"X")


def end_descendants(grace: float = GRACE_SECONDS) -> None:
    """SIGTERM this process's children (a zygote then removes its runs, and its harness and samples die with
    it; a render process or a tool just ends), then SIGKILL every descendant still running after `grace`
    seconds, or one that appeared meanwhile. Only the children are sent SIGTERM: a sample's own process
    ended by it would be a result of the sample's, one a zygote could still answer."""
    children = [pid for pid, parent in _parents().items() if parent == os.getpid()]
    for pid in children:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_running(pid) for pid in descendants()):
        time.sleep(0.05)
    for pid in descendants():
        if _running(pid):
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except (ProcessLookupError, PermissionError):
        pass


__all__ = ["CAUGHT", "Terminated", "caught", "descendants", "end_descendants", "exit_status", "stopping"]
