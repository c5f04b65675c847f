"""The status rules, one by one, on run results we construct."""

from __future__ import annotations

from paperproof.catalogue.extract import extract_module
from paperproof.catalogue.fixture_case import FixtureSet, Unsynthesizable
from paperproof.catalogue.run_result import CaseOutcome, EncodedValue, ExceptionInfo, RunResult
from paperproof.fixtures.synth import synthesize
from paperproof.verify.contracts import draft
from paperproof.verify.verdict import judge

ENTRY = extract_module("def f(x: int) -> float:\n    pass\n", repo="o/r", path="m.py")[0]
FIXTURES = synthesize(ENTRY)
CONTRACT = draft(ENTRY)
FLOAT = EncodedValue(type="float", repr="0.5", min=0.5, max=0.5, finite=True, digest="f")
TEXT = EncodedValue(type="str", repr="'x'", digest="s")


def result(cases, end="completed", load_error=None, reason=None):
    return RunResult(code_sha256=ENTRY.code_sha256, fixture_digest="d", runner_version="1", end=end,
                     reason=reason, load_error=load_error, cases=cases)


def every(**kwargs):
    return [CaseOutcome(case_id=c.case_id, **kwargs) for c in FIXTURES.cases]


def raised(kind: str):
    return every(outcome="raised", exception=ExceptionInfo(type=kind, message="boom"))


def test_ran_with_contract_passes():
    v = judge(FIXTURES, result(every(outcome="returned", value=FLOAT, repeat_equal=True)), CONTRACT)
    assert (v.status, v.contract_check, v.verification_level) == ("ran", "PASSES", 1)
    assert v.fingerprint is not None


def test_declared_clause_broken_is_a_violation():
    v = judge(FIXTURES, result(every(outcome="returned", value=TEXT)), CONTRACT)
    assert (v.status, v.contract_check) == ("ran_violates", "VIOLATES")
    assert "its own promise" in v.reason and v.failed_clause.startswith("returns float")


def test_drafted_clause_broken_is_our_mistake():
    doc_entry = extract_module('def f(x: int):\n    """F.\n\n    Returns:\n        float: the value\n    """\n',
                               repo="o/r", path="m.py")[0]
    v = judge(synthesize(doc_entry), result(every(outcome="returned", value=TEXT)), draft(doc_entry))
    assert (v.status, v.contract_check) == ("ran_draft_wrong", "OUTPUT_MISDECLARED")


def test_raises_at_input_boundary_is_charged_to_the_fixture():
    v = judge(FIXTURES, result(raised("KeyError")), CONTRACT)
    assert (v.status, v.contract_check) == ("ran_fixture", "RAISES") and "input boundary" in v.reason


def test_raises_past_the_boundary_is_the_codes_failure():
    v = judge(FIXTURES, result(raised("ZeroDivisionError")), CONTRACT)
    assert (v.status, v.contract_check) == ("ran_violates", "RAISES")


def test_unverified_reasons():
    no_fixture = FixtureSet(version="1", missing=[Unsynthesizable(param="model", reason="parameter `model` needs a trained model")])
    assert judge(no_fixture, None, CONTRACT).reason == "no fixture: parameter `model` needs a trained model"
    missing = ExceptionInfo(type="ModuleNotFoundError", message="No module named 'tensorflow'", where="load",
                            missing_module="tensorflow")
    v = judge(FIXTURES, result([], end="load_failed", load_error=missing), CONTRACT)
    assert v.status == "unverified" and "module tensorflow is not installed" in v.reason
    v = judge(FIXTURES, result(every(outcome="not_reached"), end="timeout", reason="wall-clock limit reached"), CONTRACT)
    assert v.status == "unverified" and "wall-clock" in v.reason and v.verification_level == 0
    blocked = every(outcome="blocked", exception=ExceptionInfo(type="OSError", message="unreachable",
                                                                 blocked="network: Network is unreachable"))
    assert "blocked by the sandbox" in judge(FIXTURES, result(blocked), CONTRACT).reason


def test_tier():
    repeat = judge(FIXTURES, result(every(outcome="returned", value=FLOAT, repeat_equal=True)), CONTRACT)
    assert repeat.metamorphic_tier == "deterministic"
    differs = judge(FIXTURES, result(every(outcome="returned", value=FLOAT, repeat_equal=False)), CONTRACT)
    assert differs.metamorphic_tier == "well_formed"
