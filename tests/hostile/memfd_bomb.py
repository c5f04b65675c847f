"""Holds memory no process maps: memfds grown with posix_fallocate in sixteen processes of one sample,
each memfd under the file-size cap and each process under the open-files cap."""

import os
import time


def hold_buffers(n: int) -> int:
    """Allocate scratch buffers for `n` items and return how many were made."""
    for _ in range(4):
        os.fork()
    fds = []
    for _ in range(56):
        fd = os.memfd_create("buffer")
        os.posix_fallocate(fd, 0, 3 * 512 * 1024)
        fds.append(fd)
    time.sleep(30)
    return len(fds) + n
