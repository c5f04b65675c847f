"""Untrusted Markdown is bounded before Python-Markdown sees it: what would cost it minutes is shown
as text, deep nesting is flattened, and ordinary READMEs (long lists, tables, code) are left alone."""

from __future__ import annotations

import pytest

from paperproof.build import render

AWESOME = "\n".join(f"- [paper {i}](https://example.org/{i}) *{i}* `code`" for i in range(3000))
TABLE = "| a | b |\n|---|---|\n" + "\n".join(f"| [x{i}](https://e.org/{i}) | *{i}* |" for i in range(3000))
FENCED = "# Usage\n\n```python\n" + "\n".join("x = [[[[((((<<" for _ in range(10000)) + "\n```\n"


@pytest.mark.parametrize("text", [AWESOME, TABLE, FENCED], ids=["list", "table", "fenced"])
def test_ordinary_readmes_are_left_as_they_are(text: str) -> None:
    assert render.bounded_markdown(text) == text


@pytest.mark.parametrize("text", [
    "[" * 5000,  # unclosed brackets: 19 s in Python-Markdown
    ("[" * 100 + "\n") * 1000,  # one paragraph of many lines
    "[a](" * 5000,  # links never closed
    "<div>" * 100_000,
    "\n\n".join("[" * 900 for _ in range(10)),  # each paragraph under the cap, together over the budget
], ids=["brackets", "lines", "links", "html", "budget"])
def test_markup_that_would_take_minutes_is_shown_as_text(text: str) -> None:
    assert render.bounded_markdown(text) is None
    html = render.markdown_html(text)
    assert html.startswith("<p><em>Shown as plain text: too much markup to render.</em></p>")
    assert "<div>" not in html and "<a " not in html


def test_deep_nesting_is_flattened_and_long_text_cut() -> None:
    nested = "".join("  " * i + "- x\n" for i in range(2000))
    bounded = render.bounded_markdown(nested)
    assert max(len(line) - len(line.lstrip()) for line in bounded.split("\n")) == render.MAX_INDENT
    quoted = render.bounded_markdown(">" * 1000 + " deep")
    assert quoted == "> " * render.MAX_QUOTE + "deep"
    long = render.bounded_markdown("word " * 100_000)
    assert long.endswith("*(cut: the text is longer than this page shows)*")
    assert len(long) < render.MARKDOWN_CHARS + 100
