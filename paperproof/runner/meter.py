"""CPU time and CPU wait of one sample's processes together, as its harness reads them.

A run's budget is CPU time (`Limits.cpu_seconds`), which a busy machine does not shrink: the same
sample uses the same CPU whether it shares the machine or not, while its wall-clock time grows with
every other process that wants a CPU. Wall-clock time is only a backstop (`Limits.wall_seconds`)
for samples that sleep or wait; when the backstop ends a run, the time its processes spent ready to
run but waiting for a CPU tells a run starved by the machine's other work (cut by load: tried again,
never a verdict) from one that sleeps.

Where the sample has a cgroup (`cgroup`), both come from it: its CPU time counts every process,
detached and finished ones included, and on the unified hierarchy `cpu.pressure` says how long some
process of it waited. The harness opens those files before its private root hides `/sys`, and
reads them again from the start each time. Without a group, CPU time is the harness's own and its
reaped children's (`getrusage`: each case process with the children it waited for) plus, from
`/proc`, the processes of the sample alive at that moment; its wait is each task's run delay
(`/proc/PID/task/TID/schedstat`), as last seen. What a process that left the case's tree used after
the last look, and ended before the case did, is not counted then; every case ends with its
processes killed, so that is at most one look's worth.

Standard library only: this runs in the harness, at the trust boundary.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable

from paperproof.runner import cgroup

TICK = 0.1  # seconds between two looks at a running case's CPU time
SCAN = 0.5  # seconds between two looks for the sample's processes, where no cgroup counts them
STARVED = 0.25  # a run that waited for a CPU a quarter of its backstop or more was cut by load
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _pread(fd: int) -> str:
    return os.pread(fd, 1 << 14, 0).decode("ascii", "replace")


class Meter:
    """The run's CPU time and CPU wait in seconds since it started: `cpu` and `waited`, given a
    callable that lists the sample's live processes (used only where no cgroup counts them)."""

    def __init__(self, usage: tuple[int, float] | None, pressure: int | None, source: str) -> None:
        self._usage, self._pressure, self.source = usage, pressure, source
        self._proc: int | None = None
        self._base_cpu = 0.0
        self._base_waited = 0.0
        self._high = 0.0  # CPU time only grows: a process gone between two looks does not make it shrink
        self._delays: dict[tuple[int, int], float] = {}  # (pid, tid) -> its run delay, as last seen
        self._scan: tuple[float, int, list[int]] = (0.0, 0, [])  # (when, for which case, what was found)
        self._base_cpu = self._cpu(lambda: [])
        self._base_waited = self._waited(lambda: []) or 0.0

    @classmethod
    def open(cls, group) -> Meter:
        """The meter of a run in `group` (a `cgroup.Group`, or None): call in the harness after it
        joined the group and before its private root, which has no `/sys`."""
        usage = pressure = None
        source = "its processes"
        if group is not None:
            path, scale, pressure_path = group.cpu_files()
            try:
                if path is not None:
                    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                    cgroup.read_usage(_pread(fd), scale)  # readable, and what we expect
                    usage, source = (fd, scale), f"its {group.cpu_kind}"
                if pressure_path is not None:
                    fd = os.open(pressure_path, os.O_RDONLY | os.O_CLOEXEC)
                    cgroup.read_pressure(_pread(fd))
                    pressure = fd
            except (OSError, ValueError):
                pass  # counted from its processes instead
        meter = cls(usage, pressure, source)
        meter.look_in("/proc")
        return meter

    def look_in(self, proc: str) -> None:
        """Read processes under `proc` from now on (the PID namespace's own, once it is mounted)."""
        try:
            fd = os.open(proc, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return
        if not os.path.exists(os.path.join(proc, "self")):  # an empty mount point: keep what we had
            os.close(fd)
            return
        if self._proc is not None:
            os.close(self._proc)
        self._proc = fd

    @property
    def sampled(self) -> bool:
        """Whether the wait is read from each task as last seen (no cgroup keeps it): then it is looked at
        with the CPU time, every tick, so that a task gone since still counts what it waited."""
        return self._pressure is None

    def cpu(self, live: Callable[[], list[int]]) -> float:
        self._high = max(self._high, self._cpu(live) - self._base_cpu)
        return self._high

    def waited(self, live: Callable[[], list[int]]) -> float | None:
        got = self._waited(live)
        return None if got is None else max(0.0, got - self._base_waited)

    def _cpu(self, live: Callable[[], list[int]]) -> float:
        if self._usage is not None:
            fd, scale = self._usage
            try:
                return cgroup.read_usage(_pread(fd), scale)
            except (OSError, ValueError):
                return self._high + self._base_cpu  # as last read: the group's count is the only one on its scale
        used = 0.0
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
            usage = resource.getrusage(who)
            used += usage.ru_utime + usage.ru_stime
        for pid in live():
            fields = self._stat(pid)
            if fields is not None:  # its own time and that of the children it waited for
                used += sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS
        return used

    def _waited(self, live: Callable[[], list[int]]) -> float | None:
        if self._pressure is not None:
            try:
                return cgroup.read_pressure(_pread(self._pressure))
            except (OSError, ValueError):
                pass
        if self._proc is None:
            return None
        for pid in (os.getpid(), *live()):
            try:
                fd = os.open(f"{pid}/task", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=self._proc)
            except OSError:
                continue
            try:
                tasks = os.listdir(fd)
            except OSError:
                tasks = []
            finally:
                os.close(fd)
            for tid in tasks:
                delay = self._read(f"{pid}/task/{tid}/schedstat")
                parts = delay.split() if delay else []
                if len(parts) >= 2 and parts[1].isdigit():
                    key = (pid, int(tid))
                    self._delays[key] = max(self._delays.get(key, 0.0), int(parts[1]) * 1e-9)
        return sum(self._delays.values())

    def _stat(self, pid: int) -> list[str] | None:
        """The fields of `/proc/PID/stat` after the command name (state first), or None."""
        text = self._read(f"{pid}/stat")
        if not text or ")" not in text:
            return None
        fields = text.rsplit(")", 1)[1].split()
        return fields if len(fields) >= 15 else None

    def _read(self, name: str) -> str | None:
        if self._proc is None:
            return None
        try:
            fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=self._proc)
        except OSError:
            return None
        try:
            return os.read(fd, 4096).decode("ascii", "replace")
        except OSError:
            return None
        finally:
            os.close(fd)

    def processes(self, case: int, uid: int | None) -> list[int]:
        """The sample's live processes: the case process and, as root (each sample has its uid), every
        process of its uid; else those of the case's process group. Looked for at most every
        `SCAN` seconds, and only where the group does not count them all."""
        if self._proc is None or (self._usage is not None and self._pressure is not None):
            return [case]
        when, of, found = self._scan
        if of == case and time.monotonic() - when < SCAN:
            return found
        found = [case]
        self._scan = (time.monotonic(), case, found)
        try:
            names = os.listdir(self._proc)
        except OSError:
            return found
        for name in names:
            if not name.isdigit() or int(name) == case:
                continue
            if uid is not None:
                try:
                    if os.stat(name, dir_fd=self._proc).st_uid == uid:
                        found.append(int(name))
                except OSError:
                    pass
            else:
                fields = self._stat(int(name))
                if fields is not None and fields[2] == str(case):  # its process group is the case's
                    found.append(int(name))
        return found
