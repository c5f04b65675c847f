"""Development measure on real research code: how many selected entries run, and how many say something.

Given a folder of checkouts (`owner+name/` each, exported from their snapshots; never committed),
it runs `paperproof verify` as a new user would (the default selection of each repository) and
prints per repository the entries selected, the status of each with its reason, the share that
ran (every `ran*` status) and the share that was informative (`ran`, `ran_violates`,
`ran_draft_wrong`), where each argument's recipe came from (the repository's call site, the body's use, a
docstring, an annotation, a probe run, the name: `fixtures.arguments`), how each entry was loaded (its module
imported, or its closure), and the time each repository took; then the totals, and the median and maximum
time per repository. Statuses of the protocols (`--all` adds every entry, not only the selected).
The same shares are printed for the hardness entries alone (chosen for hardness evidence in their code or
for a recognised metric in what they returned), the measure issue 23 sets its targets on, with what those
that ran were checked against (`Sample.checked`: the paper's definition, contracts only, nothing); the rest
of a selection are entries kept to fill its limit.

With `--labels` (a hand-labelled list as `bench_select.py` reads it: per repository the entries that compute a
per-sample score, `hardness`, and helpers that must not be taken, `not_hardness`), it also prints the selection's
precision (of the entries selected as scoring, the share the list calls scoring; of all selected, the same) and
recall@8 (labelled scoring entries among those selected, at most 8, over min(labelled, 8)), per repository and
summed over them, as `verify` selected with its default flags (the drivers' observations included).

    .venv/bin/python bench/bench_real.py /tmp/checkouts [--workers 2] [--all] [--labels LABELS.csv]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_select import read_labels  # noqa: E402
from paperproof.verify.checkout import verify_checkout  # noqa: E402

INFORMATIVE = frozenset({"ran", "ran_violates", "ran_draft_wrong"})
# a sample's link_basis when chosen for what its code does, or for what a driver of the repository saw it return
HARDNESS = frozenset({"hardness_evidence", "behaviour", "observed"})


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="every entry of each repository, not the selection")
    parser.add_argument("--quiet", action="store_true", help="totals only, no per-entry lines")
    parser.add_argument("--environments", type=Path, default=Path(".paperproof-cache/envs"),
                        help="where missing imports are installed from wheels (cached)")
    parser.add_argument("--no-install", action="store_true", help="install nothing: stand-ins only")
    parser.add_argument("--no-observe", action="store_true",
                        help="run no driver of the repository (the selection and arguments as before issue 45)")
    parser.add_argument("--labels", type=Path, help="hand-labelled entries: print selection precision and recall@8")
    args = parser.parse_args(argv)
    repos = sorted(p for p in args.checkouts.iterdir() if p.is_dir())
    if not repos:
        print(f"no checkouts in {args.checkouts}", file=sys.stderr)
        return 2
    totals: Counter[str] = Counter()
    hardness: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    loads: Counter[str] = Counter()
    checked: Counter[str] = Counter()  # hardness entries that ran, by what their run was checked against
    seconds: list[float] = []
    drivers: Counter[str] = Counter()
    observed: Counter[str] = Counter()  # scoring entries (*) by whether a driver called them
    replaced: Counter[str] = Counter()  # what the drivers were given planted stand-ins for
    labels = read_labels(args.labels) if args.labels else {}
    selection: Counter[str] = Counter()  # summed over labelled repositories: see `_selection`
    for repo in repos:
        start = time.perf_counter()
        verified = verify_checkout(repo, everything=args.all, workers=args.workers,
                                   environments=None if args.no_install else args.environments,
                                   observe=not args.no_observe)
        samples = verified.samples
        took = time.perf_counter() - start
        runs = Counter(d.status for d in verified.drivers)
        drivers.update(runs)
        replaced.update(r for d in verified.drivers for r in d.replaced)
        observed.update("observed" if s.observed else "guessed" for s in samples if s.link_basis in HARDNESS)
        seconds.append(took)
        statuses = Counter(s.status for s in samples)
        totals.update(statuses)
        hardness.update(s.status for s in samples if s.link_basis in HARDNESS)
        ran = sum(n for s, n in statuses.items() if s.startswith("ran"))
        informative = sum(n for s, n in statuses.items() if s in INFORMATIVE)
        here = Counter(a.source for s in samples for a in s.arguments)
        sources.update(here)
        loads.update(s.loaded or "not loaded" for s in samples)
        checked.update(s.checked for s in samples if s.link_basis in HARDNESS and s.checked)
        print(f"== {repo.name}: {len(samples)} selected, ran {share(ran, len(samples))}, "
              f"informative {share(informative, len(samples))}, {took:.1f} s; arguments from "
              + (", ".join(f"{k} {n}" for k, n in sorted(here.items())) or "none")
              + "; drivers " + (", ".join(f"{k} {n}" for k, n in sorted(runs.items())) or "none"))
        if labels:
            here_selection = _selection(samples, labels.get(repo.name.replace("+", "/"), {}))
            selection.update(here_selection)
            print("  selection: " + _selection_line(here_selection))
        for d in verified.drivers:
            if d.status != "not_run" and not args.quiet:
                print(f"  driver {d.status:<8} {d.driver.target} ({d.ended}{': ' + d.error if d.error else ''}), "
                      f"called {len(d.observed)} of the repository's functions"
                      + (f"; replaced {'; '.join(d.replaced)}" if d.replaced else ""))
        if not args.quiet:
            for s in samples:
                mark = ("o" if s.observed else "*") if s.link_basis in HARDNESS else " "
                print(f" {mark}{s.status:<16} {s.path}::{s.qualname}\n  {'':<16} {s.reason[:200]}")
                on = s.observed.on_planted if s.observed else None
                if on is not None:
                    print(f"  {'':<16} on the driver's planted stand-in ({on.samples}): "
                          + (", ".join(f"{k} AUROC {d.auroc:.2f}" for k, d in on.figures.items()) or on.orientation_basis))
    for title, counted in (("total", totals), ("hardness entries (*)", hardness)):
        count = sum(counted.values())
        ran = sum(n for s, n in counted.items() if s.startswith("ran"))
        informative = sum(n for s, n in counted.items() if s in INFORMATIVE)
        print(f"\n{title}: {count} entries in {len(repos)} repositories; ran {share(ran, count)}, "
              f"informative {share(informative, count)}")
        print("statuses: " + ", ".join(f"{s} {n}" for s, n in sorted(counted.items())))
    print("hardness entries that ran, checked against: "
          + ", ".join(f"{k} {n}" for k, n in sorted(checked.items())) + " (the paper's definition, the code's own "
          "contracts only, nothing)")
    print("scoring entries (*, o) observed being called by a driver or guessed: "
          + (", ".join(f"{k} {n}" for k, n in sorted(observed.items())) or "none"))
    print("drivers: " + (", ".join(f"{k} {n}" for k, n in sorted(drivers.items())) or "none"))
    print("replaced by planted stand-ins: " + (", ".join(f"{k} ×{n}" for k, n in sorted(replaced.items())) or "nothing"))
    print("arguments from: " + ", ".join(f"{k} {n}" for k, n in sorted(sources.items())))
    print("loaded: " + ", ".join(f"{k} {n}" for k, n in sorted(loads.items())))
    if labels:
        print("selection, all labelled repositories: " + _selection_line(selection))
    print(f"verify time per repository: median {statistics.median(seconds):.1f} s, max {max(seconds):.1f} s "
          f"(workers {args.workers})")
    return 0


def _selection(samples: list, truth: dict[tuple[str, str], str]) -> Counter[str]:
    """Counts for precision and recall@8 of one repository's selection against its labels."""
    hard = {key for key, label in truth.items() if label == "hardness"}
    chosen = [(s.path, s.qualname.split(".")[0]) for s in samples]
    scoring = [(s.path, s.qualname.split(".")[0]) for s in samples if s.link_basis in HARDNESS]
    return Counter({"scoring": len(scoring), "scoring_true": sum(k in hard for k in scoring),
                    "selected": len(chosen), "selected_true": sum(k in hard for k in chosen),
                    "traps": sum(truth.get(k) == "not_hardness" for k in chosen),
                    "recall_num": min(len(set(chosen) & hard), 8), "recall_den": min(len(hard), 8)})


def _selection_line(counts: Counter[str]) -> str:
    return (f"precision {share(counts['scoring_true'], counts['scoring'])} of those selected as scoring, "
            f"{share(counts['selected_true'], counts['selected'])} of all selected; recall@8 "
            f"{share(counts['recall_num'], counts['recall_den'])}; helpers labelled not to take, taken {counts['traps']}")


if __name__ == "__main__":
    raise SystemExit(main())
