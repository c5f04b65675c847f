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
from collections.abc import Iterable, Mapping
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
        """Raise Leak for the first file of `tree` holding a secret; files that are the same inode as the
        file of that name in `published` (hard links kept from the site, checked when they were written)
        are skipped. Returns the number of files read."""
        if not self:
            return 0
        read = 0
        for rel in _files(tree):
            path = os.path.join(tree, rel)
            if published is not None and _same_file(path, os.path.join(published, rel)):
                continue
            with open(path, "rb") as handle:
                name = self.find(handle.read())
            read += 1
            if name is not None:
                raise Leak(rel, name)
        return read


_TAKEN: dict[str, str] = {}  # every secret this process has taken out of its environment


def take(environ: dict[str, str] | os._Environ = os.environ) -> Secrets:
    """The secrets of `environ` (and of every earlier call), removed from it: the build needs none."""
    for name in [n for n in environ if SECRET_NAME.fullmatch(n)]:
        _TAKEN[name] = environ.pop(name)
    return Secrets(_TAKEN)


def _same_file(a: str, b: str) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _files(tree: Path) -> Iterable[str]:
    stack = [""]
    while stack:
        folder = stack.pop()
        with os.scandir(os.path.join(tree, folder)) as entries:
            for entry in entries:
                rel = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    yield rel
