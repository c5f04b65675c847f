"""The last check before anything is published: no secret of the builder's environment is in it.

A published secret cannot be taken back, so whatever else guards the way (checkouts read only inside
themselves, samples run without the host's environment), the build looks for the values of the
secret-looking variables of its environment (`*_TOKEN`, `*_KEY`, `*SECRET*`, `*PASSWORD*`, as typed,
HTML-escaped or JSON-escaped) in every file it is about to publish, and refuses to publish when one is
there, naming the file and the variable, never the value. Values shorter than 8 characters are not
looked for: they would be found everywhere. `take` also removes those variables from the build's own
environment, so that nothing the build starts (render processes, Pagefind, the sandbox) inherits them.
"""

from __future__ import annotations

import html
import json
import os
import re
import zlib
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SECRET_NAME = re.compile(r".*(_TOKEN|_KEY)$|.*SECRET.*|.*PASSWORD.*", re.IGNORECASE)
MIN_LENGTH = 8


class Leak(Exception):
    """A file about to be published holds the value of a secret-looking environment variable."""

    def __init__(self, path: str, variable: str) -> None:
        super().__init__(f"{path} contains the value of the environment variable {variable}: "
                         "nothing was published; find what put it there (a repository file linking to the "
                         "builder's environment, a record) before building again")
        self.path = path
        self.variable = variable


class Secrets:
    """The values to look for, by variable name, in each form a page or a twin may hold them."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.forms: list[tuple[bytes, str]] = []
        for name in sorted(environ):
            value = environ[name]
            if not SECRET_NAME.fullmatch(name) or len(value) < MIN_LENGTH:
                continue
            for form in {value, html.escape(value), json.dumps(value, ensure_ascii=False)[1:-1],
                         json.dumps(value)[1:-1]}:
                self.forms.append((form.encode("utf-8", "surrogateescape"), name))

    def __bool__(self) -> bool:
        return bool(self.forms)

    def find(self, data: bytes) -> str | None:
        """The name of the first variable whose value `data` holds, or None."""
        for form, name in self.forms:
            if form in data:
                return name
        return None

    def check_text(self, text: str, where: str) -> None:
        name = self.find(text.encode("utf-8", "surrogateescape"))
        if name is not None:
            raise Leak(where, name)

    def check_tree(self, tree: Path, published: Path | None = None) -> int:
        """Raise Leak for the first file of `tree` holding a secret (gzip files, as Pagefind writes its
        fragments, are read uncompressed too); files that are the same inode as the file of that name in
        `published` (hard links kept from the site, checked when they were written) are skipped. Returns
        the number of files read. Folders are read by a few threads: reading files releases the GIL."""
        if not self:
            return 0
        root, other = os.fspath(tree), None if published is None else os.fspath(published)
        with ThreadPoolExecutor(max_workers=4) as pool:
            counts = list(pool.map(lambda folder: self._check_folder(root, other, folder), _folders(root)))
        return sum(counts)

    def _check_folder(self, root: str, published: str | None, folder: str) -> int:
        read = 0
        here = os.path.join(root, folder) if folder else root
        with os.scandir(here) as entries:
            files = [e for e in entries if e.is_file(follow_symlinks=False)]
        for entry in files:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if published is not None and _same_file(entry, os.path.join(published, rel)):
                continue
            data = _read(entry.path)
            read += 1
            name = self.find(data)
            if name is None and data[:2] == b"\x1f\x8b":
                name = self.find(_gunzip(data))
            if name is not None:
                raise Leak(rel, name)
        return read


_TAKEN: dict[str, str] = {}  # every secret this process has taken out of its environment


def take(environ: dict[str, str] | os._Environ = os.environ) -> Secrets:
    """The secrets of `environ` (and of every earlier call), removed from it: the build needs none."""
    for name in [n for n in environ if SECRET_NAME.fullmatch(n)]:
        _TAKEN[name] = environ.pop(name)
    return Secrets(_TAKEN)


def _same_file(entry: os.DirEntry, other: str) -> bool:
    try:
        a, b = entry.stat(follow_symlinks=False), os.lstat(other)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, 1 << 20)]
        while len(chunks[-1]) == 1 << 20:
            chunks.append(os.read(fd, 1 << 20))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _gunzip(data: bytes, cap: int = 64 << 20) -> bytes:
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return inflater.decompress(data, cap)
    except zlib.error:
        return b""


def _folders(tree: str) -> Iterator[str]:
    """Every folder of `tree` (relative paths, "" for the tree itself), links not followed."""
    stack = [""]
    while stack:
        folder = stack.pop()
        yield folder
        with os.scandir(os.path.join(tree, folder) if folder else tree) as entries:
            stack.extend(f"{folder}/{e.name}" if folder else e.name for e in entries if e.is_dir(follow_symlinks=False))
