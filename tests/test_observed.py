"""The judgement of an observed call by its shapes alone, and what a sample is told of the driver that called it."""

from __future__ import annotations

from paperproof.catalogue.drivers import Driver
from paperproof.catalogue.observed import DriverRun, ObservedCall, ObservedCode, entry_key, observations, per_sample


def array(*shape: int, dtype: str = "float64") -> dict:
    return {"type": "numpy.ndarray", "shape": list(shape), "dtype": dtype, "min": 0.0, "max": 1.0}


def call(order: int = 1, result: dict | None = None, raised: bool = False, **args: dict) -> ObservedCall:
    return ObservedCall(order=order, caller=("tests/test_s.py", 10 + order), args=args, result=result, raised=raised)


def test_a_vector_as_long_as_the_rows_it_was_given_is_per_sample():
    assert per_sample(call(result=array(50), logits=array(50, 3), labels=array(50, dtype="int64")))
    assert per_sample(call(result=array(50, 4), dynamics=array(4, 50, 3)))  # samples × epochs from epochs × samples
    assert per_sample(call(result={"type": "list", "len": 50}, probs=array(50, 3)))


def test_transforms_aggregates_and_failures_are_not():
    assert not per_sample(call(result=array(50, 3), logits=array(50, 3)))  # softmax: the same shape and dtype back
    assert not per_sample(call(result={"type": "float", "value": 0.3}, logits=array(50, 3)))  # a mean
    assert not per_sample(call(result=array(50), logits=array(50, 3), raised=True))
    assert not per_sample(call(result=array(7), logits=array(50, 3)))  # no input of seven rows
    assert not per_sample(call(result=array(3, 3, 3), x=array(3, 3, 3, dtype="int64")))  # not a vector or matrix
    assert not per_sample(call(result=array(50, 10), labels=array(50, dtype="int64")))  # one-hot labels
    assert not per_sample(call(result=array(50, 16), x=array(50, 8), w=array(8, 16)))  # features of a layer
    pair = {"type": "tuple", "len": 2, "items": [array(2, 10), array(2, 1)]}  # a batch (inputs, targets) of two
    assert not per_sample(call(result=pair, batch=array(2, 11)))
    scores = {"type": "list", "len": 2, "items": [{"type": "float", "value": 0.1}, {"type": "numpy.float32"}]}
    assert per_sample(call(result=scores, batch=array(2, 11)))  # a number per row, as a list


def test_a_method_returning_what_other_calls_recorded_is_per_sample_for_its_class():
    """`scores()` takes nothing; `update(correct)` was given 30 rows: the class returned one value per sample."""
    run = DriverRun(driver=Driver(kind="test", target="tests/test_f.py::test_counter", path="tests/test_f.py",
                                  line=3, cost=5), status="ran", ended="passed", observed=[
        ObservedCode(key="lib/f.py::Counter.__init__", count=1, calls=[call(1, None, n={"type": "int", "value": 30})]),
        ObservedCode(key="lib/f.py::Counter.update", count=3, calls=[call(2, None, correct=array(30, dtype="bool"))]),
        ObservedCode(key="lib/f.py::Counter.scores", count=1, calls=[call(5, array(30, dtype="int64"))]),
        ObservedCode(key="lib/f.py::pool", count=2, calls=[call(3, array(30, 8), x=array(30, 8))]),
    ])
    seen = observations([run])
    assert entry_key("lib/f.py::Counter.update") == "lib/f.py::Counter"
    counter = seen["lib/f.py::Counter"]
    assert counter.per_sample and counter.calls == 3 and counter.line == 11  # the constructor's call
    assert counter.returns == "numpy.ndarray int64 [30]" and counter.driver == "tests/test_f.py::test_counter"
    assert not seen["lib/f.py::pool"].per_sample


def test_a_later_driver_that_shows_a_score_wins_over_an_earlier_one_that_did_not():
    driver = Driver(kind="example", target="examples/a.py", path="examples/a.py", line=1, cost=2)
    first = DriverRun(driver=driver, status="ran", ended="returned", observed=[
        ObservedCode(key="m.py::score", count=1, calls=[call(1, {"type": "NoneType"}, x=array(9, 2))])])
    second = DriverRun(driver=driver.model_copy(update={"target": "examples/b.py"}), status="ran", ended="returned",
                       observed=[ObservedCode(key="m.py::score", count=4, calls=[call(1, array(9), x=array(9, 2))])])
    assert observations([first, second])["m.py::score"].driver == "examples/b.py"
    assert observations([second, first])["m.py::score"].driver == "examples/b.py"
