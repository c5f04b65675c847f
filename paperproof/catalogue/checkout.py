"""Reading an untrusted checkout the way the sandbox would let a sample read it: inside it, bounded.

A checkout is hostile: its README may be a link to `/proc/self/environ`, its `.git/HEAD` may say
`ref: ../../../etc/shadow`, a folder may link to `/root`. Every file the builder reads from one
(README, licence, `.git` refs, Python sources) goes through `read_bytes`: the path is walked from
the checkout's root one component at a time, links inside the checkout are followed only while
their targets stay inside it, and the file is then opened component by component with
`O_NOFOLLOW`, so the kernel never follows a link either. Only regular files with one name (a
hard link may be a file from elsewhere on the disk) and under a size cap are read. `walk` lists a
tree without following links, with caps on depth and entries; `head_commit` reads the commit a
checkout is at, accepting 40 (or 64) hex digits or a `refs/...` name resolved inside `.git`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20
MAX_LINKS = 40  # links followed on one path, as the kernel allows
MAX_DEPTH = 32  # folders below the checkout's root that `walk` enters
MAX_ENTRIES = 200_000  # directory entries `walk` looks at in one checkout
MAX_REF_BYTES = 4096

_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_REF = re.compile(r"refs/[A-Za-z0-9._/+-]{1,240}")


class Refused(Exception):
    """The file was not read; `str()` names the path and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _parts(rel: str) -> list[str]:
    if "\x00" in rel or rel.startswith("/"):
        raise Refused(rel, "not a relative path")
    return [p for p in rel.split("/") if p not in ("", ".")]


def resolve(root: Path, rel: str) -> str:
    """`rel` with every link inside the checkout replaced by its target; Refused when a link leaves it."""
    pending = _parts(rel)[::-1]
    done: list[str] = []
    links = 0
    while pending:
        part = pending.pop()
        if part == "..":
            if not done:
                raise Refused(rel, "leaves the checkout")
            done.pop()
            continue
        here = os.path.join(root, *done, part)
        try:
            info = os.lstat(here)
        except OSError as exc:
            raise Refused(rel, exc.strerror or "cannot be read") from None
        except ValueError:
            raise Refused(rel, "not a path") from None
        if stat.S_ISLNK(info.st_mode):
            links += 1
            if links > MAX_LINKS:
                raise Refused(rel, "too many links")
            target = os.readlink(here)
            if target.startswith("/"):
                raise Refused(rel, "a link to a path outside the checkout")
            pending.extend(_parts(target)[::-1])
            continue
        done.append(part)
    if not done:
        raise Refused(rel, "names the checkout itself")
    return "/".join(done)


def _open(root: Path, rel: str) -> int:
    """A descriptor of the regular file `rel` (already resolved), opened without following any link."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    parts = rel.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)  # a fifo must not block the build
    finally:
        os.close(fd)


def read_bytes(root: Path, rel: str, cap: int) -> bytes:
    """The bytes of the file `rel` of the checkout at `root`; Refused when it is a link leaving the
    checkout, not a regular file, a file with other names (hard links), or over `cap` bytes."""
    resolved = resolve(root, rel)
    try:
        fd = _open(root, resolved)
    except OSError as exc:
        raise Refused(rel, "a link was swapped in while it was read" if exc.errno == 40 else
                      (exc.strerror or "cannot be opened")) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(rel, "not a regular file")
        if info.st_nlink > 1:
            raise Refused(rel, f"a hard link ({info.st_nlink} names): it may be a file from outside the checkout")
        if info.st_size > cap:
            raise Refused(rel, f"{info.st_size} bytes, over the {cap}-byte cap")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(cap + 1)
        if len(data) > cap:
            raise Refused(rel, f"over the {cap}-byte cap")
        return data
    except OSError as exc:
        raise Refused(rel, exc.strerror or "cannot be read") from None
    finally:
        os.close(fd)


def read_text(root: Path, rel: str, cap: int) -> str:
    return read_bytes(root, rel, cap).decode("utf-8", errors="replace")


def is_file(root: Path, rel: str) -> bool:
    """Whether `rel` is a regular file that `read_bytes` may open (inside the checkout, one name)."""
    try:
        resolved = resolve(root, rel)
        info = os.lstat(os.path.join(root, resolved))
    except (Refused, OSError, ValueError):
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


@dataclass
class Walk:
    """What `walk` could not look at: (path, reason) pairs, and whether it stopped at a cap."""

    skipped: list[tuple[str, str]]
    entries: int = 0


def walk(root: Path, report: Walk, skip_dir=lambda name: False, *, max_depth: int = MAX_DEPTH,
         max_entries: int = MAX_ENTRIES) -> Iterator[str]:
    """Relative paths of the regular files under `root` (not links), in a stable order, without
    following links, at most `max_depth` folders deep and `max_entries` entries in all. Names that
    are not UTF-8 are skipped and reported (nothing downstream can name them)."""
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(os.path.join(root, folder) if folder else root) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            report.skipped.append((folder or ".", f"folder cannot be listed: {exc.strerror}"))
            continue
        subfolders = []
        for child in children:
            report.entries += 1
            if report.entries > max_entries:
                report.skipped.append((folder or ".", f"the checkout has more than {max_entries} entries: "
                                       "the rest was not read"))
                return
            try:
                child.name.encode("utf-8")
            except UnicodeEncodeError:
                name = child.name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                report.skipped.append(((folder + "/" if folder else "") + name, "its name is not UTF-8"))
                continue
            rel = f"{folder}/{child.name}" if folder else child.name
            try:
                if child.is_dir(follow_symlinks=False):
                    if not skip_dir(child.name):
                        subfolders.append(rel)
                elif child.is_file(follow_symlinks=False):
                    yield rel
            except OSError:
                continue
        if subfolders and depth + 1 > max_depth:
            report.skipped.append((folder, f"folders deeper than {max_depth} levels were not read"))
            continue
        stack.extend((sub, depth + 1) for sub in reversed(subfolders))


@dataclass(frozen=True)
class Head:
    """The commit a checkout is at, or None; `refused` says why `.git` was not believed."""

    commit: str | None
    refused: str | None = None


def head_commit(root: Path) -> Head:
    """The commit named by `.git/HEAD` without running git (no hooks, no config): 40 or 64 hex digits,
    or `ref: refs/...` read from `.git/<ref>` or `.git/packed-refs`. Any other text is refused."""
    try:
        dot_git = os.lstat(os.path.join(root, ".git"))
    except OSError:
        return Head(None)
    if not stat.S_ISDIR(dot_git.st_mode):
        return Head(None, ".git is not a folder (a worktree's or submodule's pointer, or a link): its commit is not read")
    try:
        text = read_text(root, ".git/HEAD", MAX_REF_BYTES).strip()
    except Refused as exc:
        return Head(None, f".git/HEAD refused: {exc.reason}")
    if _HEX.fullmatch(text.lower()):
        return Head(text.lower())
    if not text.startswith("ref: "):
        return Head(None, ".git/HEAD refused: neither a commit id nor a ref")
    ref = text[5:].strip()
    if not _REF.fullmatch(ref) or ".." in ref or "//" in ref or ref.endswith((".lock", "/")):
        return Head(None, ".git/HEAD refused: it names something other than a refs/ name")
    try:
        value = read_text(root, f".git/{ref}", MAX_REF_BYTES).strip().lower()
    except Refused:
        value = None
    if value is not None:
        return Head(value) if _HEX.fullmatch(value) else Head(None, f".git/{ref} refused: not a commit id")
    try:
        packed = read_text(root, ".git/packed-refs", 16 * MiB)
    except Refused:
        return Head(None)
    for line in packed.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and _HEX.fullmatch(commit.lower()):
            return Head(commit.lower())
    return Head(None)
