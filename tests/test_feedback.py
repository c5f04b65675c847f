"""Probe runs: an exception of the code's own, on our arguments, names what to give it next."""

from __future__ import annotations

import pytest

from paperproof.catalogue.fixture_case import FixtureArg, FixtureCase, FixtureSet, ValueSpec
from paperproof.catalogue.run_result import CaseOutcome, ExceptionInfo, RunResult
from paperproof.fixtures.feedback import refine


def _fixtures(*args: FixtureArg) -> FixtureSet:
    return FixtureSet(version="t", cases=[FixtureCase(case_id=c, seed=1, args=list(args)) for c in ("a", "b")])


def _raised(kind: str, message: str) -> RunResult:
    return RunResult(code_sha256="x", fixture_digest="y", runner_version="z", end="completed", cases=[
        CaseOutcome(case_id="a", outcome="raised", exception=ExceptionInfo(type=kind, message=message))])


OPTIONS = FixtureArg(name="opts", spec=ValueSpec(kind="namespace", params={"attrs": {"lr": 0.1}}))
SCORES = FixtureArg(name="s", spec=ValueSpec(kind="scores"))
TABLE = FixtureArg(name="stats", spec=ValueSpec(kind="dict_str_float", params={"keys": ["conf"]}))


@pytest.mark.parametrize(("arg", "kind", "message", "param", "expected"), [
    (OPTIONS, "AttributeError", "'Namespace' object has no attribute 'warmup'", "attrs", {"lr": 0.1, "warmup": 1}),
    (SCORES, "AttributeError", "'numpy.ndarray' object has no attribute 'detach'", "container", "torch"),
    (TABLE, "KeyError", "'var'", "keys", ["conf", "var"]),
    (SCORES, "TypeError", "cross_entropy_loss(): argument 'target' (position 2) must be Tensor, not numpy.ndarray",
     "container", "torch"),
    (OPTIONS, "AttributeError", "'Namespace' object has no attribute 'use_cuda'", "attrs", {"lr": 0.1, "use_cuda": True}),
    (OPTIONS, "AttributeError", "'Namespace' object has no attribute 'fp16'", "attrs", {"lr": 0.1, "fp16": False}),
    (FixtureArg(name="pred_probs", spec=ValueSpec(kind="probs")), "ValueError",
     "pred_probs must be a 2d array. If you have a 3d pred_probs array, use the ensemble version.", "layout", "NC"),
    (FixtureArg(name="votes", spec=ValueSpec(kind="labels")), "ValueError",  # one column per annotator
     "votes must be a 2D array or dataframe, each row represents an example and each column represents an annotator.",
     "layout", "NM"),
    (FixtureArg(name="labels", spec=ValueSpec(kind="run", params={"role": "targets"})), "TypeError",
     "labels should be a numpy array or pandas Series.", "container", "numpy"),  # a tensor of the run, as numpy
])
def test_each_exception_changes_the_argument_it_names_in_every_case(arg, kind, message, param, expected) -> None:
    found = refine(_fixtures(arg, FixtureArg(name="other", spec=ValueSpec(kind="literal", params={"value": 3}))),
                   _raised(kind, message))
    assert found is not None
    fixtures, evidence = found
    assert all(case.args[0].spec.params[param] == expected for case in fixtures.cases)
    assert all(case.args[1].spec.params == {"value": 3} for case in fixtures.cases)  # the rest is untouched
    assert [(e.param, e.source) for e in evidence] == [(arg.name, "feedback")] and message[:20] in evidence[0].why


@pytest.mark.parametrize(("kind", "message"), [
    ("ValueError", "math domain error"),
    ("AttributeError", "'Model' object has no attribute 'fc2'"),  # the code's own object, not our argument
    ("KeyError", "'var'"),  # no mapping of ours to add it to
])
def test_an_exception_that_names_no_argument_of_ours_gives_no_probe(kind: str, message: str) -> None:
    assert refine(_fixtures(SCORES), _raised(kind, message)) is None


def test_an_exception_that_names_a_parameter_left_at_its_default_gets_it_supplied() -> None:
    made = FixtureArg(name="pred_probs", spec=ValueSpec(kind="probs", params={"layout": "NC"}))
    found = refine(_fixtures(SCORES), _raised("ValueError", "Not enough information: pass in either features or "
                                                            "pred_probs."), optional={"pred_probs": made, "features": None})
    assert found is not None
    fixtures, evidence = found
    assert all([a.name for a in case.args] == ["s", "pred_probs"] for case in fixtures.cases)
    assert [(e.param, e.source) for e in evidence] == [("pred_probs", "feedback")]
    assert "which names `pred_probs`" in evidence[0].why


@pytest.mark.parametrize("message", ["'MLP' object has no attribute 'predict_proba'",
                                     "The model must define a .fit() method.",
                                     "`clf` must be clonable via: sklearn.base.clone(clf)."])
def test_code_that_calls_its_model_as_a_scikit_learn_classifier_gets_one(message: str) -> None:
    net = FixtureArg(name="clf", spec=ValueSpec(kind="run", params={"role": "net"}))
    found = refine(_fixtures(net), _raised("AttributeError" if "MLP" in message else "ValueError", message))
    assert found is not None
    fixtures, evidence = found
    assert all(c.args[0].spec.params["role"] == "estimator" for c in fixtures.cases)
    assert "scikit-learn's methods" in evidence[0].why


def test_the_codes_own_model_lacking_a_method_is_not_ours_to_change() -> None:
    net = FixtureArg(name="clf", spec=ValueSpec(kind="run", params={"role": "net"}))
    assert refine(_fixtures(net), _raised("AttributeError", "'ResNet' object has no attribute 'predict'")) is None


def test_an_options_attribute_a_probe_gave_that_is_then_called_becomes_a_method_that_does_nothing() -> None:
    from paperproof.fixtures.values import materialize

    first = refine(_fixtures(OPTIONS), _raised("AttributeError", "'Namespace' object has no attribute 'write'"))
    assert first is not None
    found = refine(first[0], _raised("TypeError", "'int' object is not callable"))
    assert found is not None
    fixtures, evidence = found
    spec = fixtures.cases[0].args[0].spec
    assert spec.params["methods"] == ["write"] and spec.params["attrs"] == {"lr": 0.1}
    assert [e.why for e in evidence] == ["a probe run raised `TypeError: 'int' object is not callable`, so `write` is a "
                                         "method that does nothing"]
    made = materialize(spec.model_dump(mode="json"), fixtures.cases[0].model_dump(mode="json"), "cpu")
    assert made.write("a line") is None and made.lr == 0.1
    # A "not callable" with no attribute of ours to blame is the code's own business.
    assert refine(_fixtures(OPTIONS), _raised("TypeError", "'int' object is not callable")) is None


def test_code_that_ranks_more_classes_than_the_run_had_gets_a_run_with_more() -> None:
    loader = FixtureArg(name="test_loader", spec=ValueSpec(kind="run", params={"role": "loader"}))
    cases = [FixtureCase(case_id=c, kind=k, seed=1, dims={"N": 24, "C": classes}, args=[loader])
             for c, k, classes in (("typical", "typical", 3), ("two_classes", "edge", 2), ("wide", "typical", 12))]
    found = refine(FixtureSet(version="t", cases=cases), _raised("RuntimeError", "selected index k out of range"))
    assert found is not None
    fixtures, evidence = found
    assert [c.dims["C"] for c in fixtures.cases] == [10, 2, 12]  # an edge case keeps the few classes that are its point
    assert [e.param for e in evidence] == ["test_loader"] and "the run has 10 classes" in evidence[0].why
    assert refine(fixtures, _raised("RuntimeError", "selected index k out of range")) is None  # asked once


def test_a_data_frame_missing_a_column_the_code_reads_gets_it_from_the_same_run() -> None:
    from paperproof.fixtures.values import materialize

    frame = FixtureArg(name="df", spec=ValueSpec(kind="dataframe"))
    found = refine(_fixtures(frame), _raised("KeyError", "'prediction'"))
    assert found is not None
    fixtures, evidence = found
    assert fixtures.cases[0].args[0].spec.params["columns"] == ["prediction"]
    assert evidence[0].why.endswith("so the data frame has a column `prediction`")
    case = fixtures.cases[0].model_copy(update={"dims": {"E": 4, "N": 12, "C": 3}}).model_dump(mode="json")
    made = materialize(fixtures.cases[0].args[0].spec.model_dump(mode="json"), case, "cpu")
    assert len(made) == 12 and set(made["prediction"]) <= {0, 1, 2}
    again = refine(fixtures, _raised("KeyError", "'example_id'"))
    assert again is not None
    made = materialize(again[0].cases[0].args[0].spec.model_dump(mode="json"), case, "cpu")
    assert made["example_id"].tolist() == list(range(12)) and "prediction" in made


@pytest.mark.parametrize(("value", "message", "given"), [
    (0.5, "trace = 0.5. trace > 1 is necessary for a valid noise matrix", 2.0),
    (3, "k must be less than or equal to 2", 2),
    (0.2, "alpha should be greater than 0.5", 1.0),
    (3, "n_neighbors must be < 1", 0.5),
])
def test_a_number_of_ours_outside_the_range_its_error_states_is_moved_inside(value, message, given) -> None:
    name = message.split()[0] if not message.startswith("trace") else "trace"
    arg = FixtureArg(name=name, spec=ValueSpec(kind="literal", params={"value": value}))
    found = refine(_fixtures(arg), _raised("ValueError", message))
    assert found is not None
    assert found[0].cases[0].args[0].spec.params["value"] == given
    assert refine(found[0], _raised("ValueError", message)) is None  # inside the range: nothing more to ask


def test_either_a_or_both_b_and_c_gives_a() -> None:
    made = {name: FixtureArg(name=name, spec=ValueSpec(kind="literal", params={"value": 3}))
            for name in ("num_examples", "confident_joint", "joint")}
    found = refine(_fixtures(SCORES), _raised("ValueError", "Error: num_examples is None. You must either provide "
                                              "confident_joint, or provide both num_example and joint."), optional=made)
    assert found is not None and [e.param for e in found[1]] == ["confident_joint"]


def test_a_bound_our_number_breaks_is_read_before_a_parameter_the_message_only_names() -> None:
    """The message names an optional flag, and states a bound our own number breaks: the bound is the exact reading."""
    arg = FixtureArg(name="trace", spec=ValueSpec(kind="literal", params={"value": 0.5}))
    found = refine(_fixtures(arg), _raised("ValueError", "trace = 0.5. trace > 1 is necessary for a valid noise "
                                                         "matrix to be returned (valid_noise_matrix == True)"),
                   optional={"valid_noise_matrix": FixtureArg(name="valid_noise_matrix", spec=ValueSpec(kind="labels"))})
    assert found is not None
    assert found[0].cases[0].args[0].spec.params["value"] == 2.0 and [e.param for e in found[1]] == ["trace"]


PRED_PROBS = FixtureArg(name="pred_probs", spec=ValueSpec(kind="probs", params={"layout": "NC"}))


def _calling(*methods: str) -> FixtureSet:
    """Cases of a class whose constructor takes scores and whose `methods` are called with nothing."""
    return FixtureSet(version="t", cases=[FixtureCase(case_id=c, seed=1, args=[SCORES],
                                                      method_args={m: [] for m in methods}) for c in "ab"])


def test_an_exception_that_names_a_methods_parameter_left_at_its_default_gets_it_supplied_to_that_method() -> None:
    made = PRED_PROBS
    found = refine(_calling("fit_score", "plot"),
                   _raised("ValueError", "Not enough information to compute scores. Pass in either features or pred_probs."),
                   optional={"fit_score.pred_probs": made, "fit_score.features": None, "report.pred_probs": made})
    assert found is not None
    fixtures, evidence = found
    assert [a.name for a in fixtures.cases[0].method_args["fit_score"]] == ["pred_probs"]
    assert fixtures.cases[0].method_args["plot"] == [] and [a.name for a in fixtures.cases[0].args] == ["s"]
    assert [(e.param, e.source) for e in evidence] == [("pred_probs", "feedback")]


def test_a_short_parameter_name_counts_where_the_message_makes_it_the_subject() -> None:
    prior = FixtureArg(name="py", spec=ValueSpec(kind="class_prior"))
    found = refine(_fixtures(SCORES), _raised("ValueError", "py must be provided (not None) if the input parameter "
                                                            "valid_noise_matrix == True"), optional={"py": prior})
    assert found is not None and [e.param for e in found[1]] == ["py"]
    assert refine(_fixtures(SCORES), _raised("ValueError", "a py file was expected"), optional={"py": prior}) is None


def test_a_method_the_message_names_is_given_the_parameters_it_was_called_without() -> None:
    made = PRED_PROBS
    found = refine(_calling("find_issues", "get_issues"),
                   _raised("ValueError", "No issues available for retrieval. Ensure `find_issues` was executed."),
                   optional={"find_issues.pred_probs": made, "find_issues.knn_graph": None, "get_issues.name": made})
    assert found is not None
    assert [a.name for a in found[0].cases[0].method_args["find_issues"]] == ["pred_probs"]
    assert found[0].cases[0].method_args["get_issues"] == []
