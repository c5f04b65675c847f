"""Names NumPy removed get their old meanings in a real process, and only those."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from paperproof.runner import legacy_numpy

PROGRAM = textwrap.dedent("""
    import numpy as np
    from paperproof.runner import legacy_numpy

    before = {name: np.__dict__[name] for name in ("inf", "prod", "bool")}
    bound = legacy_numpy.install()
    assert np.Inf == np.inf and np.NINF == -np.inf and np.isnan(np.NaN)
    assert np.float is float and np.int is int and np.float_ is np.float64
    assert np.product([2, 3]) == 6 and np.cumproduct([1, 2, 3]).tolist() == [1, 2, 6]
    assert np.asfarray([1, 2]).dtype == np.float64 and np.asfarray([1], dtype=np.float32).dtype == np.float32
    assert np.in1d(np.array([[1, 2], [3, 4]]), [2, 3]).tolist() == [False, True, True, False]
    assert {name: np.__dict__[name] for name in before} == before  # what NumPy still defines is untouched
    assert "bool" not in bound and "Inf" in bound
    assert legacy_numpy.install() == []  # once bound, nothing is bound again
    print("ok")
""")


def test_removed_names_get_their_old_meanings_in_a_process() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_names_a_source_uses_are_found_in_order_and_only_removed_ones() -> None:
    source = "best = np.Inf\nx = numpy.product(a)\ny = np.inf + np.float(2)\nz = np.Inf\nnp.bool_(1)"
    assert legacy_numpy.used(source, present=frozenset()) == ["Inf", "product", "float"]
    assert legacy_numpy.used(source, present=frozenset({"product"})) == ["Inf", "float"]
    assert legacy_numpy.used("np.Information = 1\nnp.float64(2)", present=frozenset()) == []
