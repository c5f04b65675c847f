"""Hostile tarballs, built with `tarfile`, each with the reason `tarsafe` must give for refusing it.

`SMALL` are the caps the corpus is judged under (so "over the cap" members stay small on disk).
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from paperproof.catalogue.tarsafe import Limits

SMALL = Limits(max_files=20, max_member_bytes=4096, max_total_bytes=16384, ratio_free_bytes=8192, max_ratio=50)
TOP = "evil-repo-0000000"


def _file(name: str, data: bytes = b"x\n") -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    return info, data


def _dir(name: str) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info, None


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _special(name: str, kind: bytes) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = kind, 1, 3
    return info, None


def build(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for info, data in members:
                archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


def _bomb_header() -> bytes:
    """A header declaring a 10 GB member, and no data: refused on the header, before any read."""
    info = tarfile.TarInfo(f"{TOP}/bomb")
    info.size = 10 * 1024**3
    return gzip.compress(info.tobuf(tarfile.GNU_FORMAT), mtime=0)


def corpus(escape: Path) -> dict[str, tuple[bytes, str]]:
    """name -> (tar.gz bytes, the words the refusal must contain). `escape` is where an escape would land."""
    top = [_dir(f"{TOP}/")]
    return {
        "absolute_path": (build(top + [_file(str(escape / "absolute"))]), "absolute path"),
        "dotdot": (build(top + [_file(f"{TOP}/../../{escape.name}/dotdot")]), "'..'"),
        "symlink_to_etc": (build(top + [_link(f"{TOP}/etc", "/etc")]), "symlink to absolute path"),
        "symlink_up": (build(top + [_link(f"{TOP}/up", "../..")]), "leaves the root"),
        "symlink_chain": (build(top + [_dir(f"{TOP}/s/"), _link(f"{TOP}/s/c", ".."),
                                       _link(f"{TOP}/a", "s/c/../..")]), "leaves the root"),
        "write_through_symlink": (build(top + [_dir(f"{TOP}/sub/"), _link(f"{TOP}/l", "sub"),
                                               _file(f"{TOP}/l/x")]), "under a symlink"),
        "hardlink_absolute": (build(top + [_link(f"{TOP}/h", "/etc/passwd", tarfile.LNKTYPE)]), "absolute path"),
        "hardlink_dotdot": (build(top + [_link(f"{TOP}/h", "../../etc/passwd", tarfile.LNKTYPE)]), "'..'"),
        "hardlink_dangling": (build(top + [_link(f"{TOP}/h", f"{TOP}/nothing", tarfile.LNKTYPE)]),
                              "not an earlier regular file"),
        "device": (build(top + [_special(f"{TOP}/null", tarfile.CHRTYPE)]), "device node"),
        "block_device": (build(top + [_special(f"{TOP}/sda", tarfile.BLKTYPE)]), "device node"),
        "fifo": (build(top + [_special(f"{TOP}/pipe", tarfile.FIFOTYPE)]), "fifo"),
        "oversize_member": (build(top + [_file(f"{TOP}/big", b"0" * 5000)]), "member cap"),
        "bomb_header": (_bomb_header(), "member cap"),
        "too_many_files": (build(top + [_file(f"{TOP}/f{i}") for i in range(25)]), "file count cap"),
        "total_over_cap": (build(top + [_file(f"{TOP}/f{i}", b"1" * 4000) for i in range(5)]), "total unpacked size"),
        "hardlink_copies": (build(top + [_file(f"{TOP}/f", b"1" * 4000)] + [_link(f"{TOP}/h{i}", f"{TOP}/f", tarfile.LNKTYPE)
                                                                        for i in range(4)]), "total unpacked size"),
        "bomb_ratio": (build(top + [_file(f"{TOP}/z{i}", bytes(4000)) for i in range(4)]), "a decompression bomb"),
        "duplicate": (build(top + [_file(f"{TOP}/a"), _file(f"{TOP}/a", b"other")]), "appears twice"),
        "under_a_file": (build(top + [_file(f"{TOP}/a"), _file(f"{TOP}/a/b")]), "under a regular file"),
        "not_a_tarball": (b"this is not a tarball at all\n" * 4, "not a readable tar archive"),
        "truncated": (build(top + [_file(f"{TOP}/a", b"z" * 3000)])[:60], "not a readable tar archive"),
    }


def benign() -> bytes:
    """A tarball as GitHub packs one, with an executable, an inside symlink and an inside hard link."""
    members = [
        _dir(f"{TOP}/"), _dir(f"{TOP}/pkg/"),
        _file(f"{TOP}/README.md", b"# benign\n"),
        _file(f"{TOP}/pkg/mod.py", b"def f(x):\n    return x\n"),
        _link(f"{TOP}/pkg/alias.py", "mod.py"),
        _link(f"{TOP}/docs", "pkg"),
        _link(f"{TOP}/copy.md", f"{TOP}/README.md", tarfile.LNKTYPE),
    ]
    script, data = _file(f"{TOP}/run.sh", b"#!/bin/sh\necho hi\n")
    script.mode = 0o755
    members.append((script, data))
    return build(members)
