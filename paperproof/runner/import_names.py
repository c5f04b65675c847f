"""Which import names installed distributions provide, read from the `.dist-info` folders uv wrote.

An import name is often not its distribution's name (`yaml` is PyYAML's, `bs4` beautifulsoup4's, `cv2`
opencv-python's). `runner.environment` learns which declared requirement provides a missing import from the
wheels themselves: their `top_level.txt` (what setuptools says the wheel provides), else the top-level entries
of their `RECORD` (every file the install wrote). These files come from registry wheels our own uv installed, not
from a checkout; still, every read is bounded as the checkout guard bounds its own: regular files only, no link
followed, at most `MAX_METADATA_BYTES` of one file and `MAX_DISTRIBUTIONS` folders.
"""

from __future__ import annotations

import csv
import itertools
import os
import re
import stat
from pathlib import Path

MAX_DISTRIBUTIONS = 4096  # `.dist-info` folders looked at in one environment
MAX_ENTRIES = 65_536  # entries of the environment's folder listed, in the order the kernel gives them
MAX_METADATA_BYTES = 8 * 1024**2  # of one top_level.txt or RECORD (tensorflow-cpu's RECORD is about 2 MB)
MAX_NAMES = 4096  # top-level names taken from one distribution
MAX_RECORD_LINE = 4096  # characters of a RECORD line (a path, its hash, its size); a longer one names no module
# `name-version.dist-info`: the name is the wheel's, with `-` written `_` (PEP 427).
DIST_INFO = re.compile(r"([A-Za-z0-9][A-Za-z0-9._]*?)-[^-/]+\.dist-info")
# A compiled extension module's suffix (`_yaml.cpython-311-x86_64-linux-gnu.so`, `x.abi3.so`, `x.pyd`).
EXTENSION = re.compile(r"\.(?:[\w-]+\.)?(?:so|pyd)$")


def normalise(name: str) -> str:
    """A distribution name as the registry compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def provided(folder: Path) -> dict[str, tuple[list[str], str]]:
    """distribution (normalised) -> (the top-level import names it installed, sorted; the file that said so:
    `top_level.txt` or `RECORD`), for each `.dist-info` folder directly in `folder`."""
    out: dict[str, tuple[list[str], str]] = {}
    try:
        with os.scandir(folder) as listing:
            entries = sorted(itertools.islice(listing, MAX_ENTRIES), key=lambda e: e.name)
    except OSError:
        return out
    infos = [e for e in entries if e.name.endswith(".dist-info") and e.is_dir(follow_symlinks=False)]
    for entry in infos[:MAX_DISTRIBUTIONS]:
        match = DIST_INFO.fullmatch(entry.name)
        if not match:
            continue
        top = _read(Path(entry.path) / "top_level.txt")
        names = sorted({n for n in (line.strip() for line in (top or "").splitlines()) if _importable(n)})
        source = "top_level.txt"
        if not names:
            names, source = _recorded(_read(Path(entry.path) / "RECORD") or ""), "RECORD"
        if names:
            out[normalise(match.group(1))] = (names[:MAX_NAMES], source)
    return out


def providers(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """import name -> [(distribution, the file that said so)], sorted: who in `folder` provides each name
    (a namespace such as `google` may come from several)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for dist, (names, source) in sorted(provided(folder).items()):
        for name in names:
            out.setdefault(name, []).append((dist, source))
    return out


def _importable(name: str) -> bool:
    return name.isidentifier() and not name.startswith("__")


def _recorded(text: str) -> list[str]:
    """The top-level modules and packages a RECORD lists: `pkg/x.py` gives `pkg`, `mod.py` and `mod.*.so` give
    `mod`; the metadata folders, scripts (`bin/x`, `../../bin/x`), `.pth` files and data are none."""
    names: set[str] = set()
    for line in text.splitlines():
        try:
            row = next(csv.reader([line]), []) if len(line) <= MAX_RECORD_LINE else []
        except csv.Error:  # a NUL, an unclosed quote: no path
            row = []
        if not row:
            continue
        path = row[0].replace("\\", "/")
        if not (path.endswith(".py") or EXTENSION.search(path)):
            continue  # data, scripts (`bin/x`), metadata: no module
        head, slash, _ = path.partition("/")
        name = head if slash else EXTENSION.sub("", path[:-3] if path.endswith(".py") else path)
        if _importable(name) and name != "__pycache__":
            names.add(name)
        if len(names) >= MAX_NAMES:
            break
    return sorted(names)


def _read(path: Path) -> str | None:
    """A metadata file's text: a regular file reached without following a link, at most MAX_METADATA_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], MAX_METADATA_BYTES
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
