"""Publishing a site: a staging tree beside the published one, swapped in only when complete.

- `seed_staging` starts the staging tree as hard links of the published one, so that pages whose
  inputs did not change cost one `link()` each and are never rendered again. Every later write to the
  staging tree replaces a file by renaming a new one over it (`write.write_file`), so the published
  files behind the links are never touched.
- `swap` exchanges the two trees in one `renameat2(RENAME_EXCHANGE)` where the kernel and filesystem
  allow it: readers see the old tree or the new one, never neither. Elsewhere it falls back to two
  renames (the published name is missing for a moment in between).
- A build that stops anywhere before the swap leaves the published tree as it was.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def seed_staging(published: Path, staging: Path) -> int:
    """Hard-link every file of `published` into a new `staging` tree (directories are created). Returns
    the number of files linked. Falls back to copying a file when it cannot be linked."""
    count = 0
    staging.mkdir(parents=True)
    stack = [(published, staging)]
    while stack:
        source, target = stack.pop()
        with os.scandir(source) as entries:
            for entry in entries:
                destination = os.path.join(target, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    os.mkdir(destination)
                    stack.append((Path(entry.path), Path(destination)))
                    continue
                try:
                    os.link(entry.path, destination, follow_symlinks=False)
                except OSError:
                    shutil.copy2(entry.path, destination, follow_symlinks=False)
                count += 1
    return count


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths (Linux renameat2); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP, errno.EXDEV):
        return False
    raise OSError(error, os.strerror(error), str(a))


def swap(staging: Path, out: Path) -> None:
    """Publish `staging` as `out`; the previous tree is removed only after the new one is in place."""
    previous = out.with_name(f".{out.name}.previous")
    if previous.exists():
        shutil.rmtree(previous)
    if out.exists() and _exchange(staging, out):
        staging.rename(previous)  # the old tree, now at the staging path
    else:
        if out.exists():
            out.rename(previous)
        staging.rename(out)
    if previous.exists():
        shutil.rmtree(previous)


def discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
