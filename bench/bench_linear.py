"""How the builder's reading of a repository grows with its size (issue 44): every reader of repository text and
the static analysis of whole repositories, on inputs crafted for their worst case, at 10x, 100x and 1,000x a
normal size, side by side in one run. Prints CPU seconds at each size and the growth from one size to the next:
linear code grows about 10x a step, quadratic code 100x.

    .venv/bin/python bench/bench_linear.py                 # text readers and repository shapes
    .venv/bin/python bench/bench_linear.py --only shapes   # or: --only text

The inputs are the tests' (`tests/test_linear_text.py`, `tests/analysis_shapes.py`), which assert the same growth.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paperproof.catalogue.extract import extract_module  # noqa: E402
from tests import analysis_shapes  # noqa: E402
from tests.test_linear_text import EXTRACT_DOCSTRINGS, READERS, SCALES, _cpu  # noqa: E402

LIMIT = 60.0  # CPU seconds one measurement may take before it is stopped and shown as "> LIMIT"


def _docstring_reader(doc: str) -> object:
    return extract_module(f'def f(a, b):\n    """{doc}"""\n    return a\n', repo="o/r", path="m.py")


def _row(what: str, took: dict[int, float]) -> str:
    cells = [f"> {LIMIT:.0f}" if took[s] == float("inf") else f"{took[s]:.4f}" for s in SCALES]
    steps = []
    for small, large in zip(SCALES, SCALES[1:]):
        a, b = took[small], took[large]
        steps.append("—" if b == float("inf") or a <= 0 else f"{b / a:.1f}×")
    return f"| {what} | " + " | ".join(cells) + " | " + " | ".join(steps) + " |"


def text_readers() -> None:
    print(f"| reader | {' | '.join(f'{s}x (CPU s)' for s in SCALES)} | 10→100 | 100→1,000 |")
    print("|---|" + "---|" * (len(SCALES) + 2))
    readers = [*READERS, *((f"extract: {what} lines", _docstring_reader, make) for what, make in EXTRACT_DOCSTRINGS)]
    for what, read, make in readers:
        read(make(1))
        took: dict[int, float] = {}
        for scale in SCALES:
            text = make(scale)
            took[scale] = float("inf") if took.get(scale // 10) == float("inf") else \
                _cpu(lambda: read(text), budget=LIMIT)  # noqa: B023
        print(_row(what, took), flush=True)


def repository_shapes() -> None:
    print(f"| repository shape | {' | '.join(f'{s}x (CPU s)' for s in SCALES)} | 10→100 | 100→1,000 |")
    print("|---|" + "---|" * (len(SCALES) + 2))
    for name, write in analysis_shapes.SHAPES.items():
        took: dict[int, float] = {}
        for scale in SCALES:
            if took.get(scale // 10) == float("inf"):
                took[scale] = float("inf")
                continue
            with tempfile.TemporaryDirectory() as folder:
                root = Path(folder)
                write(root, scale)
                try:
                    took[scale] = analysis_shapes.cpu_seconds(root, limit=LIMIT)
                except analysis_shapes.TookTooLong:
                    took[scale] = float("inf")
        print(_row(name, took), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("text", "shapes"))
    args = parser.parse_args()
    if args.only != "shapes":
        text_readers()
        print()
    if args.only != "text":
        repository_shapes()


if __name__ == "__main__":
    main()
