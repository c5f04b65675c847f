"""Worker slots: each zygote holds one for its life, and slot k's samples run as uid 61000 + k.

A slot is claimed with an exclusive lock on a file shared by every runner on the machine (two
builds at once, the processes of a Dask worker), so concurrent samples always have distinct
uids: one can never signal another, and the sweep after a timeout kills only its own slot.
The lock is passed to the zygote too, so it is held while either process lives.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

MAX_SLOTS = 4000  # uids 61000..64999, below the 65534 of `nobody`


def _directory() -> str:
    for base in ("/tmp", tempfile.gettempdir()):
        path = os.path.join(base, "paperproof-slots")
        try:
            os.makedirs(path, mode=0o1777, exist_ok=True)
            return path
        except OSError:
            continue
    raise OSError("no directory for worker slot locks")


class Slot:
    """An exclusively held slot number; `release` (or process exit) frees it."""

    def __init__(self) -> None:
        directory = _directory()
        for number in range(MAX_SLOTS):
            fd = os.open(os.path.join(directory, f"{number}.lock"), os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.number, self.fd = number, fd
            return
        raise RuntimeError(f"all {MAX_SLOTS} sandbox worker slots are taken on this machine")

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
