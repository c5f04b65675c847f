"""The system-call layer: a seccomp filter, built once in the zygote and loaded in each sample.

Default allow, with a deny list: the calls a research function never needs and an attacker
wants (debugging other processes, mounting, new namespaces, kernel keyrings, BPF, perf, module
loading, rebooting, io_uring which bypasses this filter), and socket families other than
AF_UNIX, AF_INET and AF_INET6. A denied call fails with EPERM (EAFNOSUPPORT for sockets), so
sample code sees an ordinary OSError that the child reports as `blocked`. `clone3` answers
ENOSYS so that the C library falls back to `clone`, whose namespace flags are filtered. Where no
cgroup accounts a sample's memory (`cgroup`), `memfd_create` is denied too: its pages count against
no other limit.

With `notify`, the denied calls are not refused by the kernel alone: each one is handed to the
process that loaded the filter (the harness, which makes no such call itself) through a
listener descriptor, recorded there, and answered with the same error. So what a sample tried
is known to a process it cannot reach, even when it catches the error. `Listener` does that.

libseccomp is reached through ctypes (standard library only at the trust boundary); where it is
missing or refuses, the run record says so and the other layers still hold.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import struct

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_NOTIFY = 0x7FC00000
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # SECCOMP_IOCTL_NOTIF_RECV / _SEND on x86-64 and arm64
SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_MASKED_EQ = 4, 5, 7

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "mount_setattr", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "kexec_load", "kexec_file_load", "reboot", "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "acct", "quotactl", "syslog", "lookup_dcookie", "fanotify_init",
    "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "vhangup",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
OPENS = {"open": 1, "openat": 2, "creat": None}  # call -> index of its flags (creat always writes)
WRITE_FLAGS = (0o1, 0o2, 0o100, 0o1000)  # O_WRONLY, O_RDWR, O_CREAT, O_TRUNC
ALLOWED_FAMILIES = (1, 2, 10)  # AF_UNIX, AF_INET, AF_INET6
MAX_FAMILY = 46  # AF_MAX on current kernels; anything above is refused by one rule


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class Filter:
    """A filter context prepared in the zygote; `load` installs it in the calling process."""

    def __init__(self, notify: bool = False, deny_memfd: bool = False) -> None:
        self.error: str | None = None
        self.notify = notify
        self.deny_memfd = deny_memfd  # where no cgroup counts memfd pages against the sample's memory
        self.names: dict[int, str] = {}  # syscall number -> name, for the calls that notify
        self._lib: ctypes.CDLL | None = None
        self._ctx: int | None = None  # the scmp_filter_ctx pointer seccomp_init returns
        try:
            self._prepare()
        except OSError as exc:
            self.error = str(exc)

    def _prepare(self) -> None:
        name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
        lib = ctypes.CDLL(name, use_errno=True)
        lib.seccomp_init.restype = ctypes.c_void_p
        lib.seccomp_init.argtypes = [ctypes.c_uint32]
        lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
        lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        lib.seccomp_load.argtypes = [ctypes.c_void_p]
        lib.seccomp_notify_fd.argtypes = [ctypes.c_void_p]
        ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
        if not ctx:
            raise OSError(errno.ENOMEM, "seccomp_init failed")
        self._lib, self._ctx = lib, ctx
        deny = SCMP_ACT_NOTIFY if self.notify else _errno_action(errno.EPERM)
        for call in DENIED:
            self._rule(deny, call)
        if self.deny_memfd:
            self._rule(deny, "memfd_create")
        self._rule(_errno_action(errno.ENOSYS), "clone3")
        for flag in NAMESPACE_FLAGS:
            self._rule(deny, "clone", (0, SCMP_CMP_MASKED_EQ, flag, flag))
        refuse = SCMP_ACT_NOTIFY if self.notify else _errno_action(errno.EAFNOSUPPORT)
        for family in range(0, MAX_FAMILY + 1):
            if family not in ALLOWED_FAMILIES:
                self._rule(refuse, "socket", (0, SCMP_CMP_EQ, family, 0))
        self._rule(refuse, "socket", (0, SCMP_CMP_GE, MAX_FAMILY + 1, 0))
        if self.notify:  # opens for writing: the harness looks at where, then lets the kernel decide
            for call, index in OPENS.items():
                if index is None:  # a call that always writes
                    self._rule(SCMP_ACT_NOTIFY, call)
                    continue
                for write_flag in WRITE_FLAGS:
                    self._rule(SCMP_ACT_NOTIFY, call, (index, SCMP_CMP_MASKED_EQ, write_flag, write_flag))

    def _rule(self, action: int, call: str, *conditions: tuple[int, int, int, int]) -> None:
        lib, ctx = self._lib, self._ctx
        if lib is None or ctx is None:
            raise OSError(errno.EINVAL, f"seccomp rule for {call} added before seccomp_init")
        number = lib.seccomp_syscall_resolve_name(call.encode())
        if number < 0:
            return  # not a call on this architecture
        if action == SCMP_ACT_NOTIFY:
            self.names[number] = call
        array = (_ArgCmp * max(1, len(conditions)))(*(_ArgCmp(*c) for c in conditions))
        result = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
        if result < 0:
            raise OSError(-result, f"seccomp rule for {call}: {errno.errorcode.get(-result, result)}")

    def load(self) -> str | None:
        """Install the filter in this process; returns why not, or None when it holds."""
        if self.error is not None:
            return self.error
        if self._lib is None or self._ctx is None:
            return "seccomp filter was never prepared"
        result = self._lib.seccomp_load(self._ctx)
        if result < 0:
            return f"seccomp_load: {errno.errorcode.get(-result, result)}"
        return None

    def listener(self) -> Listener | None:
        """After `load` with `notify`: the descriptor the denied calls arrive on."""
        if not self.notify or self._lib is None:
            return None
        fd = self._lib.seccomp_notify_fd(self._ctx)
        return Listener(fd, dict(self.names)) if fd >= 0 else None


class Listener:
    """The harness's end of the filter: each denied call is read, named and refused here."""

    def __init__(self, fd: int, names: dict[int, str]) -> None:
        self.fd, self.names = fd, names

    def receive(self) -> tuple[int, int, str, tuple[int, ...]] | None:
        """The next pending call: (id, pid, syscall name, arguments); None when its caller went away."""
        request = bytearray(80)
        try:
            fcntl.ioctl(self.fd, NOTIF_RECV, request, True)
        except OSError:
            return None
        ident, pid, _flags, number = struct.unpack_from("<QIIi", request)
        return ident, pid, self.names.get(number, f"system call {number}"), struct.unpack_from("<6Q", request, 32)

    def respond(self, ident: int, name: str) -> None:
        """Let an open for writing go on to the kernel (which may refuse it), refuse anything else:
        EPERM, or EAFNOSUPPORT for a socket family."""
        if name in OPENS:
            response = struct.pack("<QqiI", ident, 0, 0, 1)  # SECCOMP_USER_NOTIF_FLAG_CONTINUE
        else:
            code = errno.EAFNOSUPPORT if name == "socket" else errno.EPERM
            response = struct.pack("<QqiI", ident, 0, -code, 0)
        try:
            fcntl.ioctl(self.fd, NOTIF_SEND, bytearray(response), True)
        except OSError:
            pass  # its caller is gone
