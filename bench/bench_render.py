"""Benchmark: rendering abstracts, the prose shortcut against Markdown and the sanitiser.

Abstracts from the synthetic archive's generator (`bench/synth_archive.py`, the real field sizes and
characters). For each, side by side in one run: `markdown_html` (the page: prose shortcut, else
Python-Markdown then nh3) and `plain_text` (the description: the shortcut, else Markdown, nh3 and
unescaping), against the full path every abstract would take without the shortcut. Caches are cleared
between texts, so each figure is the cost of one abstract seen once.

    .venv/bin/python bench/bench_render.py [--abstracts 5000]
"""

from __future__ import annotations

import argparse
import sys
import time
from html import unescape
from pathlib import Path

import markdown
import nh3

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import synth_archive  # noqa: E402

from paperproof.build import render  # noqa: E402


def per_text(texts: list[str], convert) -> float:
    """Mean microseconds of `convert` per text, with the module's caches cleared before each."""
    total = 0.0
    for text in texts:
        render.prose_html.cache_clear()
        render._markdown.cache_clear()
        render._flat.cache_clear()
        started = time.perf_counter()
        convert(text)
        total += time.perf_counter() - started
    return total / len(texts) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--abstracts", type=int, default=5000)
    args = parser.parse_args()
    texts = [row["abstract"] for row, _ in zip(synth_archive.paper_rows(args.abstracts, seed=1), range(args.abstracts))
             if row.get("abstract")]
    prose = sum(1 for t in texts if render.prose_html(t) is not None)
    parser_page = markdown.Markdown(extensions=["fenced_code", "tables"], output_format="html")
    parser_plain = markdown.Markdown()

    def full_page(text: str) -> str:
        return render.sanitise(parser_page.reset().convert(text))

    def full_plain(text: str) -> str:
        return " ".join(unescape(nh3.clean(parser_plain.reset().convert(text), tags=set())).split())

    figures = [
        ("page HTML", per_text(texts, render.markdown_html), per_text(texts, full_page)),
        ("plain text", per_text(texts, lambda t: render.plain_text(t, 10_000)), per_text(texts, full_plain)),
    ]
    print(f"{len(texts):,} abstracts, {prose:,} ({100 * prose / len(texts):.0f} %) prose; mean "
          f"{sum(map(len, texts)) / len(texts):,.0f} characters")
    for name, ours, full in figures:
        print(f"{name:<12} shortcut {ours:8.1f} us   Markdown + nh3 {full:8.1f} us   {full / ours:5.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
