"""Writing files: every file is replaced atomically (temporary file, rename), never changed in place.

Never writing in place matters beyond atomicity: a staging tree starts as hard links of the published
site (`publish.seed_staging`), so an in-place write would change the published file too. A rename
gives the staged path a new inode and leaves the published one alone.

`write_atomic` also fsyncs each file (the run cache wants every result durable on its own). Site files
are written with `write_file`, which does not: one `sync_tree` before the staging tree is swapped in
makes the whole tree durable at once, instead of a million fsyncs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, content: str | bytes) -> None:
    """Replace `path` with `content` so that readers see the old file or the new one, never half."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_file(path: Path | str, content: str | bytes) -> None:
    """A site file: written beside its final name and renamed over it (a new inode), not fsynced.

    The temporary name is fixed (`.<name>.part`): only one process ever writes a given path, and a
    leftover from a killed build is simply overwritten by the next one.
    """
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.part")
    write_new(tmp, content)
    os.replace(tmp, path)


def write_new(path: Path | str, content: str | bytes) -> None:
    """A file of a tree that no other tree shares (no hard links into it): written in place. Paths may be
    strings: the render processes write millions of files, and a `Path` per file is a few percent of that."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        handle = open(path, "wb")
    except FileNotFoundError:  # the first file of its directory: creating parents only then saves a stat per file
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle = open(path, "wb")
    with handle:
        handle.write(data)


def link_over(source: Path, target: Path) -> None:
    """`target` as a hard link to `source`, replacing whatever was there in one rename."""
    part = target.with_name(f".{target.name}.part")
    try:
        part.unlink(missing_ok=True)
        os.link(source, part)
    except FileNotFoundError:  # the first file of its directory
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(source, part)
    os.replace(part, target)


def update_tree(output: Path, files: dict[str, bytes]) -> None:
    """Make the folder `output` hold exactly `files` (relative path: content). A file already there with the
    same bytes is left alone: a search shard indexed again after a few of its records changed keeps most
    of its files (Pagefind names fragments and index chunks by their content) as they were, still hard
    links of the published site's and so not among the files the next build patches. Any other file is
    replaced by a rename, never written in place, since it may be a link of the published site's."""
    if not output.is_dir():
        for name, data in files.items():
            write_new(output / name, data)
        return
    for name, data in files.items():
        path = output / name
        try:
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                continue
        except FileNotFoundError:
            pass
        write_file(path, data)
    for path in sorted(output.rglob("*"), reverse=True):
        if path.is_file() and path.relative_to(output).as_posix() not in files:
            remove_file(path, output)


def remove_file(path: Path, root: Path) -> None:
    """Remove `path` and then every parent directory left empty by it, up to (not including) `root`."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    parent = path.parent
    while parent != root and root in parent.parents:
        try:
            parent.rmdir()
        except OSError:  # not empty (or already gone)
            break
        parent = parent.parent


def sync_tree(path: Path) -> None:
    """Flush every file written under `path` to disk (`syncfs` on its filesystem; `sync` elsewhere)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        os.sync()
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "syncfs") or libc.syncfs(fd) != 0:
            os.sync()
    except OSError:
        os.sync()
    finally:
        os.close(fd)
