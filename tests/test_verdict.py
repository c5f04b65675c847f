"""The status rules, one by one, on run results we construct."""

from __future__ import annotations

import pytest

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
    assert v.status == "unverified" and "module tensorflow could not be had in the sandbox" in v.reason
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


PER_SAMPLE = extract_module("def forget(correctness_trend) -> int:\n    return 0\n", repo="o/r", path="m.py")[0]


def test_a_per_sample_entry_is_judged_per_call_not_on_the_collected_list():
    fixtures = synthesize(PER_SAMPLE)
    assert all(c.per_sample for c in fixtures.cases)
    ints = EncodedValue(type="list", dtype="int64", shape=[3], length=3, data=[0, 2, 1000], digest="l")
    cases = [CaseOutcome(case_id=c.case_id, outcome="returned", value=ints) for c in fixtures.cases]
    v = judge(fixtures, result(cases), draft(PER_SAMPLE))
    assert (v.status, v.contract_check) == ("ran", "PASSES"), v.reason
    floats = EncodedValue(type="list", dtype="float64", shape=[3], length=3, data=[0.0, 0.5, 1.0], digest="g")
    cases = [CaseOutcome(case_id=c.case_id, outcome="returned", value=floats) for c in fixtures.cases]
    v = judge(fixtures, result(cases), draft(PER_SAMPLE))
    assert (v.status, v.contract_check) == ("ran_violates", "VIOLATES")
    assert "got float 0.0 from the call for sample 0" in v.reason


def test_a_dtype_error_of_the_operation_our_input_reached_is_our_fixture():
    dtype = every(outcome="raised", exception=ExceptionInfo(
        type="RuntimeError", message="mat1 and mat2 must have the same dtype, but got Double and Float"))
    v = judge(FIXTURES, result(dtype), CONTRACT)
    assert (v.status, v.contract_check) == ("ran_fixture", "RAISES")
    assert "our choice of `x` = scores failed" in v.reason
    other = every(outcome="raised", exception=ExceptionInfo(type="RuntimeError", message="CUDA out of memory"))
    assert judge(FIXTURES, result(other), CONTRACT).status == "ran_violates"


def test_a_class_whose_constructor_alone_ran_is_not_run():
    cls = extract_module("class T:\n    def __init__(self, num_samples):\n        pass\n"
                         "    def update(self, model):\n        pass\n", repo="o/r", path="m.py")[0]
    fixtures = synthesize(cls)
    assert fixtures.skipped_methods and all(not c.method_args for c in fixtures.cases)
    empty = EncodedValue(type="dict", length=0, keys=[], values={}, digest="e")
    cases = [CaseOutcome(case_id=c.case_id, outcome="returned", value=empty) for c in fixtures.cases]
    v = judge(fixtures, result(cases), draft(cls), kind="class")
    assert v.status == "unverified" and "constructed, but no method" in v.reason and "update()" in v.reason
    scores = EncodedValue(type="dict", length=1, keys=["scores"], digest="s", values={
        "scores": EncodedValue(type="ndarray", dtype="float64", shape=[2], data=[0.1, 0.2], digest="a")})
    cases = [CaseOutcome(case_id=c.case_id, outcome="returned", value=scores) for c in fixtures.cases]
    assert judge(fixtures, result(cases), draft(cls), kind="class").status == "ran"


def test_a_per_sample_entry_that_returns_arrays_says_so():
    fixtures = synthesize(PER_SAMPLE)
    row = EncodedValue(type="ndarray", dtype="float64", shape=[3], data=[0.1, 0.2, 0.3], digest="r")
    arrays = EncodedValue(type="list", length=2, items=[row, row], digest="l")
    cases = [CaseOutcome(case_id=c.case_id, outcome="returned", value=arrays) for c in fixtures.cases]
    v = judge(fixtures, result(cases), draft(PER_SAMPLE))
    assert "did not return one value per sample (case typical: ndarray float64 [3])" in v.reason
    assert v.status == "ran_violates"  # and each call broke `-> int`


TASK = extract_module("def read(task_name: str):\n    return READERS[task_name]()\n", repo="o/r", path="m.py")[0]
SAVE = extract_module("def save(args):\n    open(args.output_dir + '/c.json', 'w')\n", repo="o/r", path="m.py")[0]


def test_a_refusal_that_names_our_made_up_string_is_our_fixture():
    fixtures = synthesize(TASK)
    cases = [CaseOutcome(case_id=c.case_id, outcome="raised", exception=ExceptionInfo(
        type="NotImplementedError", message=f"Reader for {c.args[0].spec.params['value']} not implemented."))
        for c in fixtures.cases]
    v = judge(fixtures, result(cases), draft(TASK))
    assert (v.status, v.contract_check) == ("ran_fixture", "RAISES")
    assert "its error names our made-up `task_name` = 'yes'" in v.reason
    other = [CaseOutcome(case_id=c.case_id, outcome="raised", exception=ExceptionInfo(
        type="NotImplementedError", message="this reader is not finished")) for c in fixtures.cases]
    assert judge(fixtures, result(other), draft(TASK)).status == "ran_violates"
    bare = [CaseOutcome(case_id=c.case_id, outcome="raised", exception=ExceptionInfo(
        type="NotImplementedError", message="")) for c in fixtures.cases]  # `else: raise NotImplementedError`
    v = judge(fixtures, result(bare), draft(TASK))
    assert v.status == "ran_fixture" and "a bare NotImplementedError" in v.reason


def test_a_file_missed_under_our_folder_is_not_a_sandbox_block_but_one_elsewhere_is():
    fixtures = synthesize(SAVE)

    def missing(path):
        cases = [CaseOutcome(case_id=c.case_id, outcome="blocked", exception=ExceptionInfo(
            type="FileNotFoundError", message=f"[Errno 2] No such file or directory: '{path}'",
            blocked=f"file not available in the sandbox: {path}")) for c in fixtures.cases]
        return RunResult(code_sha256=SAVE.code_sha256, fixture_digest="d", runner_version="1", end="completed",
                         cases=cases, blocked=[f"tried to open {path}, which the sandbox does not hold (blocked)"])

    v = judge(fixtures, missing("out/c.json"), draft(SAVE))
    assert v.status == "ran_fixture" and "a path under our made-up `args.output_dir` = 'out'" in v.reason
    v = judge(fixtures, missing("/data/glue/c.json"), draft(SAVE))
    assert v.status == "unverified" and "blocked by the sandbox" in v.reason


def test_writes_in_the_working_directory_are_said_and_pieces_of_our_string_are_our_fixture():
    fixtures = synthesize(TASK)
    written = [CaseOutcome(case_id=c.case_id, outcome="returned", value=FLOAT,
                           wrote=sorted(f"{ch}/" for ch in set(c.args[0].spec.params["value"]))) for c in fixtures.cases]
    v = judge(fixtures, result(written), draft(TASK))
    assert v.status == "ran_fixture" and "each a piece of our made-up `task_name` = 'yes'" in v.reason
    own = [CaseOutcome(case_id=c.case_id, outcome="returned", value=FLOAT, wrote=["results.csv"]) for c in fixtures.cases]
    v = judge(fixtures, result(own), draft(TASK))
    assert v.status == "ran" and v.reason.endswith(
        "; not clean: it created results.csv in its working directory, outside the scratch folder it is given")


def test_cases_that_raise_at_the_boundary_among_returns_are_charged_to_the_fixture_in_the_reason():
    cases = [CaseOutcome(case_id=c.case_id, outcome="returned", value=FLOAT) if i < 3 else
             CaseOutcome(case_id=c.case_id, outcome="raised", exception=ExceptionInfo(
                 type="IndexError", message="index 2 is out of bounds for axis 1 with size 2"))
             for i, c in enumerate(FIXTURES.cases)]
    v = judge(FIXTURES, result(cases), CONTRACT)
    assert v.status == "ran" and v.reason.startswith(f"returned on 3 of {len(FIXTURES.cases)} cases; raised on ")
    assert "size 2) at its input boundary, so charged to our fixture for those cases" in v.reason


def test_a_layer_given_an_input_of_the_wrong_rank_is_our_fixtures_fault():
    from paperproof.catalogue.run_result import ExceptionInfo
    from paperproof.verify.verdict import at_boundary

    said = "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [16, 3]"
    assert at_boundary(ExceptionInfo(type="RuntimeError", message=said))
    assert not at_boundary(ExceptionInfo(type="RuntimeError", message="CUDA error: device-side assert triggered"))


@pytest.mark.parametrize("said", [
    ExceptionInfo(type="urllib.error.URLError", message="<urlopen error [Errno -3] Temporary failure in name resolution>"),
    ExceptionInfo(type="RuntimeError", message="It looks like there is no internet connection and the repo could not be "
                  "found in the cache (/sandbox/work/.paperproof-caches/torch/hub)"),  # torch.hub.load
])
def test_code_that_reaches_for_the_network_is_unverified_not_blamed(said):
    v = judge(FIXTURES, result(every(outcome="raised", exception=said)), CONTRACT)
    assert v.status == "unverified" and v.reason.startswith("needs the network, which the sandbox does not give")
    loading = judge(FIXTURES, result([], end="load_failed", load_error=said), CONTRACT)
    assert loading.status == "unverified" and "reaches for the network" in loading.reason


def test_numpy_axis_and_shape_complaints_about_our_input_are_at_its_boundary():
    from paperproof.verify.verdict import at_boundary

    assert at_boundary(ExceptionInfo(type="numpy.exceptions.AxisError", message="axis 1 is out of bounds for array of "
                                     "dimension 1"))
    assert at_boundary(ExceptionInfo(type="numpy.linalg.LinAlgError", message="Last 2 dimensions of the array must "
                                     "be square"))
    assert at_boundary(ExceptionInfo(type="RuntimeError", message="expand(torch.LongTensor{[24]}, size=[]): the number "
                                     "of sizes provided (0) must be greater or equal to the number of dimensions"))
    assert not at_boundary(ExceptionInfo(type="numpy.linalg.LinAlgError", message="Singular matrix"))


def _observed(result: dict | None, returned: int = 3, raised: int = 0):
    from paperproof.catalogue.observed import Observation

    return Observation(driver="tests/test_scores.py::test_influence", kind="test", line=12,
                       caller_path="tests/test_scores.py", calls=returned + raised, per_sample=result is not None,
                       returns="numpy.ndarray float32 [100]", result=result, returned=returned, raised=raised)


OBSERVED_SCORES = {"type": "numpy.ndarray", "shape": [100], "dtype": "float32", "min": -0.5, "max": 2.0}


def test_where_our_cases_said_nothing_the_repositorys_own_call_decides():
    from paperproof.verify.verdict import Verdict, from_observed

    nothing = Verdict("unverified", "no fixture: parameter `model` needs a trained model")
    got = from_observed(nothing, _observed(OBSERVED_SCORES), CONTRACT)  # returns float: an ndarray breaks it
    assert got.status == "ran_violates" and got.contract_check == "VIOLATES"
    assert got.reason.startswith("observed: its repository's own test tests/test_scores.py::test_influence (line 12 "
                                 "of tests/test_scores.py) called it 3 time(s); 3 of the 3 calls kept returned, first "
                                 "ndarray float32 [100] in [-0.5, 2]; one value per sample. Our own cases: no fixture")
    assert "broke its own promise: returns float (its annotation), got ndarray" in got.reason
    plain = from_observed(nothing, _observed(OBSERVED_SCORES), draft(extract_module(
        "def f(x):\n    pass\n", repo="o/r", path="m.py")[0]))
    assert (plain.status, plain.contract_check) == ("ran", None) and plain.reason.endswith("nothing declared to check")
    ours = Verdict("ran_fixture", "raised on every case (TypeError ×6) — at its input boundary")
    assert from_observed(ours, _observed({"type": "float", "value": 0.5}), CONTRACT).status == "ran"
    nan = {**OBSERVED_SCORES, "min": float("nan"), "max": float("nan")}
    finite = draft(extract_module('def f(x):\n    """Returns:\n        np.ndarray: scores in [0, 1]."""\n',
                                  repo="o/r", path="m.py")[0])
    assert any(c.kind == "range" for c in finite.clauses)
    assert from_observed(nothing, _observed(nan), finite).status == "ran"  # no range to break: NaN is not in it


def test_the_repositorys_own_call_never_overrules_what_our_cases_found_or_a_run_we_cannot_trust():
    from paperproof.verify.verdict import Verdict, from_observed

    for said in (Verdict("ran", "returned on 6 of 6 cases"), Verdict("ran_violates", "raised on every case"),
                 Verdict("unverified", "its report cannot be trusted: it wrote lines the runner never writes"),
                 Verdict("unverified", "not run to a result: cut by load")):
        assert from_observed(said, _observed(OBSERVED_SCORES), CONTRACT) is said
    nothing = Verdict("unverified", "no fixture: parameter `model` needs a trained model")
    assert from_observed(nothing, None, CONTRACT) is nothing
    assert from_observed(nothing, _observed(None, returned=0, raised=2), CONTRACT) is nothing  # every call raised
