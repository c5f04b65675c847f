"""What `verify` reports, on the real sample records the catalogue ships (H-CAT's, Cartography's): each finding once,
at its file and line, and the `--limit` hint only when most samples were cut short by their budget."""

from __future__ import annotations

import json
import types

from paperproof.build.shipped import bundled_results
from paperproof.catalogue.sample import CaseSummary, Sample
from paperproof.verify.findings import budget_hint, findings, summary

RESULTS = bundled_results()


def shipped(name: str) -> list[Sample]:
    record = json.loads((RESULTS / "github.com" / f"{name}.json").read_text(encoding="utf-8"))
    return [Sample.model_validate(s) for s in record["samples"]]


def test_a_departure_is_one_finding_at_the_departing_line_not_also_a_violation():
    samples = shipped("allenai+cartography")
    found = findings(samples)
    # compute_correctness is ran_violates because it departs: one finding, a departure, at line 63 of its file
    correctness = [f for f in found if f.entry == "compute_correctness"]
    assert [(f.kind, f.line) for f in correctness] == [("departure", 63)]
    assert correctness[0].text().startswith("cartography/selection/train_dy_filtering.py:63 compute_correctness: "
                                            "departs from the paper's correctness (return value): ")
    departing = {s.entry for s in samples if any(f.departures for f in s.fidelity)}
    assert {f.entry for f in found} == departing and all(f.kind == "departure" for f in found)
    assert len({(f.path, f.line, f.entry, f.reason) for f in found}) == len(found)


def blocked(sample: Sample) -> Sample:
    """The sample with a case the sandbox blocked, as the harness records one."""
    cases = [CaseSummary(case_id="typical", kind="typical", args={}, outcome="blocked",
                         exception="PermissionError: network access is blocked")]
    return sample.model_copy(update={"status": "unverified", "cases": cases,
                                      "blocked": ["tried to open a network connection (blocked)"]})


def test_every_kind_is_counted_once_and_each_finding_has_a_line():
    samples = shipped("seedatnabeel+h-cat")
    detector = next(i for i, s in enumerate(samples) if s.entry == "predict_detector")
    samples[detector] = blocked(samples[detector])
    found = findings(samples)
    kinds = [(f.entry, f.kind) for f in found]
    assert kinds.count(("predict_detector", "blocked")) == 1  # its cases were blocked: said once, at the entry's line
    assert ("EL2N_Class", "departure") in kinds and ("EL2N_Class", "violation") not in kinds
    assert all(f.line >= 1 for f in found)
    assert found == sorted(found)  # by file, then line
    lines = summary(found)
    counted = {kind: sum(f.kind == kind for f in found) for kind in ("violation", "departure", "blocked")}
    assert counted["departure"] >= 5 and counted["blocked"] == 1
    assert lines[0] == (f"findings: {len(found)} (violations {counted['violation']}, departures "
                        f"{counted['departure']}, blocked 1)")
    assert lines[1:] == [f"  {f.text()}" for f in found]
    # a contract violation without a departure is a violation, with the sample's reason
    plain = samples[2].model_copy(update={"status": "ran_violates", "reason": "on case typical it broke its promise",
                                          "fidelity": []})
    assert [(f.kind, f.reason) for f in findings([plain])] == [
        ("violation", "violates its contract: on case typical it broke its promise")]
    assert summary([]) == ["findings: 0 (violations 0, departures 0, blocked 0)"]


def cut(sample: Sample, how: str = "CPU time limit of 20 s reached") -> Sample:
    """The sample with its first case cut short by the budget (as the harness says it) and the rest not reached."""
    cases = [CaseSummary(case_id="typical", kind="typical", args={}, outcome="exited", exception=how)]
    cases += [CaseSummary(case_id=f"c{i}", kind="edge", args={}, outcome="not_reached") for i in range(3)]
    return sample.model_copy(update={"status": "unverified", "cases": cases})


def test_the_limit_is_suggested_only_when_most_samples_were_cut_short():
    samples = [s for s in shipped("seedatnabeel+h-cat") if budget_hint([s]) is None][:5]  # none cut short
    assert len(samples) == 5 and budget_hint(samples) is None
    assert budget_hint([cut(s) for s in samples[:2]] + samples[2:]) is None  # two of five
    hint = budget_hint([cut(s) for s in samples[:3]] + samples[3:])  # three of five
    assert hint == ("most samples were cut short by their budget (3 of 5 had a case reach the CPU time limit of 20 s):"
                    " give them more with --limit cpu_seconds=60")
    wall = budget_hint([cut(s, "wall-clock limit of 5 s reached") for s in samples])
    assert wall is not None and wall.endswith("--limit wall_seconds=15")
    assert budget_hint([]) is None
    # the harness's own words for a case that spent its CPU budget
    from paperproof.runner.harness import _Supervisor
    from paperproof.runner.sandbox import Limits

    said = _Supervisor._cpu_line(types.SimpleNamespace(limits=Limits(cpu_seconds=20)))  # type: ignore[arg-type]
    assert budget_hint([cut(s, said) for s in samples]) == hint.replace("3 of 5", "5 of 5")
