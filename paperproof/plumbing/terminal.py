"""Text for a terminal: what a repository wrote is shown, never obeyed.

A name, path, message or output from a repository reaches the terminal inside our own lines (the
`verify` summary, a build's skipped files, an error). Left as it is, `\\r` or an ANSI escape in it can
erase or overwrite those lines (print `violations: 0` over a real violation), a bidi override can
reorder them, and a C1 control (U+009B is a one-byte CSI on some terminals) can do what ESC does. So
every such character is written as its escape instead: C0 controls (tab and newline included: a line
of ours is one line), DEL and C1 controls, the bidi embeddings, overrides, isolates and marks, the line
and paragraph separators, and lone surrogates (a file name that was not UTF-8), which could not be
written at all. Controls below U+0020 read as `\\n`, `\\r`, `\\t` or `\\x1b`; the rest as `\\u007f`,
`\\u202e`, the form a JSON string takes too, so `verify --json` stays valid JSON with the same values.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    if character in _SHORT:
        return _SHORT[character]
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """`text` with every character that a terminal would act on (rather than show) written as its escape."""
    return _UNSAFE.sub(_escape, text)


__all__ = ["shown"]
