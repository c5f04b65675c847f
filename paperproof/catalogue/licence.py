"""Licences: finding a repository's licence file, naming it by SPDX id, and the display policy.

The policy is the one place that decides whether a sample's code may be shown inline on a page
(`inline_ok`) or only pointed at; everything unknown, absent or unidentified is pointer-only.

Three answers stay distinct everywhere: `NONE` (the repository has no licence file), `NOASSERTION`
(it has one that nobody could identify) and None (nobody asked, or the host did not answer).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paperproof.catalogue import checkout

LICENCE_BYTES = 1 << 20
NO_LICENCE = "NONE"
UNIDENTIFIED = "NOASSERTION"

LICENCE_FILE_NAMES = (
    "LICENSE", "LICENSE.md", "LICENSE.txt", "LICENSE.rst", "LICENCE", "LICENCE.md", "LICENCE.txt",
    "COPYING", "COPYING.md", "COPYING.txt", "UNLICENSE", "LICENSE-MIT", "LICENSE-APACHE",
)

# Identifiers whose terms let us redistribute the code verbatim with its notice, as a page does.
INLINE_OK: frozenset[str] = frozenset({
    "MIT", "MIT-0", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BSD-3-Clause-Clear", "ISC", "0BSD",
    "Unlicense", "CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "MPL-2.0", "Zlib", "BSL-1.0", "PSF-2.0",
    "GPL-2.0", "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0", "GPL-3.0-only", "GPL-3.0-or-later",
    "LGPL-2.1", "LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0", "LGPL-3.0-only", "LGPL-3.0-or-later",
    "AGPL-3.0", "AGPL-3.0-only", "AGPL-3.0-or-later", "EPL-2.0", "WTFPL",
})

_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+)")

# Ordered: the first matching fingerprint wins, so more specific texts come first.
_FINGERPRINTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("AGPL-3.0", ("gnu affero general public license", "version 3")),
    ("LGPL-3.0", ("gnu lesser general public license", "version 3")),
    ("LGPL-2.1", ("gnu lesser general public license", "version 2.1")),
    ("GPL-3.0", ("gnu general public license", "version 3")),
    ("GPL-2.0", ("gnu general public license", "version 2")),
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MPL-2.0", ("mozilla public license", "2.0")),
    ("CC-BY-NC-SA-4.0", ("attribution-noncommercial-sharealike 4.0",)),
    ("CC-BY-NC-4.0", ("attribution-noncommercial 4.0",)),
    ("CC-BY-SA-4.0", ("attribution-sharealike 4.0",)),
    ("CC-BY-4.0", ("creative commons attribution 4.0",)),
    ("CC0-1.0", ("cc0 1.0 universal",)),
    ("Unlicense", ("this is free and unencumbered software released into the public domain",)),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",)),
    ("ISC", ("permission to use, copy, modify, and/or distribute this software for any purpose",)),
    ("MIT", ("permission is hereby granted, free of charge", "without restriction")),
)


def find_licence_file(root: Path) -> str | None:
    """The name of the repository's top-level licence file, if any (exact names first, then `LICENSE*`);
    only a regular file inside the checkout counts (`checkout.is_file`)."""
    for name in LICENCE_FILE_NAMES:
        if checkout.is_file(root, name):
            return name
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return None
    for name in names:
        if name.isascii() and name.upper().startswith(("LICENSE", "LICENCE", "COPYING")) and checkout.is_file(root, name):
            return name
    return None


def identify(text: str) -> str:
    """The SPDX id of a licence text, or `NOASSERTION` when it matches none we know."""
    declared = _SPDX_LINE.search(text)
    if declared:
        return declared.group(1)
    flat = " ".join(text.lower().split())
    for spdx, phrases in _FINGERPRINTS:
        if all(phrase in flat for phrase in phrases):
            return spdx
    return UNIDENTIFIED


def detect(root: Path) -> tuple[str, str | None]:
    """(SPDX id or NONE/NOASSERTION, licence file name) for a checkout."""
    found = find_licence_file(root)
    if found is None:
        return NO_LICENCE, None
    try:
        text = checkout.read_text(root, found, LICENCE_BYTES)
    except checkout.Refused:
        return UNIDENTIFIED, found
    return identify(text), found


def inline_ok(licence: str | None) -> bool:
    """Whether code under this licence may be shown inline; unknown and absent licences may not."""
    return licence in INLINE_OK


def pointer_only(licence: str | None) -> bool:
    """The complement of `inline_ok`: the page links to the code instead of showing it."""
    return not inline_ok(licence)


def from_github(status: int | None, payload: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """(licence, licence file) from GitHub's answer to `GET /repos/{owner}/{repo}/license`.

    200: the licence's `spdx_id`; GitHub's `NOASSERTION` (a licence file it could not identify) is
    kept, and a missing id counts as that too. 404: `NONE`, the repository has no licence file.
    Anything else, or not asked (None): (None, None), because nobody knows.
    """
    if status == 404:
        return NO_LICENCE, None
    if status != 200 or not isinstance(payload, Mapping):
        return None, None
    info = payload.get("license")
    spdx = info.get("spdx_id") if isinstance(info, Mapping) else None
    path = payload.get("path") if isinstance(payload.get("path"), str) else None
    return (spdx if isinstance(spdx, str) and spdx else UNIDENTIFIED), path


def reach_spdx(licence: str | None) -> str | None:
    """The `spdx` a reach block carries: absent (None) when there is no licence file or nobody asked."""
    return None if licence in (None, NO_LICENCE) else licence
