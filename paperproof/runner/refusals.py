"""What the sandbox refused a case, in the words a page shows: the sandbox layer an exception hit
(`blocked_by`, from the fields `child._describer` sends), the line for it (`attempt_line`), the
line for a system call the filter handed over (`call_line`, and for an open, where it pointed:
`opened_path`, `read_only`), and the network namespace's counters that move on a refused
connection (`net_counters`). The harness (`runner.harness`) records them; nothing here runs
sample code.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from paperproof.runner import sandbox
from paperproof.runner.checkout_paths import Located

NETWORK_ERRNOS = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED, errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT}
FS_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
# counters of the run's own network namespace that move when a connection is refused or has no route
AT_FDCWD = 0xFFFFFF9C  # -100 as the kernel passes it, low 32 bits
NET_COUNTERS = {("Ip", "OutNoRoutes"), ("Tcp", "AttemptFails"), ("Udp", "NoPorts"), ("Ip6", "OutNoRoutes"), ("Udp6", "NoPorts")}
SOCKET_FAMILIES = {16: "netlink", 17: "packet", 4: "IPX", 5: "AppleTalk", 9: "X.25", 29: "CAN", 31: "Bluetooth",
                   38: "kernel crypto", 40: "vsock", 44: "XDP"}
CALL_KINDS = {
    **dict.fromkeys(("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp"), "to inspect another process"),
    **dict.fromkeys(("mount", "umount2", "pivot_root", "chroot", "mount_setattr", "move_mount", "open_tree", "fsopen",
                     "fsconfig", "fsmount", "fspick"), "to change the mounts"),
    **dict.fromkeys(("unshare", "setns", "clone"), "to make or enter namespaces"),
    **dict.fromkeys(("io_uring_setup", "io_uring_enter", "io_uring_register"), "to use io_uring"),
    **dict.fromkeys(("keyctl", "add_key", "request_key"), "to use the kernel keyrings"),
}


def mib(size: float) -> str:
    return f"{size / 1024**2:g} MiB"


def blocked_by(info: dict, limits: sandbox.Limits, locate: Callable[[str], Located] | None = None) -> str | None:
    """Name the sandbox layer an exception (as `child._describer` described it) hit, if it did. A name that
    could not be opened is looked up in the checkout (`locate`, `checkout_paths.locate`): the sandbox "does not
    hold" only what the repository does not ship."""
    number, filename, message = info.get("errno"), info.get("filename"), str(info.get("message", ""))
    if info.get("gaierror"):
        return "network: name resolution is not available in the sandbox"
    if info.get("memory_error") or (info.get("runtime_error") and "can't allocate memory" in message):
        return f"memory: allocation refused at the address-space limit ({mib(limits.address_space)} above the runner's own)"
    if info.get("runtime_error") and "can't start new thread" in message:
        return f"processes: no thread could be started (limit of {limits.processes} processes and threads)"
    if not info.get("os_error") or number is None:
        return None
    if number in NETWORK_ERRNOS and filename is None:
        return f"network: {os.strerror(number)}"
    if number == errno.EAGAIN and filename is None:
        return f"processes: no process could be started (limit of {limits.processes} processes and threads)"
    if number in (errno.EMFILE, errno.ENFILE):
        return f"open files: limit of {limits.open_files} reached"
    if number == errno.EFBIG:
        return f"files: the file-size cap of {mib(limits.file_size)} was reached"
    if number == errno.ENOSPC:
        return f"disk: the sandbox's {mib(limits.scratch_bytes)} of private space is full"
    if filename and (info.get("not_found") or number == errno.ELOOP) and locate is not None:
        found = locate(str(filename))
        if found.kind == "link":
            through = "" if found.path == found.name else f" through {found.path}"
            return f"link of the repository not followed in the sandbox: {found.name}{through}"
        if found.kind == "shipped" and info.get("not_found"):
            return f"file opened from another folder: {filename}, which the repository ships as {found.path}"
    if info.get("not_found"):
        return f"file not available in the sandbox: {filename}"
    if number == errno.EROFS:
        return f"filesystem: {shown_path(str(filename)) if filename else 'the target'} is read-only in the sandbox"
    if number in FS_ERRNOS and filename:
        return f"filesystem: access to {filename} is denied in the sandbox"
    if number in FS_ERRNOS:
        return f"privileges: operation not permitted in the sandbox ({os.strerror(number)})"
    return None


def shown_path(path: str) -> str:
    """A path as a refusal shows it: normalised, and a name in the working directory (which shows the checkout's
    root) relative to it, so that an open the filter handed over and the exception it raised give one line."""
    path = os.path.normpath(path)
    return path[len(sandbox.WORK) + 1:] if path.startswith(sandbox.WORK + os.sep) else path


def attempt_line(blocked: str) -> str:
    """The plain line a page shows for a refusal named by `blocked_by`."""
    kind, _, detail = blocked.partition(": ")
    if kind == "network":
        return "tried to open a network connection (blocked)"
    if kind == "filesystem" and detail.endswith(" is read-only in the sandbox"):
        return f"tried to write {detail.removesuffix(' is read-only in the sandbox')}, which is read-only (blocked)"
    if kind == "filesystem":
        return f"tried to read {detail.removeprefix('access to ').removesuffix(' is denied in the sandbox')} (blocked)"
    if kind == "privileges":
        return "tried an operation that needs privileges (blocked)"
    if kind.startswith("file not available"):
        return f"tried to open {detail}, which the sandbox does not hold (blocked)"
    if kind.startswith("file opened from another folder"):
        return f"tried to open {detail}, from the repository's root, where the run works (blocked)"
    if kind.startswith("link of the repository"):
        return f"tried to open {detail}, a link of the repository, which the sandbox does not follow (blocked)"
    return f"reached a limit of the sandbox: {blocked} (blocked)"


def call_line(name: str, args: tuple[int, ...]) -> str:
    if name == "socket":
        family = SOCKET_FAMILIES.get(args[0], f"family {args[0]}")
        return f"tried to open a {family} socket (blocked)"
    return f"tried {CALL_KINDS.get(name, 'a system call the sandbox denies')} ({name}, blocked)"


def net_counters() -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    try:
        with open("/proc/self/net/snmp") as handle:
            lines = handle.read().splitlines()
        for names, values in zip(lines[::2], lines[1::2]):
            group = names.split(":")[0]
            for name, value in zip(names.split()[1:], values.split()[1:]):
                if (group, name) in NET_COUNTERS:
                    counts[(group, name)] = int(value)
        with open("/proc/self/net/snmp6") as handle:
            for line in handle:
                key, _, value = line.partition(" ")
                for group in ("Ip6", "Udp6"):
                    if key.startswith(group) and (group, key[len(group):]) in NET_COUNTERS:
                        counts[(group, key[len(group):])] = int(value)
    except (OSError, ValueError):
        pass
    return counts


def opened_path(pid: int, name: str, args: tuple[int, ...]) -> str | None:
    """The absolute path an open names, read from the calling process's memory (it is blocked in
    the call) and joined to its working directory or the directory descriptor it gave."""
    address = args[1] if name == "openat" else args[0]
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
            memory.seek(address)
            raw = memory.read(4096).split(b"\0", 1)[0]
        path = os.fsdecode(raw)
        if not os.path.isabs(path):
            dirfd = args[0] & 0xFFFFFFFF
            base = f"/proc/{pid}/cwd" if name != "openat" or dirfd == AT_FDCWD else f"/proc/{pid}/fd/{dirfd}"
            path = os.path.join(os.readlink(base), path)
        return os.path.normpath(path)
    except (OSError, ValueError, OverflowError):
        return None


def read_only(path: str) -> bool:
    """Whether `path` (or the nearest directory above it that exists) lies on a read-only mount."""
    probe = path
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    try:
        return bool(os.statvfs(probe or "/").f_flag & os.ST_RDONLY)
    except OSError:
        return False
