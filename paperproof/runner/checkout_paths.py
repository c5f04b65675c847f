"""Where a name a sample failed to open lies in its checkout, so that the refusal names the right cause.

The sandbox shows the checkout read-only at its own path and its top-level entries in the working directory
(`sandbox.private_root`), and follows none of its links. A case that still fails to open a name is told one of
three things: the repository does not ship it (the sandbox "does not hold" it), the repository ships it but the
name was taken from another folder than the one it lies under (`detectors/x.pt` opened from the repository's root
where `src/detectors/x.pt` is shipped: the code expects to be run from `src/`), or the name goes through a link
of the repository, which the sandbox does not follow. The harness asks, inside the sandbox, with `lstat` only, one
component at a time from the checkout's root: no link is followed and no file is opened.
Standard library only: this runs at the trust boundary.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from paperproof.runner.sandbox import WORK  # the working directory inside the sandbox, showing the checkout's root

MAX_PARTS = 256  # components of a name looked at, at most


@dataclass(frozen=True)
class Located:
    """`kind` is "absent", "shipped" or "link"; `name` is the repository path the name meant, and `path` the file
    shipped there or the repository's link on the way to it (the name itself, or a folder above it)."""

    kind: str
    name: str = ""
    path: str = ""


def _repository_paths(module: str, filename: str) -> list[str]:
    """The repository paths a name may mean: from the repository's root (the working directory) and from the
    module's own folder for a relative name, the path inside the checkout or the working directory for an
    absolute one (`checkout` is joined by the caller)."""
    if os.path.isabs(filename):
        return [filename]
    named = [os.path.normpath(filename), os.path.normpath(os.path.join(os.path.dirname(module), filename))]
    return list(dict.fromkeys(named))


def _inside(checkout: str, path: str) -> str | None:
    """`path` relative to the checkout's root, or None when it lies outside the repository."""
    if os.path.isabs(path):
        path = os.path.normpath(path)
        for root in (os.path.normpath(checkout), WORK):
            if path.startswith(root + os.sep):
                return path[len(root) + 1:]
        return None
    return None if path in (".", "") or path == ".." or path.startswith(".." + os.sep) else path


def _walk(checkout: str, relative: str) -> Located:
    parts = relative.split(os.sep)[:MAX_PARTS]
    for depth in range(1, len(parts) + 1):
        prefix = os.sep.join(parts[:depth])
        try:
            mode = os.lstat(os.path.join(checkout, prefix)).st_mode
        except OSError:
            return Located("absent")
        if stat.S_ISLNK(mode):
            return Located("link", relative, prefix)
        if depth < len(parts) and not stat.S_ISDIR(mode):
            return Located("absent")
    return Located("shipped", relative, relative)


def locate(checkout: str, module: str, filename: str) -> Located:
    """What the repository at `checkout` holds under `filename`, as a case of the entry in `module` (its path in
    the repository) named it: the first of its meanings that the repository ships or links, else absent."""
    for path in _repository_paths(module, filename):
        relative = _inside(checkout, path)
        if relative is None:
            continue
        found = _walk(checkout, relative)
        if found.kind != "absent":
            return found
    return Located("absent")
