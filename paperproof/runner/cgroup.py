"""Memory, tasks and CPU accounted per sample: a cgroup that the kernel keeps for all its processes together.

The address-space limit bounds what one process maps. It does not see pages that no process maps
(a memfd grown with `posix_fallocate` and never mapped, SysV shared memory, files on its tmpfs) nor
the sum over a sample's processes. A cgroup does: every page the sample's processes charge counts
against the group's limit (`memory.max` in cgroup v2, `memory.limit_in_bytes` in v1), `pids.max`
caps its tasks, and at the limit the kernel's out-of-memory killer stops the group, which its
counters then say (`oom_kill`). The zygote makes one group per sample under its own cgroup, the
sample process joins it before it isolates itself (the private root has no `/sys`), and the zygote
reads the counters and removes the group after the run. Where no cgroup can be made (no root, no
delegated hierarchy), `find` returns None and the sandbox refuses `memfd_create` and caps SysV
shared memory instead (`sandbox`), which the run record states.

CPU time is a budget of the whole sample (`runner.meter`): a group counts every process's CPU, those that
left the case's tree (detached, orphaned) and those already gone included, and, on the unified (v2)
hierarchy, the time some process of it was ready to run and waited for a CPU (`cpu.pressure`), which
tells a run starved by the machine's other work from one that was slow. The unified hierarchy holds
both files in every group, controllers or not, so on a machine that mounts it beside the v1
controllers (hybrid) a sample also gets a v2 group for its CPU; with v1 alone, `cpuacct` counts its CPU.

Standard library only: this runs at the trust boundary.
"""

from __future__ import annotations

import os
import time


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _mounts() -> tuple[str | None, dict[str, str]]:
    """(the cgroup2 mount, {v1 controller: its mount}) from /proc/self/mountinfo."""
    v2: str | None = None
    v1: dict[str, str] = {}
    try:
        lines = _read("/proc/self/mountinfo").splitlines()
    except OSError:
        return None, {}
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, kind = head.split(), tail.split()
        if len(fields) < 5 or len(kind) < 3:
            continue
        if kind[0] == "cgroup2" and v2 is None:
            v2 = fields[4]
        elif kind[0] == "cgroup":
            for option in kind[2].split(","):
                if option in ("memory", "pids", "cpuacct"):
                    v1.setdefault(option, fields[4])
    return v2, v1


def _own(controller: str) -> str | None:
    """This process's cgroup path in the hierarchy of `controller` ("" for cgroup v2)."""
    try:
        lines = _read("/proc/self/cgroup").splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if (controller == "" and controllers == "") or controller in controllers.split(","):
            return path
    return None


def _clear_stale(parent: str) -> None:
    """Remove the (empty) folders of zygotes that were killed before they could remove their own."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        number = name.removeprefix("paperproof-")
        if name == number or not number.isdigit() or os.path.exists(f"/proc/{number}"):
            continue
        folder = os.path.join(parent, name)
        try:
            for run in os.listdir(folder):
                if run.startswith("run-"):
                    os.rmdir(os.path.join(folder, run))
            os.rmdir(folder)
        except OSError:
            pass


class Group:
    """One sample's cgroup: `join` in the sample process, then `stopped` and `remove` in the zygote.
    `cpu` is the folder that counts its CPU: a v2 group (`cpu_kind` "cgroup v2": `cpu.stat`, and
    `cpu.pressure` where the kernel keeps it), a v1 `cpuacct` group, or None."""

    def __init__(self, kind: str, memory: str, pids: str | None, cpu: str | None = None,
                 cpu_kind: str | None = None) -> None:
        self.kind, self.memory, self.pids = kind, memory, pids
        self.cpu, self.cpu_kind = cpu, cpu_kind

    def _folders(self) -> list[str]:
        return list(dict.fromkeys(f for f in (self.memory, self.pids, self.cpu) if f is not None))

    def join(self) -> None:
        for folder in self._folders():
            _write(os.path.join(folder, "cgroup.procs"), str(os.getpid()))

    def cpu_files(self) -> tuple[str | None, float, str | None]:
        """(the file of its CPU time, seconds per unit of it, the file of its CPU wait or None)."""
        if self.cpu is None:
            return None, 0.0, None
        if self.cpu_kind == "cgroup v2":
            pressure = os.path.join(self.cpu, "cpu.pressure")
            return os.path.join(self.cpu, "cpu.stat"), 1e-6, pressure if os.path.exists(pressure) else None
        return os.path.join(self.cpu, "cpuacct.usage"), 1e-9, None

    def cpu_seconds(self) -> float | None:
        """CPU time of all its processes together, read where `/sys` is visible (the zygote)."""
        usage, scale, _ = self.cpu_files()
        try:
            return read_usage(_read(usage), scale) if usage else None
        except OSError:
            return None

    def waited_seconds(self) -> float | None:
        """Time some process of it was ready to run and waited for a CPU, where the kernel keeps it."""
        _, _, pressure = self.cpu_files()
        try:
            return read_pressure(_read(pressure)) if pressure else None
        except OSError:
            return None

    def stopped(self) -> bool:
        """Whether the kernel killed a process of the group at its memory limit."""
        name = "memory.events" if self.kind == "cgroup v2" else "memory.oom_control"
        try:
            for line in _read(os.path.join(self.memory, name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit():
                    return int(value) > 0
        except OSError:
            pass
        return False

    def remove(self) -> None:
        """Remove the group once its processes are gone (the zygote swept them; exit takes a moment)."""
        for folder in reversed(self._folders()):
            for _ in range(200):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def read_usage(text: str, scale: float) -> float:
    """Seconds of CPU from `cpu.stat` (its `usage_usec` line) or `cpuacct.usage` (one number)."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if not value and key.strip().isdigit():
            return int(key) * scale
        if key == "usage_usec" and value.strip().isdigit():
            return int(value) * scale
    raise OSError(0, "no CPU usage in the group's file")


def read_pressure(text: str) -> float:
    """Seconds some task waited for a CPU, from the `some ... total=µs` line of `cpu.pressure`."""
    for line in text.splitlines():
        if line.startswith("some "):
            for field in line.split():
                if field.startswith("total=") and field[6:].isdigit():
                    return int(field[6:]) * 1e-6
    raise OSError(0, "no stall total in the group's pressure file")


class Accounting:
    """Where a zygote makes its samples' groups: a folder of its own under its cgroup."""

    def __init__(self, kind: str, memory: str, pids: str | None, cpu: str | None = None,
                 cpu_kind: str | None = None) -> None:
        self.kind, self.memory, self.pids = kind, memory, pids
        self.cpu, self.cpu_kind = cpu, cpu_kind  # where its groups' CPU is counted (see `Group`)
        self._count = 0

    @classmethod
    def find(cls) -> tuple[Accounting | None, str | None]:
        """The zygote's accounting, or (None, why not)."""
        if os.getuid() != 0:
            return None, "not root"
        name = f"paperproof-{os.getpid()}"
        v2, v1 = _mounts()
        why = "no cgroup hierarchy with the memory controller"
        own_memory, own_v2 = _own("memory"), _own("")
        if "memory" in v1 and own_memory is not None:
            memory = os.path.join(v1["memory"] + own_memory, name)
            pids = os.path.join(v1["pids"] + (_own("pids") or "/"), name) if "pids" in v1 else None
            try:
                _clear_stale(os.path.dirname(memory))
                os.makedirs(memory, exist_ok=True)
                if pids is not None:
                    _clear_stale(os.path.dirname(pids))
                    os.makedirs(pids, exist_ok=True)
                return cls("cgroup v1", memory, pids, *_cpu_base(name, v2, own_v2, v1)), None
            except OSError as exc:
                why = f"cgroup v1: {exc.strerror}"
        if v2 is not None and own_v2 is not None:
            own = v2 + own_v2
            try:
                controllers = _read(os.path.join(own, "cgroup.controllers")).split()
                if "memory" not in controllers:
                    return None, "cgroup v2 without the memory controller here"
                wanted = " ".join(f"+{c}" for c in ("memory", "pids") if c in controllers)
                _write(os.path.join(own, "cgroup.subtree_control"), wanted)  # refused where own has processes
                base = os.path.join(own, name)
                _clear_stale(own)
                os.makedirs(base, exist_ok=True)
                _write(os.path.join(base, "cgroup.subtree_control"), wanted)
                return (cls("cgroup v2", base, base if "pids" in controllers else None, base, "cgroup v2"),  # pids: a marker
                        None)
            except OSError as exc:
                why = f"cgroup v2: {exc.strerror}"
        return None, why

    def group(self, memory_bytes: int, tasks: int) -> Group:
        """A new group for one sample, with its limits written; OSError when the kernel refuses."""
        self._count += 1
        name = f"run-{self._count}"
        memory = os.path.join(self.memory, name)
        pids = os.path.join(self.pids, name) if self.pids is not None else None
        if self.kind == "cgroup v2":  # one folder holds both controllers, and counts its CPU
            os.mkdir(memory)
            _write(os.path.join(memory, "memory.max"), str(memory_bytes))
            if os.path.exists(os.path.join(memory, "memory.swap.max")):
                _write(os.path.join(memory, "memory.swap.max"), "0")
            if self.pids is not None:
                _write(os.path.join(memory, "pids.max"), str(tasks))
            return Group(self.kind, memory, None, memory, "cgroup v2")
        os.mkdir(memory)
        _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_bytes))
        swap = os.path.join(memory, "memory.memsw.limit_in_bytes")
        if os.path.exists(swap):
            _write(swap, str(memory_bytes))
        if pids is not None:
            os.mkdir(pids)
            _write(os.path.join(pids, "pids.max"), str(tasks))
        cpu = os.path.join(self.cpu, name) if self.cpu is not None else None
        if cpu is not None:
            try:
                os.mkdir(cpu)
            except OSError:
                cpu = None  # its CPU is then counted from its processes (`runner.meter`)
        return Group(self.kind, memory, pids, cpu, self.cpu_kind if cpu else None)

    def close(self) -> None:
        for folder in dict.fromkeys((self.cpu, self.pids, self.memory)):
            if folder is not None:
                try:
                    os.rmdir(folder)
                except OSError:
                    pass


def _cpu_base(name: str, v2: str | None, own_v2: str | None, v1: dict[str, str]) -> tuple[str | None, str | None]:
    """Where a v1 zygote counts its samples' CPU: the unified hierarchy when it is mounted beside v1
    (it has the CPU wait as well), else `cpuacct`; (None, None) where neither will make a folder."""
    places = []
    if v2 is not None and own_v2 is not None:
        places.append((os.path.join(v2 + own_v2, name), "cgroup v2"))
    own = _own("cpuacct")
    if "cpuacct" in v1 and own is not None:
        places.append((os.path.join(v1["cpuacct"] + own, name), "cgroup v1"))
    for folder, kind in places:
        try:
            _clear_stale(os.path.dirname(folder))
            os.makedirs(folder, exist_ok=True)
            return folder, kind
        except OSError:
            continue
    return None, None
