"""The last check before anything is published or printed: no secret of the builder's host is in it.

A published secret cannot be taken back, so whatever else guards the way (checkouts read only inside
themselves, samples run without the host's environment), the build looks for the values of the
secret-looking variables of its environment (`*_TOKEN`, `*_KEY`, `*SECRET*`, `*PASSWORD*`) and for the
secrets of the host's credential files it can read (`host_secrets`: private keys, `.netrc`, cloud and
registry credentials), as typed, HTML-escaped or JSON-escaped, in every file it is about to publish, and
refuses to publish when one is there, naming the file and the variable or host file, never the value; the
command layer checks what it prints the same way. Values shorter than 8 characters are not looked for:
they would be found everywhere. `take` also removes those variables from the build's own environment, so
that nothing the build starts (render processes, Pagefind, the sandbox) inherits them.
"""

from __future__ import annotations

import html
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import markupsafe

from paperproof.build import host_secrets

SECRET_NAME = re.compile(r".*(_TOKEN|_KEY)$|.*SECRET.*|.*PASSWORD.*", re.IGNORECASE)
MIN_LENGTH = 8
ANCHOR = 8  # bytes of each form the one scan looks for (every form is at least this long)

# Printable ASCII from the byte least often in a built site (pages, twins, feeds, scripts) to the most often,
# counted on the bundled site (other bytes count as rarest): an anchor starts at its form's rarest byte.
_RARITY = b'^Z@~XYJG*Q|!?V$W+qHK`zMIBNLF%j&DOTEU\'SP\\RA[]C;(){}vwk_g-m#67x8349yh:up/f5,<>d21n0sob.ati=lrce "'


def _rank() -> bytes:
    order = {byte: rank for rank, byte in enumerate(_RARITY, start=1)}
    return bytes(order.get(b, 0) for b in range(256))


_RANK = _rank()
RARE = 40  # the bytes of these first ranks start anchors (`\\` is the 40th: 0.09 % of a site's bytes)


class Leak(Exception):
    """A file about to be published (or a text about to be printed) holds a secret of the environment or of
    a host file; the message names where it is and where the secret is from, never the secret."""

    def __init__(self, path: str, variable: str, host_file: bool = False) -> None:
        origin = f"a secret of the host file {variable}" if host_file else \
            f"the value of the environment variable {variable}"
        super().__init__(f"{path} contains {origin}: nothing was published; find what put it there (a repository "
                         "file linking to the builder's environment or to its files, a record) before building again")
        self.path = path
        self.variable = variable
        self.host_file = host_file


def forms(value: str) -> set[str]:
    """`value` as typed and in every escaped form a page or a twin may hold it (Jinja's escaping, nh3's, JSON's)."""
    return {value, html.escape(value), html.escape(value, quote=False), str(markupsafe.escape(value)),
            json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]}


class Secrets:
    """The secrets to look for, in each form a page or a twin may hold them: the values of secret-looking
    environment variables (by name) and the values `host_secrets` took out of the host's credential files (by
    file), all found in one scan of a file (`find`)."""

    def __init__(self, environ: Mapping[str, str], host: Iterable[tuple[str, str]] = ()) -> None:
        self.forms: list[tuple[bytes, str]] = []
        self.files: set[str] = set()
        for name in sorted(environ):
            value = environ[name]
            if not SECRET_NAME.fullmatch(name) or len(value) < MIN_LENGTH:
                continue
            self.forms.extend((form.encode("utf-8", "surrogateescape"), name) for form in sorted(forms(value)))
        for value, path in host:
            if len(value) >= MIN_LENGTH:
                self.forms.extend((form.encode("utf-8", "surrogateescape"), path) for form in sorted(forms(value)))
                self.files.add(path)
        self._scan = _Scan(self.forms)

    def __bool__(self) -> bool:
        return bool(self.forms)

    def find(self, data: bytes) -> str | None:
        """The variable (or host file) of the first secret that `data` holds, or None."""
        return self._scan.find(data)

    def leak(self, where: str, name: str) -> Leak:
        return Leak(where, name, name in self.files)

    def check_text(self, text: str, where: str) -> None:
        name = self.find(text.encode("utf-8", "surrogateescape"))
        if name is not None:
            raise self.leak(where, name)

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
                raise self.leak(rel, name)
        return read


class _Scan:
    """Every form looked for in one read of the data, at a cost that grows with the number of distinct rare
    bytes the forms start their anchors at, not with the number of forms.

    Each form is found by one `ANCHOR`-byte piece of it, the piece that starts at its rarest byte (`_RARITY`);
    for each byte that starts a piece, `bytes.find` (memchr) visits its occurrences, few for a rare byte, and
    where the piece there is one of the anchors, the forms it was taken from are compared in full. Base64 and
    token alphabets hold rare bytes (`Z`, `X`, `Q`, `+`...), so a private key's lines share a handful of
    starting bytes; a form with no byte among the `RARE` rarest is looked for whole, with `in`. (One `re` alternation of the forms or of their pieces tests the set of starting bytes at
    every byte of the data: 70 to 150 MB/s whatever the forms, against a few GB/s for `find`.)"""

    def __init__(self, wanted: list[tuple[bytes, str]]) -> None:
        self.by_anchor: dict[bytes, list[tuple[bytes, int, str]]] = {}
        self.whole: list[tuple[bytes, str]] = []  # forms of common bytes only (`c3c3c3c3`): `in`, one by one
        for form, name in wanted:
            if len(form) < ANCHOR:
                continue
            offset = min(range(len(form) - ANCHOR + 1), key=lambda i: (_RANK[form[i]], i))
            if _RANK[form[offset]] > RARE:
                self.whole.append((form, name))
            else:
                self.by_anchor.setdefault(form[offset:offset + ANCHOR], []).append((form, offset, name))
        self.starts = sorted({anchor[:1] for anchor in self.by_anchor}, key=lambda b: _RANK[b[0]])

    def find(self, data: bytes) -> str | None:
        for form, name in self.whole:
            if form in data:
                return name
        by_anchor = self.by_anchor
        for start in self.starts:
            at = data.find(start)
            while at != -1:
                candidates = by_anchor.get(data[at:at + ANCHOR])
                if candidates is not None:
                    for form, offset, name in candidates:
                        if at >= offset and data.startswith(form, at - offset):
                            return name
                at = data.find(start, at + 1)
        return None


_TAKEN: dict[str, str] = {}  # every secret this process has taken out of its environment


def take(environ: dict[str, str] | os._Environ = os.environ, host: bool = True) -> Secrets:
    """The secrets of `environ` (and of every earlier call), removed from it: the build needs none; with
    `host`, also those of the host's credential files (`host_secrets`, read once a process)."""
    for name in [n for n in environ if SECRET_NAME.fullmatch(n)]:
        _TAKEN[name] = environ.pop(name)
    return Secrets(_TAKEN, host_secrets.host_values() if host else ())


def taken() -> Secrets:
    """What this process has taken so far (`take`) and the host's secrets, without taking more: for what the
    command layer prints."""
    return Secrets(_TAKEN, host_secrets.host_values())


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
