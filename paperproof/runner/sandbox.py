"""Isolation layers for one sample, applied in the forked child before any sample code runs.

Layers, each reported, each with its fallback stated when the kernel refuses it:
- namespaces: network (loopback only), PID (the reaper's: the run is killed as a whole), mount,
  IPC, UTS; a user namespace is tried when we are not root;
- filesystem: a fresh root on tmpfs holding only read-only binds of the system and Python trees and
  the checkout; the working directory, `/tmp` and `/dev/shm` are private size-capped tmpfs mounts,
  so nothing a sample writes reaches the host's disk; the checkout's top-level entries are bound
  read-only into the working directory too, and no link of the checkout is followed (`nosymfollow`);
- user: an unprivileged uid per worker slot, so concurrent samples cannot signal each other, and
  the parent-death signal re-armed after the uid change (the kernel clears it then);
- system calls: a seccomp deny list (`seccomp`);
- resource limits: CPU seconds (a safety net: the run's CPU budget is kept by its harness over all its
  processes together, `meter`), address space, open files, processes, file size;
- memory of all its processes together (heap, memfd, shared memory, its tmpfs files): a cgroup per
  sample (`cgroup`); without one, `memfd_create` is refused and SysV shared memory is capped;
- environment: nothing from the host (no tokens), a minimal PATH, HOME in the working directory.
Samples run in the PID namespace of a `Reaper`, which kills whatever a run leaves behind; without
one (not root), `sweep` kills every process of the slot's uid instead.

Standard library only (ctypes for the kernel calls Python does not wrap): this runs at the trust boundary.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import resource
import socket
import stat
import struct
import sys
from dataclasses import asdict, dataclass, field

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOSYMFOLLOW, ST_NOSYMFOLLOW = 256, 0x2000  # Linux 5.10: no link on the mount is followed
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE, PR_SET_THP_DISABLE = 1, 38, 4, 41
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

SANDBOX_ROOT = "/sandbox"  # where the private working directory appears inside the new root
WORK = SANDBOX_ROOT + "/work"  # the working directory of a run inside the new root
BASE_UID = 61000  # worker slot k runs as uid BASE_UID + k

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


@dataclass(frozen=True)
class Limits:
    """Per-sample limits. Address space is added to what the warm zygote already maps.

    Time is CPU time, a case at a time: `cpu_seconds` is what one case may spend (its processes and their
    children, and the harness while it runs), the same on a quiet machine and on a busy one, and a case that
    spends it ends the run. A budget per case, not per run, keeps where a run ends away from the sum of its
    cases: on a busy machine each case's CPU time grows a little (caches, preemption), and a run-wide budget
    would end a little earlier, in another case. `wall_seconds` is each case's backstop, four times the budget,
    which only a case that sleeps or waits meets on its own; where the run's processes spent a quarter of it
    waiting for a CPU, the machine's load met it instead, and the run is tried again, never judged (`meter`)."""

    wall_seconds: float = 80.0
    cpu_seconds: float = 20.0  # the old per-case CPU limit was 15 s, within a run's 20 s of wall-clock time
    address_space: int = 2 * 1024**3
    open_files: int = 256
    processes: int = 64
    file_size: int = 16 * 1024**2  # stdout, stderr and the report are files: each is capped by this
    output_bytes: int = 16 * 1024**2  # the report read back from the child
    record_bytes: int = 2 * 1024**2  # one report line: a case whose summary is larger is unserialisable
    value_bytes: int = 256 * 1024**2  # a returned value larger than this is not summarised
    scratch_bytes: int = 64 * 1024**2  # each private tmpfs: the working directory, /tmp, /dev/shm
    memory_bytes: int = 3 * 1024**3  # all the sample's processes together, every page they charge (`cgroup`)

    def run_backstop(self, cases: int) -> float:
        """The wall-clock time a whole run of `cases` cases may take: each case's backstop, and one more for
        the harness's setting up."""
        return self.wall_seconds * (max(1, cases) + 1)


@dataclass
class IsolationReport:
    network: str = "none"
    pid: str = "process_group"
    filesystem: str = "none"
    user: str = "same"
    syscalls: str = "none"
    fallbacks: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(
        source.encode() if source else None, target.encode(), fstype.encode() if fstype else None,
        ctypes.c_ulong(flags), data.encode() if data else None,
    ), f"mount {target}")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), "prctl")


def loopback_up() -> None:
    """A new network namespace has `lo` down; bring it up so local-only code still works."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


class Reaper:
    """PID 1 of a PID namespace the zygote keeps for its samples, forked once before the warm
    imports (so it is small). Each sample is forked straight into that namespace (`enter`),
    so it is PID 2 or more with ordinary signal semantics (a PID 1 would ignore the SIGXCPU,
    SIGXFSZ and SIGALRM the kernel sends it) and sees only its own processes; whatever it
    leaves behind, detached grandchildren included, is adopted by the reaper and killed by
    `sweep` after the run. One fork per sample: forking the warm zygote is the dearest step.
    Runs of one zygote are sequential, so they share the namespace but never meet in it.
    Needs root; `Reaper.start` returns None where it cannot be had.
    """

    def __init__(self, pid: int, namespace: int, own: int, commands: int, acks: int) -> None:
        self.pid, self._namespace, self._own, self._commands, self._acks = pid, namespace, own, commands, acks

    @classmethod
    def start(cls) -> Reaper | None:
        if os.getuid() != 0:
            return None
        try:
            own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            unshare(CLONE_NEWPID)
        except OSError:
            return None
        command_read, command_write = os.pipe()
        ack_read, ack_write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            try:
                _reap_forever(command_read, ack_write)
            finally:
                os._exit(0)
        _check(_libc.setns(own, CLONE_NEWPID), "setns")  # the zygote's own children stay in its namespace
        if pid < 0:
            return None
        os.close(command_read)
        os.close(ack_write)
        namespace = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        return cls(pid, namespace, own, command_write, ack_read)

    def alive(self) -> bool:
        try:
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            return False

    def enter(self) -> None:
        """Make the zygote's next child a process of the reaper's namespace; `leave` after the fork,
        in the zygote only (the child stays, and so do all its descendants)."""
        _check(_libc.setns(self._namespace, CLONE_NEWPID), "setns")

    def leave(self) -> None:
        _check(_libc.setns(self._own, CLONE_NEWPID), "setns")

    def release(self) -> None:
        """Close the zygote's ends, once the reaper has died and is being replaced."""
        for fd in (self._commands, self._acks, self._namespace, self._own):
            os.close(fd)

    def sweep(self) -> bool:
        """Kill every process of the namespace but the reaper; returns once all are gone."""
        try:
            os.write(self._commands, b"k")
            return os.read(self._acks, 1) == b"k"
        except OSError:
            return False


def _reap_forever(commands: int, acks: int) -> None:
    """The reaper's life: orphans are reaped by the kernel (SIGCHLD ignored); on each command,
    SIGKILL everything else in the namespace until nothing is left, then acknowledge."""
    import signal
    import time

    die_with_parent(0)  # the zygote lies outside the namespace, so getppid() is 0 here
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in range(0, 3):
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    keep = sorted((commands, acks))
    os.closerange(3, keep[0])
    os.closerange(keep[0] + 1, keep[1])
    os.closerange(keep[1] + 1, os.sysconf("SC_OPEN_MAX"))
    while os.read(commands, 1):
        for _ in range(10_000):  # a fork bomb may fork between two signals: repeat until none is left
            try:
                os.kill(-1, 9)
            except ProcessLookupError:
                break
            time.sleep(0.0005)
        try:
            while True:
                os.waitpid(-1, 0)  # with SIGCHLD ignored: blocks until every child is gone
        except ChildProcessError:
            pass
        os.write(acks, b"k")


def enter_namespaces(report: IsolationReport, pid_namespace: bool) -> bool:
    """Unshare network, mount, IPC and UTS namespaces; returns whether they hold. The PID
    namespace is the reaper's (`pid_namespace` says whether the sample is in one).

    As root the namespaces are made directly; otherwise inside a new user namespace. Whatever
    the kernel refuses is written to the report's fallbacks.
    """
    flags = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS
    uid, gid = os.getuid(), os.getgid()
    if pid_namespace:
        report.pid = "namespace"
    else:
        report.fallbacks.append("no PID namespace (needs root): confined to its process group, no /proc; "
                                "other processes of the invoking user can be signalled")
    try:
        if uid == 0:
            unshare(flags)
        else:
            unshare(flags | CLONE_NEWUSER)
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"0 {uid} 1")
            _write("/proc/self/gid_map", f"0 {gid} 1")
    except OSError as exc:
        report.fallbacks.append(f"namespaces refused ({exc.strerror}): network not isolated, no private filesystem")
        return False
    try:
        loopback_up()
    except OSError as exc:
        report.fallbacks.append(f"loopback not brought up ({exc.strerror})")
    report.network = "namespace"
    return True


def cap_shared_memory(limits: Limits, report: IsolationReport) -> None:
    """SysV shared memory of the sample's own IPC namespace capped at its memory limit in all (segments
    outlive the process that made them, and no process need map them). Call only inside that namespace."""
    page = resource.getpagesize()
    try:
        _write("/proc/sys/kernel/shmmax", str(limits.memory_bytes))
        _write("/proc/sys/kernel/shmall", str(max(1, limits.memory_bytes // page)))
    except OSError as exc:
        report.fallbacks.append(f"SysV shared memory not capped ({exc.strerror})")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _bind(source: str, target_root: str, writable: bool = False) -> None:
    """Bind `source` at the same path under the new root, read-only unless `writable`."""
    target = target_root + source
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    mount(source, target, None, MS_BIND | MS_REC)
    if not writable:
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def python_trees() -> list[str]:
    """Directories the interpreter needs to keep importing: prefixes and every sys.path entry."""
    trees = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    trees.update(p for p in sys.path if p and os.path.isdir(p))
    # Keep only the outermost of nested trees.
    ordered = sorted(os.path.realpath(t) for t in trees)
    outer: list[str] = []
    for tree in ordered:
        if not any(tree == o or tree.startswith(o + os.sep) for o in outer):
            outer.append(tree)
    return outer


SYSTEM_TREES = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
GPU_TREES = ("/sys",)  # read-only: the CUDA driver reads PCI topology there


def gpu_devices() -> list[str]:
    try:
        return sorted(f"/dev/{name}" for name in os.listdir("/dev") if name.startswith("nvidia"))
    except OSError:
        return []


def gpu_present() -> bool:
    """Whether this machine has a GPU to hand a run (a numbered device node), read without initialising CUDA."""
    return any(d.removeprefix("/dev/nvidia").isdigit() for d in gpu_devices())


def _tmpfs(target: str, size: int, mode: str, owner: int | None = None) -> None:
    os.makedirs(target, exist_ok=True)
    options = f"size={size},mode={mode}" + (f",uid={owner},gid={owner}" if owner is not None else "")
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def private_root(read_only: list[str], new_root: str, report: IsolationReport, owner: int | None,
                 scratch_bytes: int, gpu: bool = False, fallback_dir: str | None = None, proc: bool = True,
                 checkout: str | None = None) -> str:
    """Build a fresh root on tmpfs and chroot into it; returns the working directory inside it.

    `new_root` is an empty directory; the tmpfs mounted on it exists only in this mount namespace.
    Only system trees, Python trees, `read_only` paths and the `checkout` are visible, all read-only. The
    working directory (`/sandbox/work`, owned by `owner`), `/tmp` and `/dev/shm` are fresh tmpfs
    mounts of `scratch_bytes` each: private, and unable to fill the host's disk. `/tmp` is
    mounted before the binds, so a snapshot that lies under the host's /tmp stays visible.
    `/proc` is mounted only with a PID namespace (`proc`): it would show the host's processes.
    The checkout is bound at its own path (its modules' `__file__`) and its top-level entries again in the
    working directory, so that code opening what its repository ships, by `__file__` or relative to the
    repository's root, finds it (`_show_checkout`).
    """
    try:
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
        _tmpfs(new_root + "/tmp", scratch_bytes, "1777")
        trees = [*SYSTEM_TREES, *python_trees(), *read_only, *(GPU_TREES if gpu else ())]
        trees = [os.path.realpath(tree) if tree not in SYSTEM_TREES else tree for tree in trees if os.path.exists(tree)]
        inner = [t for t in trees if checkout is not None and _under(t, os.path.realpath(checkout))
                 and t != os.path.realpath(checkout)]
        for tree in (t for t in trees if t not in inner):
            _bind(tree, new_root)
        if checkout is not None:  # over the trees that hold it, under those it holds (a `.venv` of the checkout)
            _bind_checkout(checkout, new_root + os.path.abspath(checkout), report)
        for tree in inner:
            _bind(tree, new_root)
        for device in (*DEVICES, *(gpu_devices() if gpu else ())):
            if os.path.exists(device):
                _bind(device, new_root, writable=True)
        _tmpfs(new_root + "/dev/shm", scratch_bytes, "1777")
        inside = WORK
        _tmpfs(new_root + inside, scratch_bytes, "700", owner)
        if checkout is not None:
            _show_checkout(os.path.abspath(checkout), new_root, new_root + inside, report)
        os.makedirs(new_root + "/proc", exist_ok=True)
        try:
            if proc:
                mount("proc", new_root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError as exc:
            report.fallbacks.append(f"no /proc in the sandbox ({exc.strerror})")
        mount(None, new_root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.chroot(new_root)
        os.chdir(inside)
    except OSError as exc:
        report.fallbacks.append(f"private filesystem refused ({exc.strerror}); host filesystem visible")
        if fallback_dir is not None:
            os.chdir(fallback_dir)
        return os.getcwd()
    report.filesystem = "read_only"
    return inside


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


CHECKOUT_NAMES = 512  # top-level entries of a checkout shown in the working directory, the first by name
CHECKOUT_SCAN = 200_000  # entries of its top level read at most, as the builder's walks (`catalogue.checkout`)


def _seal(target: str, report: IsolationReport) -> None:
    """Make a bind read-only, without set-uid or devices, and following no link on it. A kernel without
    `nosymfollow` (before 5.10) ignores the flag: it is looked for afterwards, and its absence reported."""
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOSYMFOLLOW)
    if not os.statvfs(target).f_flag & ST_NOSYMFOLLOW:
        line = "links in the checkout are followed (the kernel has no nosymfollow mounts): one reaches what the sandbox shows"
        if line not in report.fallbacks:
            report.fallbacks.append(line)


def _bind_checkout(checkout: str, target: str, report: IsolationReport) -> None:
    """The checkout, read-only at its own path: not recursive, so nothing mounted inside it on the host comes
    along, and sealed (`_seal`), so a link in it pointing out (to `/etc/passwd`, to the builder's files) or in
    resolves to nothing: an open through it fails with ELOOP."""
    os.makedirs(target, exist_ok=True)
    mount(os.path.realpath(checkout), target, None, MS_BIND)
    _seal(target, report)


def _show_checkout(checkout: str, new_root: str, work: str, report: IsolationReport) -> None:
    """Each top-level entry of the checkout, bound read-only (and sealed) at the same name in the working
    directory, as when code runs from its repository's root: `open("data/train.csv")` finds the file shipped
    there, writing into it fails, and writing a new name beside it succeeds in the private tmpfs. A link is
    shown as a link to the checkout's own entry, which the checkout's seal does not follow; fifos, sockets and
    devices are left out. Binds are made from the sealed bind of the checkout, so a name swapped for a link
    meanwhile is refused, never followed. What cannot be shown is reported, and the run goes on."""
    source = new_root + checkout
    try:
        names: list[str] = []
        with os.scandir(source) as found:
            for entry in found:
                names.append(entry.name)
                if len(names) >= CHECKOUT_SCAN:
                    break
        shown = sorted(name for name in names if name not in RESERVED)
        if len(shown) > CHECKOUT_NAMES:
            report.fallbacks.append(f"only the first {CHECKOUT_NAMES} of the checkout's {len(shown)} top-level "
                                    "entries are in the working directory")
        for name in shown[:CHECKOUT_NAMES]:
            mode = os.lstat(os.path.join(source, name)).st_mode
            target = os.path.join(work, name)
            if stat.S_ISLNK(mode):
                os.symlink(os.path.join(checkout, name), target)
                continue
            if stat.S_ISDIR(mode):
                os.mkdir(target, 0o755)
            elif stat.S_ISREG(mode):
                os.mknod(target, 0o644 | stat.S_IFREG)
            else:
                continue
            mount(os.path.join(source, name), target, None, MS_BIND)
            _seal(target, report)
    except OSError as exc:
        report.fallbacks.append(f"the checkout's files are not all in the working directory ({exc.strerror}): "
                                "relative opens may not find what the repository ships")


def drop_privileges(uid: int, report: IsolationReport, host_root: bool) -> None:
    """Become an unprivileged uid (one per worker slot) with no supplementary groups."""
    if not host_root:
        report.fallbacks.append("not root: runs as the invoking user, confined by the namespaces")
        return
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as exc:
        report.fallbacks.append(f"could not drop privileges ({exc.strerror})")
        return
    report.user = "unprivileged"


def mapped_bytes() -> int:
    """Address space this process has mapped (read before the private root, which may lack /proc)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * resource.getpagesize()


def apply_limits(limits: Limits, mapped: int, report: IsolationReport, gpu: bool = False) -> None:
    """Resource limits; the address-space cap is on top of `mapped` (the warm libraries). With a
    GPU there is none (stated in the report): CUDA reserves its virtual address space up front."""
    cpu = max(1, int(limits.cpu_seconds + 0.999))
    wanted = {
        resource.RLIMIT_CPU: (cpu, cpu + 1),
        **({} if gpu else {resource.RLIMIT_AS: (mapped + limits.address_space,) * 2}),
        resource.RLIMIT_NOFILE: (limits.open_files,) * 2,
        resource.RLIMIT_NPROC: (limits.processes,) * 2,
        resource.RLIMIT_FSIZE: (limits.file_size,) * 2,
        resource.RLIMIT_CORE: (0, 0),
    }
    if gpu:
        report.fallbacks.append("no address-space limit: CUDA reserves its virtual address space up front")
    for which, (soft, hard) in wanted.items():
        current_soft, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))
    # No transparent huge pages: the kernel's work to back a large allocation with them (finding free 2 MB
    # blocks in the host's memory) counts as the sample's CPU time. With them, tests/hostile/memory_bomb.py
    # met the CPU limit before the address-space one on a host with a full page cache: the limit a sample
    # meets would depend on the host's memory, not on what the sample did.
    try:
        prctl(PR_SET_THP_DISABLE, 1)
    except OSError as exc:
        report.fallbacks.append(f"transparent huge pages left on ({exc.strerror})")


CACHES = ".paperproof-caches"  # where libraries keep their caches in a run (fonts, matplotlib): not the sample's writes
# The harness's own names in the working directory (its scratch folder for planted runs, the streams of the run
# where it has no private root, the font configuration, the libraries' caches): a checkout's entry of the same
# name is not shown there, and none of them is reported as written by a sample.
RESERVED = frozenset({"paperproof-run", "stdout", "stderr", ".fonts.conf", CACHES})
FONT_CONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig><dir>/usr/share/fonts</dir><dir>/usr/local/share/fonts</dir><cachedir>{cache}</cachedir></fontconfig>
"""


def write_font_config(home: str) -> str:
    """A fontconfig whose cache is in the run's own working folder. Plotting libraries a module imports at its
    top level (matplotlib, seaborn) build a font cache; with the system's configuration fontconfig would try to
    write `/var/cache/fontconfig`, read-only here, and the sample would be charged with that attempt. Written by
    the harness before its system-call filter is loaded."""
    path = os.path.join(home, ".fonts.conf")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(FONT_CONFIG.format(cache=os.path.join(home, CACHES, "fontconfig")))
    return path


# Every numerical library on one thread: the budget is CPU time of the sample's processes, and a pool of threads
# spinning on a few cores would spend it faster than the work does (TensorFlow sizes its pools to the machine).
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
              "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def clean_environment(home: str) -> None:
    """Nothing from the host survives: no tokens, no proxies, no credentials."""
    os.environ.clear()
    os.environ.update({
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_PROXY": "*",
        **ONE_THREAD,
    })
    caches = os.path.join(home, CACHES)
    os.environ.update({"XDG_CACHE_HOME": caches, "XDG_CONFIG_HOME": os.path.join(caches, "config"),
                       "MPLCONFIGDIR": os.path.join(caches, "matplotlib")})
    fonts = os.path.join(home, ".fonts.conf")
    if os.path.exists(fonts):
        os.environ["FONTCONFIG_FILE"] = fonts


def die_with_parent(parent: int) -> None:
    """SIGKILL when the parent dies. Set again after a uid change: the kernel clears it then."""
    prctl(PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:  # the parent already went: do not outlive it
        os._exit(70)


def default_signals() -> None:
    """Python ignores SIGXFSZ and SIGPIPE; a sample gets the kernel's defaults, so that passing
    the file-size cap ends it (recorded as `output_limit`) instead of failing writes silently."""
    import signal

    for number in (signal.SIGXFSZ, signal.SIGPIPE):
        signal.signal(number, signal.SIG_DFL)


def sweep(uid: int) -> None:
    """Kill every process of `uid`, wherever it hides (detached, in any namespace): a forked
    helper takes that uid and signals all it may. Only as root, and only for sandbox uids."""
    if os.getuid() != 0 or uid < BASE_UID:
        return
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, 9)
        except OSError:
            pass
        os._exit(0)
    os.waitpid(pid, 0)
