import ctypes
import os

PTRACE_ATTACH = 16


def attach_profiler(n):
    """Attaches a 'profiler' to its parent process with ptrace."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(PTRACE_ATTACH, os.getppid() or 1, None, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return True
