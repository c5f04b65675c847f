"""Publishing a site: a staging tree beside the published one, swapped in only when complete.

- `seed_staging` starts the staging tree as hard links of the published one, so that pages whose
  inputs did not change cost one `link()` each and are never rendered again. A build whose pages all
  change (other code) starts an empty tree instead, and links in only what it keeps (`link_files`).
  Every later write to the staging tree replaces a file by renaming a new one over it
  (`plumbing.files.write_file`), so the published files behind the links are never touched.
- `swap` exchanges the two trees in one `renameat2(RENAME_EXCHANGE)` where the kernel and filesystem
  allow it: readers see the old tree or the new one, never neither. Elsewhere it falls back to two
  renames (the published name is missing for a moment in between). The replaced tree is kept beside
  the site (`SitePaths.previous`) when the caller asks, else handed to `discard`, which deletes it in the
  background.
- `patch_previous` makes the kept tree the next build's staging tree: it differs from the published
  one only in the files the last build changed, so bringing it up to date costs one `link()` or
  `unlink()` per changed file, where seeding a new staging tree costs one per file of the site (and
  deleting the replaced tree as many again).
- `set_aside` keeps the files found in the published site that no build wrote (`build.site_files`) beside it,
  so that repairing the site never deletes someone's file.
- A build that stops anywhere before the swap leaves the published tree as it was, and one build at a
  time writes a site (`lock`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path

from paperproof.build.site_paths import SitePaths
from paperproof.plumbing import host_process
from paperproof.plumbing.files import link_over, remove_file
from paperproof.plumbing.locks import hold

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


def link_files(published: Path, staging: Path, names: Iterable[str]) -> None:
    """Hard-link the files `names` (relative paths) of `published` into `staging`, creating directories, and
    replacing a file already there."""
    for name in names:
        source, target = published / name, staging / name
        try:
            os.link(source, target)
        except FileNotFoundError:
            if not source.exists():
                raise
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(source, target)
        except FileExistsError:
            link_over(source, target)


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


def lock(paths: SitePaths) -> AbstractContextManager[int]:
    """Held by a build (or a check) of the site at `paths.out` from start to end: a second one is refused at
    once instead of interleaving its writes with the first's."""
    return hold(paths.lock, f"{paths.out}: another build is writing or checking this site; "
                            "run this one when it has finished")


def swap(paths: SitePaths, *, keep: bool = False) -> None:
    """Publish the staging tree as the site; the replaced tree is kept at `paths.previous` with `keep`, else
    removed after the new one is in place."""
    out, staging, old = paths.out, paths.staging, paths.previous
    discard(old, paths)
    if out.exists() and _exchange(staging, out):
        staging.rename(old)  # the old tree, now at the staging path
    else:
        if out.exists():
            out.rename(old)
        staging.rename(out)
    if not keep:
        discard(old, paths)


def patch_previous(paths: SitePaths, changed: Iterable[str]) -> int:
    """Move the kept previous tree to the staging path and make it a copy of the site (hard links), given every
    path that may differ between the two: each is linked from the site where it exists there (unless it is
    already the same file), else removed. Returns the number of paths patched."""
    out, staging = paths.out, paths.staging
    paths.previous.rename(staging)
    count = 0
    for name in changed:
        source, target = out / name, staging / name
        try:
            inode = os.stat(source).st_ino
        except FileNotFoundError:
            remove_file(target, staging)
        else:
            try:
                if os.stat(target).st_ino == inode:  # a file of a changed unit that stayed (a search shard's)
                    continue
            except FileNotFoundError:
                pass
            link_over(source, target)
        count += 1
    return count


def set_aside(paths: SitePaths, names: Iterable[str], tree: str) -> Path | None:
    """Keep the files `names` of the published site (found there, written by no build) in a folder of their own
    beside it, `.site.extra/<tree>/` (the id of the tree about to replace them), as hard links: the site loses
    them when the new tree is swapped in, their owner does not. Returns that folder (None when `names` is empty)."""
    names = list(names)
    if not names:
        return None
    folder = paths.extra / tree[:16]
    for name in names:
        source, target = paths.out / name, folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target, follow_symlinks=False)
        except FileExistsError:
            continue  # set aside by a build of this tree that did not finish
        except OSError:  # another filesystem, or a kind of file that cannot be linked
            shutil.copy2(source, target, follow_symlinks=False)
    return folder


# One deleter at a time (the lock): a deleter started while another runs waits, then finds what is left.
_DELETER = """import fcntl, os, shutil, sys
os.nice(10)
with open(os.path.join(sys.argv[1], ".lock"), "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    for entry in os.scandir(sys.argv[1]):
        if entry.name != ".lock":
            shutil.rmtree(entry.path, True)
"""


def discard(path: Path, paths: SitePaths) -> None:
    """Delete the tree at `path` (beside the site at `paths.out`) without waiting for it: it is renamed into
    the site's trash folder, and a detached, niced process deletes what that folder holds. A site's worth of
    files takes minutes to delete, as long as rendering it on some disks; publication need not wait for
    that, and on a CI runner thrown away after the build it need never finish. A deleter that is killed
    leaves the rest for the next one."""
    if not path.exists():
        return
    folder = paths.trash
    folder.mkdir(exist_ok=True)
    path.rename(Path(tempfile.mkdtemp(dir=folder)) / path.name)
    host_process.start([sys.executable, "-I", "-c", _DELETER, str(folder)], folder, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
