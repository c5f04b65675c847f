"""Benchmark: how the estimator verdict reads faithful Monte Carlo estimates of KNN-Shapley, and what it refuses.

On the fixture cases `verify` gives an entry of features and labels (the synthesized typical and edge cases, with
a held-out split as the test set), faithful permutation-sampling estimates of KNN-Shapley at K = 5 are drawn with
T orderings each (`metrics.valuation.knn_marginals`, averaged), for several T and seeds, and read by
`feature_references.estimated` as `verify` reads an output. Printed per case and budget: how often the estimate is
consistent with the paper's variant at its own K (its coverage: the bound is set for α = 0.01 under the central
limit theorem), how often the likeliest variant is that one, and the median of T̂ / T (the budget read back over
the budget used). Beside them, outputs that are no estimate of it: the exact values shuffled over the points, and
the exact values at K = 1 (another K), with how often each is read as an estimate of the paper's variant at K = 5.
A faithful estimate equal to the exact value (where every ordering gives each point the same marginal) is
`verify`'s exact match; it counts as consistent here.

    .venv/bin/python bench/bench_estimator.py [--seeds 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperproof.catalogue.fixture_case import FixtureArg, FixtureCase, ValueSpec  # noqa: E402
from paperproof.fixtures.synth import CASE_PLAN  # noqa: E402
from paperproof.verify import feature_references as R  # noqa: E402
from paperproof.verify.metrics import valuation  # noqa: E402

K, BUDGETS, ATOL, RTOL = 5, (30, 100, 300), 1e-5, 1e-4


def _case(case_id: str, seed: int, dims: dict[str, int]) -> FixtureCase:
    held = {"split": "held_out"}
    return FixtureCase(case_id=case_id, seed=seed, dims=dims, args=[
        FixtureArg(name="x_train", spec=ValueSpec(kind="embeddings")),
        FixtureArg(name="y_train", spec=ValueSpec(kind="labels")),
        FixtureArg(name="x_val", spec=ValueSpec(kind="embeddings", params=held)),
        FixtureArg(name="y_val", spec=ValueSpec(kind="labels", params=held))])


def _read(case: FixtureCase, values: np.ndarray) -> tuple[bool, bool, float | None]:
    """(consistent with the paper's K = 5, the likeliest variant is it, T̂ read for it). An estimate equal to the
    exact value (a case where every ordering gives each point the same marginal) is `verify`'s exact match, which
    `estimated` leaves to it: counted here as consistent and likeliest, with no T̂."""
    exact = R.feature_variants(case)["knn_shapley", f"mean_k{K}"]
    if np.allclose(values, exact, atol=ATOL, rtol=RTOL):
        return True, True, None
    found = {a.variant: a for a in R.estimated(case, values, ATOL, RTOL)}
    paper = found.get(f"mean_k{K}")
    best = max(found.values(), key=lambda a: a.log_likelihood) if found else None
    return paper is not None, best is not None and best.variant == f"mean_k{K}", paper.budget if paper else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args()
    print(f"faithful permutation-sampling estimates of KNN-Shapley at K = {K}, {args.seeds} seeds per row")
    print(f"{'case':<12} {'N':>3} {'T':>5}  {'consistent':>10}  {'likeliest':>9}  {'median T̂/T':>11}")
    for case_id, _kind, seed, dims in CASE_PLAN:
        case = _case(case_id, seed, {k: v for k, v in dims.items() if k in ("E", "N", "C", "D")})
        found = R.points(case)
        if found is None:
            continue
        n = len(found[1])
        exact = valuation.knn_shapley(*found, K)
        for budget in BUDGETS:
            reads = []
            for s in range(args.seeds):
                rng = np.random.default_rng(10_000 + s)
                order = np.argsort(rng.random((budget, n)), axis=1)
                reads.append(_read(case, valuation.knn_marginals(*found, K, order).mean(0)))
            ratios = [r[2] / budget for r in reads if r[2] is not None]
            median = f"{statistics.median(ratios):.2f}" if ratios else "—"
            print(f"{case_id:<12} {n:>3} {budget:>5}  {sum(r[0] for r in reads) / len(reads):>10.0%}  "
                  f"{sum(r[1] for r in reads) / len(reads):>9.0%}  {median:>11}")
        shuffled = [_read(case, np.random.default_rng(s).permutation(exact))[0] for s in range(args.seeds)]
        other_k = _read(case, valuation.knn_shapley(*found, 1))[0]
        print(f"{case_id:<12} {n:>3}  no estimate: shuffled exact values read as K = {K} in "
              f"{sum(shuffled) / len(shuffled):.0%}; exact values at K = 1 read as K = {K}: {'yes' if other_k else 'no'}")


if __name__ == "__main__":
    main()
