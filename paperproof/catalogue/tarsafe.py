"""Unpacking untrusted tarballs: every member is checked before a single byte is written.

A repository tarball is hostile until proven otherwise. `unpack` reads all headers first and
refuses the whole archive, naming the member and the reason, when any member has an absolute path
or `..`, is a device, fifo or other special file, is a link whose target leaves the root (followed
through the other links in the archive), lies under a link, repeats a path, or when a member, the
total (hard links counted as the copies they become, and at most 100 times the compressed size past
64 MiB) or the file count is over its cap. Only then does it write regular files and directories
(never through a link: links are created last) into a fresh directory, which it removes again if
anything fails. Nothing is ever written outside that directory.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Caps on what one tarball may unpack to."""

    max_files: int = 100_000
    max_member_bytes: int = 256 * MiB
    max_total_bytes: int = 2048 * MiB
    max_name_bytes: int = 1024
    # A bomb: past `ratio_free_bytes` unpacked, at most `max_ratio` times the compressed size.
    max_ratio: int = 100
    ratio_free_bytes: int = 64 * MiB

    def total_cap(self, compressed: int | None) -> int:
        if compressed is None:
            return self.max_total_bytes
        return min(self.max_total_bytes, max(self.ratio_free_bytes, self.max_ratio * compressed))


class Refused(Exception):
    """The tarball was not unpacked; `member` (when one is to blame) and `reason` say why."""

    def __init__(self, reason: str, member: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.member = member

    def __str__(self) -> str:
        return f"member {self.member!r}: {self.reason}" if self.member is not None else self.reason


def _parts(name: str, member: str) -> list[str]:
    """The path components of a member name, refusing absolute paths and `..`."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        raise Refused("absolute path", member)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused("path contains '..'", member)
    if not parts:
        raise Refused("empty path", member)
    return parts


def _resolve(parts: list[str], links: dict[str, str], member: str, depth: int = 0) -> list[str]:
    """Follow `parts` through the archive's own symlinks; refuse when the walk leaves the root."""
    if depth > 32:
        raise Refused("symlink loop", member)
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise Refused("link target leaves the root", member)
            out.pop()
            continue
        out.append(part)
        target = links.get("/".join(out))
        if target is not None:
            if target.startswith("/"):
                raise Refused(f"link to absolute path {target!r}", member)
            out = _resolve(out[:-1] + target.split("/"), links, member, depth + 1)
    return out


def check(archive: tarfile.TarFile, limits: Limits, compressed: int | None = None) -> list[tuple[tarfile.TarInfo, str]]:
    """Every member with its normalised name, or Refused naming the first member that breaks a rule.
    `compressed` (the tarball's size) caps the total at `max_ratio` times it (`Limits.total_cap`)."""
    cap = limits.total_cap(compressed)
    members: list[tuple[tarfile.TarInfo, str]] = []
    kinds: dict[str, str] = {}
    links: dict[str, str] = {}
    sizes: dict[str, int] = {}
    total = 0
    for info in archive:
        name = info.name
        if len(members) >= limits.max_files:
            raise Refused(f"more than {limits.max_files} members (file count cap)")
        if len(name.encode("utf-8", "surrogateescape")) > limits.max_name_bytes:
            raise Refused(f"name longer than {limits.max_name_bytes} bytes", name[:80] + "…")
        parts = _parts(name, name)
        path = "/".join(parts)
        if info.ischr() or info.isblk():
            raise Refused("device node", name)
        if info.isfifo():
            raise Refused("fifo", name)
        if info.issparse():
            raise Refused("sparse file", name)
        if info.isreg():
            kind = "file"
            if info.size > limits.max_member_bytes:
                raise Refused(f"{info.size} bytes, over the {limits.max_member_bytes}-byte member cap", name)
            total += info.size
            sizes[path] = info.size
            if total > cap:
                raise Refused(_over(cap, limits), name)
        elif info.isdir():
            kind = "dir"
        elif info.issym():
            kind = "symlink"
            if info.linkname.startswith("/"):
                raise Refused(f"symlink to absolute path {info.linkname!r}", name)
            links[path] = info.linkname
        elif info.islnk():
            kind = "hardlink"
            target = "/".join(_parts(info.linkname, name))
            if kinds.get(target) != "file":
                raise Refused(f"hard link to {info.linkname!r}, which is not an earlier regular file of the archive", name)
            total += sizes[target]  # unpacked as a copy: it counts as much as its target
            if total > cap:
                raise Refused(_over(cap, limits), name)
        else:
            raise Refused(f"unsupported member type {info.type!r}", name)
        previous = kinds.get(path)
        if previous is not None and not (previous == kind == "dir"):
            raise Refused(f"path appears twice ({previous}, then {kind})", name)
        kinds[path] = kind
        members.append((info, path))
    for info, path in members:
        parents = path.split("/")[:-1]
        for i in range(1, len(parents) + 1):
            above = kinds.get("/".join(parents[:i]))
            if above == "symlink":
                raise Refused("path lies under a symlink of the archive", info.name)
            if above in ("file", "hardlink"):
                raise Refused("path lies under a regular file of the archive", info.name)
        if info.issym():
            _resolve(path.split("/")[:-1] + info.linkname.split("/"), links, info.name)
    return members


def _over(cap: int, limits: Limits) -> str:
    if cap < limits.max_total_bytes:
        return (f"total unpacked size over {cap} bytes, {limits.max_ratio} times the compressed size "
                "(a decompression bomb)")
    return f"total unpacked size over the {limits.max_total_bytes}-byte cap"


def _write_file(archive: tarfile.TarFile, info: tarfile.TarInfo, dest: Path) -> None:
    source = archive.extractfile(info)
    if source is None:
        raise Refused("regular file without data", info.name)
    mode = 0o755 if info.mode & 0o100 else 0o644
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    written = 0
    with os.fdopen(fd, "wb") as handle:
        while chunk := source.read(1 << 16):
            written += len(chunk)
            if written > info.size:
                raise Refused("more data than its header declares", info.name)
            handle.write(chunk)
    if written != info.size:
        raise Refused(f"truncated: {written} of {info.size} bytes", info.name)


def unpack(tarball: Path, dest: Path, limits: Limits = Limits()) -> None:
    """Unpack `tarball` into the new directory `dest`, or raise Refused and leave nothing behind."""
    dest.mkdir(parents=True, exist_ok=False)
    try:
        with tarfile.open(tarball, "r:*") as archive:
            members = check(archive, limits, tarball.stat().st_size)
            root = dest.resolve()
            deferred_links = []
            for info, path in members:
                target = root.joinpath(*path.split("/"))
                if info.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                elif info.isreg():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    _write_file(archive, info, target)
                elif info.islnk():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    original = root.joinpath(*_parts(info.linkname, info.name))
                    shutil.copyfile(original, target, follow_symlinks=False)
                else:
                    deferred_links.append((info, target))
            for info, target in deferred_links:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(info.linkname, target)
    except Refused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError, UnicodeError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise Refused(f"not a readable tar archive: {exc}") from exc
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def single_root(tree: Path) -> Path:
    """The repository root inside an unpacked tarball: its only top-level folder, as GitHub packs them."""
    children = [p for p in tree.iterdir()]
    if len(children) == 1 and children[0].is_dir() and not children[0].is_symlink():
        return children[0]
    return tree
