"""The answer at the top of a paper's page: does its code do what the paper says?

A reader opening a paper wants one answer before the tables. It is counted in samples (entries of the
paper's code), from the same twin samples the tables below show, so the sentence and the tables cannot
disagree. A sample whose output was recognised as a metric of the paper was checked against it; it is
graded by its most severe finding:

- `faithful`: every recognised output computes the paper's definition (or a variant whose difference no
  case of the run shows, or which is its caller's choice);
- `departs_rescales`: it departs, but keeps the paper's ranking of the samples (a count for a fraction);
- `departs_ranking`: it departs and the ranking changes on the same run. A departure no run measured
  counts here too: nothing shows that it keeps the ranking.

The same grades make the badges of the sample tables and the home page's lists, so a paper whose code
departs is never shown as if faithful.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from paperproof.build.pages import PaperVerdict, TwinSample, WorstDeparture
from paperproof.catalogue.sample import Fidelity

Grade = Literal["faithful", "departs_rescales", "departs_ranking"]

# The badge of each grade, most severe last; `not_checked` is a paper's grade when no sample was checked.
GRADE_LABELS: dict[str, str] = {
    "faithful": "faithful",
    "departs_rescales": "departs (rescales)",
    "departs_ranking": "departs (changes the ranking)",
    "not_checked": "not checked against the paper",
}
GRADE_MEANINGS: dict[str, str] = {
    "faithful": "Checked against the paper: every output recognised as one of its metrics computes the paper's "
                "definition on the run",
    "departs_rescales": "Checked against the paper: an output departs from its definition, but ranks the samples "
                        "as the paper's metric does on the same run (a count for a fraction, a constant factor)",
    "departs_ranking": "Checked against the paper: an output departs from its definition and ranks the samples "
                       "differently from the paper's metric on the same run (or no run measured whether it does)",
    "not_checked": "No output of this code was recognised as a metric the paper defines, so nothing compared it "
                   "with the paper",
}
_ORDER: tuple[Grade, ...] = ("faithful", "departs_rescales", "departs_ranking")


def severity_rank(finding: Fidelity) -> tuple[int, float]:
    """Most severe first: departures that change the ranking (lowest rank correlation first), then those that
    only rescale, then departures without a measure, then faithful outputs."""
    if not finding.departures:
        return (3, 0.0)
    w = finding.worked
    if w is None:
        return (2, 0.0)
    rho = w.rank_correlation if w.rank_correlation is not None else -1.0
    return (0, rho) if w.severity == "changes_ranking" else (1, rho)


def finding_grade(finding: Fidelity) -> Grade:
    if not finding.departures:
        return "faithful"
    if finding.worked is not None and finding.worked.severity == "rescales":
        return "departs_rescales"
    return "departs_ranking"


def sample_grade(fidelity: object) -> Grade | None:
    """The grade of a sample by its most severe finding; None when nothing was compared with the paper."""
    if not isinstance(fidelity, list) or not fidelity:
        return None
    return max((finding_grade(f) for f in fidelity), key=_ORDER.index)


def paper_verdict(samples: Sequence[TwinSample]) -> PaperVerdict:
    graded = [(s, g) for s in samples if (g := sample_grade(s.fidelity)) is not None]
    counts = {grade: sum(1 for _, g in graded if g == grade) for grade in _ORDER}
    departing = [(s, f) for s, _ in graded if isinstance(s.fidelity, list) for f in s.fidelity if f.departures]
    worst = None
    if departing:
        s, f = min(departing, key=lambda sf: (severity_rank(sf[1]), sf[0].repo_kind != "official", sf[0].repo.lower(),
                                              sf[0].entry, sf[1].output))
        worst = WorstDeparture(
            entry=s.entry, repo=s.repo, repo_kind=s.repo_kind, url=s.url if isinstance(s.url, str) else "",
            metric=f.metric, output=f.output,
            severity="rescales" if finding_grade(f) == "departs_rescales" else "changes_ranking",
            rank_correlation=f.worked.rank_correlation if f.worked is not None else None, reason=f.departures[0])
    grade = max((g for _, g in graded), key=_ORDER.index, default="not_checked")
    return PaperVerdict(grade=grade, checked=len(graded), faithful=counts["faithful"],
                        departs_rescales=counts["departs_rescales"], departs_ranking=counts["departs_ranking"],
                        worst=worst, text=_text(samples, len(graded), counts, worst))


def _text(samples: Sequence[TwinSample], checked: int, counts: dict[Grade, int], worst: WorstDeparture | None) -> str:
    """One or two sentences: the counts, then the worst departure with its reason."""
    n = len(samples)
    if n == 0:
        return "No code of this paper was run: none of its repositories has a sample in this build."
    entries = f"{n} {'entry' if n == 1 else 'entries'} taken from this paper's code"
    if checked == 0:
        ran = sum(1 for s in samples if s.status.startswith("ran"))
        return (f"None of the {entries} was checked against the paper: no output was recognised as a metric it "
                f"defines ({ran} ran, checked at most against their own declarations).")
    departs = counts["departs_rescales"] + counts["departs_ranking"]
    head = (f"{checked} of the {entries} {'was' if checked == 1 else 'were'} checked against the paper: "
            f"{counts['faithful']} faithful, {_count(departs, 'departs', 'depart')}")
    if departs:
        head += (f" ({_count(counts['departs_ranking'], 'changes', 'change')} the ranking of the samples, "
                 f"{_count(counts['departs_rescales'], 'only rescales', 'only rescale')} it)")
    if worst is None:
        return head + "."
    where = f"the official repository {worst.repo}" if worst.repo_kind == "official" else worst.repo
    figure = (f" (Spearman ρ {worst.rank_correlation:.2f} against the paper's metric)"
              if worst.rank_correlation is not None else "")
    return f"{head}. The worst: {worst.entry} ({worst.metric}, in {where}): {worst.reason.rstrip('.')}{figure}."


def _count(n: int, one: str, many: str) -> str:
    return f"none {one}" if n == 0 else f"{n} {one if n == 1 else many}"


__all__ = ["GRADE_LABELS", "GRADE_MEANINGS", "Grade", "finding_grade", "paper_verdict", "sample_grade", "severity_rank"]
