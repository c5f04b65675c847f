"""Repository shapes that made the static analysis super-linear, written at a chosen size, and the analysis a
build (or `verify --all`) runs on a repository, timed in CPU seconds.

`scale` is how many "normal files" the repository holds: 10, 100 and 1,000 in `tests/test_analysis_scale.py`.
"""

from __future__ import annotations

import gc
import signal
import time
from collections.abc import Callable
from pathlib import Path

from paperproof.catalogue.callsites import find_call_sites
from paperproof.catalogue.classes import RepoClasses
from paperproof.catalogue.drivers import find_drivers
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.select import DEFAULT_PER_REPO, select


def _name(i: int) -> str:
    """A short identifier for the i-th definition (base 36), so a big module stays under the module cap."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        i, r = divmod(i, 36)
        out = digits[r] + out
        if not i:
            return out


def class_chain(root: Path, scale: int) -> None:
    """8 classes a normal file: C1(C0), C2(C1), ..., each calling the previous one's method (8,000 were cubic in
    the call-site scan); a script drives the last, and the first is a torch module, so every class is a model."""
    n = 8 * scale
    lines = ["import torch.nn as nn\n\n", "class C0(nn.Module):\n def m0(s, x):return x\n"]
    lines += [f"class C{_name(i)}(C{_name(i - 1)}):\n def m{_name(i)}(s, x):return s.m{_name(i - 1)}(x)\n"
              for i in range(1, n)]
    (root / "chain.py").write_text("".join(lines))
    last = _name(n - 1)
    (root / "run.py").write_text(f"from chain import C{last}, C0\n\nmodel = C{last}()\nfor batch in loader:\n"
                                 f"    model.m{last}(batch)\nC0().m0(1)\n")


def function_chain(root: Path, scale: int) -> None:
    """20 one-line functions a normal file, in one module, each calling the next (27,000 at 1,000 took extraction
    10 minutes: every entry's closure is the rest of the module)."""
    n = 20 * scale
    (root / "funcs.py").write_text("".join(f"def f_{_name(i)}(x):f_{_name(i + 1)}(x)\n" for i in range(n))
                                   + f"def f_{_name(n)}(x):x\n")
    (root / "main.py").write_text("from funcs import f_0\n\nif __name__ == '__main__':\n    f_0([1, 2])\n")


def deep_nesting(root: Path, scale: int) -> None:
    """Expressions nested 2.5 levels deep a normal file (2,500 at 1,000: the parser's own limit is near 3,000), in 8
    functions 12 packages down: `m - p0 * log(p0) - ...` and a comparison of predictions with labels at the bottom
    (each level of it walked its whole subtree: quadratic)."""
    depth = 5 * scale // 2
    folder = root
    for level in range(12):
        folder = folder / f"level{level}"
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    body = []
    for k in range(8):
        terms = " - ".join(f"p{j % 7} * log(p{j % 7})" for j in range(depth))
        body.append(f"def score{k}(probs, labels):\n    m = probs.max()\n    preds = probs.argmax()\n"
                    f"    return m - {terms} - (preds == labels)\n")
    (folder / "deep.py").write_text("from math import log\n\n" + "\n".join(body))
    dotted = ".".join(f"level{level}" for level in range(12))
    (root / "main.py").write_text(f"from {dotted}.deep import score0\n\nscore0(probs, labels)\n")


def many_modules(root: Path, scale: int) -> None:
    """3 modules a normal file's worth, one package, every module importing two others (a cycle through all of
    them) and calling their functions; a script imports a few."""
    n = 3 * scale
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(n):
        a, b = (i + 1) % n, (7 * i + 3) % n
        (pkg / f"m{i}.py").write_text(
            f"from pkg.m{a} import g{a}\nfrom pkg import m{b}\n\n\ndef g{i}(x):\n    return g{a}(x) + m{b}.g{b}(x)\n")
    (root / "main.py").write_text("".join(f"from pkg.m{i} import g{i}\n" for i in range(0, n, max(1, n // 10)))
                                  + "\ng0([1])\n")


SHAPES: dict[str, Callable[[Path, int], None]] = {
    "class chain": class_chain, "function chain": function_chain, "deep nesting": deep_nesting,
    "many modules": many_modules,
}


def analyse(root: Path) -> int:
    """What a build reads of one repository with `ast`: extraction (with evidence), selection, the closures and
    module hashes of the selected entries, the call sites of every entry (`verify --all` scans them all), the drivers
    and the bases of the selected classes. Returns how many entries were found."""
    report = extract_repo(root, "o/r")
    chosen = select(report.entries, set(), "", DEFAULT_PER_REPO)
    classes = RepoClasses(root, report.entries[0].sys_path if report.entries else ("",), "o/r")
    for c in chosen:
        assert c.entry.closure and c.entry.closure_modules is not None
        if c.entry.kind == "class":
            classes.with_bases(c.entry)
    find_call_sites(root, report.entries)
    find_drivers(root, report.entries)
    return len(report.entries)


class TookTooLong(Exception):
    pass


def cpu_seconds(root: Path, at_least: float = 0.3, limit: float = 300.0) -> float:
    """CPU seconds one analysis of `root` takes: repeated until `at_least` seconds have passed (small repositories),
    averaged; `TookTooLong` past `limit` CPU seconds for one run (quadratic code on the big shapes)."""
    def stop(signum: int, frame: object) -> None:
        raise TookTooLong(f"one analysis took more than {limit:.0f} CPU seconds")

    previous = signal.signal(signal.SIGPROF, stop)
    try:
        runs, total = 0, 0.0
        while total < at_least and runs < 50:
            gc.collect()
            signal.setitimer(signal.ITIMER_PROF, limit)
            start = time.process_time()
            analyse(root)
            total += time.process_time() - start
            signal.setitimer(signal.ITIMER_PROF, 0)
            runs += 1
        return total / runs
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
