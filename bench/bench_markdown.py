"""What bounding untrusted Markdown saves (`build.render.bounded_markdown`): Python-Markdown as the site
configures it, on the raw text and through `render.markdown_html`, side by side in one run.

    .venv/bin/python bench/bench_markdown.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import markdown

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paperproof.build import render  # noqa: E402

CASES = {
    "5,000 unclosed [ in a paragraph": "[" * 5000,
    "100 lines of 100 [ (one paragraph)": ("[" * 100 + "\n") * 100,
    "5,000 links never closed": "[a](" * 5000,
    "50,000 <div>": "<div>" * 50_000,
    "a list nested 400 deep": "".join("  " * i + "- x\n" for i in range(400)),
    "an ordinary list of 3,000 links": "\n".join(f"- [paper {i}](https://example.org/{i}) *{i}*" for i in range(3000)),
}


def _time(function, text: str) -> float:
    started = time.perf_counter()
    function(text)
    return time.perf_counter() - started


def main() -> None:
    raw = markdown.Markdown(extensions=["fenced_code", "tables"], output_format="html")

    def unbounded(text: str) -> str:
        raw.reset()
        return raw.convert(text)

    print(f"{'input':40} {'Python-Markdown':>16} {'markdown_html':>14} {'ratio':>8}")
    for name, text in CASES.items():
        before = _time(unbounded, text)
        after = _time(render.markdown_html, text)
        print(f"{name:40} {before:14.2f} s {after:12.3f} s {before / after:7.0f}×")


if __name__ == "__main__":
    main()
