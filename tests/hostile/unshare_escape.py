import ctypes
import os

CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000


def isolate_experiment(n):
    """Makes a user namespace to become 'root' and remount the filesystem."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return True
