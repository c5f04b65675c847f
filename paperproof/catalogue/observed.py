"""What the repository's own drivers showed of its entries: the records of a driver's run in the sandbox
(`runner.observe`), and the judgement of an observed call that selection ranks above names and bodies.

A call is judged by its shapes alone, never by names: it returns one value per sample when its result is a
vector whose length is the number of rows of an array it was given (or a samples × epochs matrix reduced from an
epochs × samples × classes record), and it is not the same array handed back (an element-wise transform of one
input keeps its shape and its dtype). A one-hot matrix of the labels or a batch of features is not one value per
sample. That holds whatever data the driver made, planted or its own random arrays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from paperproof.catalogue.driver_line import DriverLine, DriverStatus
from paperproof.catalogue.drivers import Driver
from paperproof.catalogue.planted_record import Detection, Orientation

MAX_CALLS = 16  # calls of one entry kept (the tracer's `MAX_KEPT`)
MAX_ENTRIES = 512  # entries of one driver's trace kept (the tracer's `MAX_KEYS`)
MAX_VALUED = 16  # code objects whose values on a planted stand-in are kept (`child.MAX_VALUED`)
MAX_VALUES = 8192  # samples of a planted stand-in



class ObservedCall(BaseModel):
    """One call the tracer recorded: summaries of its arguments and result (`runner.tracer.summary`)."""

    model_config = ConfigDict(frozen=True)

    order: int
    caller: tuple[str, int] | None = None  # the repository's frame that led to it: (file, line)
    args: dict[str, dict] = Field(default_factory=dict)
    result: dict | None = None
    raised: bool = False


class ObservedCode(BaseModel):
    """A function, method or constructor of the repository, as one driver called it."""

    model_config = ConfigDict(frozen=True)

    key: str  # `path::qualname`
    count: int
    calls: list[ObservedCall] = Field(default_factory=list, max_length=MAX_CALLS)


class DriverRun(BaseModel):
    """One driver run in the sandbox: how it ended and what it called."""

    model_config = ConfigDict(frozen=True)

    driver: Driver
    status: DriverStatus
    ended: str  # "passed", "returned", "raised", "cut", "pytest exit 1", or why it did not run
    error: str | None = None
    cpu_seconds: float | None = None
    replaced: list[str] = Field(default_factory=list, max_length=32)  # sources given planted stand-ins
    observed: list[ObservedCode] = Field(default_factory=list, max_length=MAX_ENTRIES)
    # What its calls returned one value per sample of a planted stand-in (code key -> the values of the first such
    # call), and which samples of those stand-ins were planted (their size -> kind -> indices).
    values: dict[str, list[float]] = Field(default_factory=dict, max_length=MAX_VALUED)
    planted: dict[str, dict[str, list[int]]] = Field(default_factory=dict, max_length=MAX_VALUED)

    @field_validator("values")
    @classmethod
    def _bounded(cls, values: dict[str, list[float]]) -> dict[str, list[float]]:
        if any(len(v) > MAX_VALUES for v in values.values()):
            raise ValueError(f"a planted set has at most {MAX_VALUES} samples")
        return values


class OnPlanted(BaseModel):
    """How a score the driver's own pipeline computed on a planted stand-in finds what was planted there: per kind,
    AUROC (with DeLong's 95% interval) and AUPRC, read in the orientation fixed before scoring (`verify.planted`)."""

    model_config = ConfigDict(frozen=True)

    samples: int
    orientation: Orientation | None  # None: nothing says whether a high value means hard, so it was not scored
    orientation_basis: str
    figures: dict[str, Detection] = Field(default_factory=dict)  # planted kind -> its figures


class Observation(BaseModel):
    """What a sample record says of the driver that showed its entry being called (`Sample.observed`)."""

    model_config = ConfigDict(frozen=True)

    driver: str  # the driver's target: `tests/test_x.py::test_y`, `examples/run.py`
    kind: str
    line: int | None  # the line of the driver's call (the first observed), in the repository's file `caller_path`
    caller_path: str | None
    calls: int
    per_sample: bool
    returns: str  # the first returned value's type and shape, e.g. `numpy.ndarray float64 [200]`
    replaced: list[str] = Field(default_factory=list)  # what of the outside world the driver got a stand-in for
    url: str | None = None  # the caller's line at the repository's pinned commit, where the record knows it
    replay: str = ""  # the command that runs the driver again in a checkout, as its repository would run it
    # What arguments fixtures are drafted from (`fixtures.observed_args`), not published: the rows of the data the
    # call returned one value per, and each parameter's summary (a class's constructor's and methods' together).
    n: int | None = Field(default=None, exclude=True)
    args: dict[str, dict] = Field(default_factory=dict, exclude=True)
    # The per-sample values it returned on a planted stand-in, and that stand-in's planted samples by kind: what
    # `on_planted` is computed from (`verify.planted_scores.observed_on_planted`), not published.
    values: list[float] | None = Field(default=None, exclude=True)
    planted_kinds: dict[str, list[int]] | None = Field(default=None, exclude=True)
    on_planted: OnPlanted | None = None
    # What the repository's own calls gave back, for the status when our own cases said nothing of the entry
    # (`verify.verdict.from_observed`), not published: the summary of the first call that returned a value (the one
    # that showed a score, where one did), and of the calls kept in detail, how many returned and how many raised.
    result: dict | None = Field(default=None, exclude=True)
    returned: int = Field(default=0, exclude=True)
    raised: int = Field(default=0, exclude=True)


def listed(runs: Iterable[DriverRun]) -> list[DriverLine]:
    """Each driver's line for the record, in the order run (the ones not run after, as `observe` lists them)."""
    lines = []
    for run in runs:
        seen = observations([run])
        called: dict[str, int] = {}
        for code in run.observed:
            key = entry_key(code.key)
            called[key] = max(called.get(key, 0), code.count)
        lines.append(DriverLine(target=run.driver.target, kind=run.driver.kind, path=run.driver.path,
                                line=run.driver.line, status=run.status, ended=run.ended, error=run.error,
                                replaced=list(run.replaced), called=dict(sorted(called.items())),
                                scores=sorted(k for k, o in seen.items() if o.per_sample)))
    return lines


def replay(driver: Driver) -> str:
    """How to run a driver again in the repository's checkout: pytest's node id, the script, the notebook."""
    if driver.kind == "test":
        return f"python -m pytest '{driver.target}'"
    if driver.kind == "notebook":
        return f"jupyter nbconvert --to notebook --execute '{driver.path}'"
    if driver.kind == "readme":
        return f"the code block {driver.target.partition('#')[2]} of {driver.path}, run from the checkout's root"
    return f"python '{driver.path}'"


def entry_key(code_key: str) -> str:
    """The entry an observed code object belongs to: a method's or constructor's class, a function itself."""
    path, _, qualname = code_key.partition("::")
    return f"{path}::{qualname.split('.')[0]}"


def _rows(summary: dict | None) -> list[int]:
    if not summary:
        return []
    if isinstance(summary.get("shape"), list):
        return [int(n) for n in summary["shape"]]
    if summary.get("type") in ("list", "tuple") and isinstance(summary.get("len"), int):
        return [summary["len"]]
    return []


def per_sample(call: ObservedCall, given: Sequence[dict] = ()) -> bool:
    """Whether the call returned one value per sample of what it was given (see the module's docstring). `given`
    adds what the same object was given by its other calls: a method that returns what `update` calls recorded
    into the object's state has no argument of its own."""
    out = _rows(call.result)
    if call.raised or not out or len(out) > 2 or max(out) < 2 or not _numbers(call.result):
        return False
    own = [s for s in call.args.values() if _rows(s)]
    same = [s for s in own if _rows(s) == out and s.get("dtype") == (call.result or {}).get("dtype")]
    if own and len(same) == len(own):
        return False  # the input handed back, or transformed element by element
    inputs = [_rows(s) for s in [*own, *given]]
    if len(out) == 1:
        return any(out[0] in shape[:2] for shape in inputs)
    # samples × epochs (or epochs × samples): a record over epochs of something per sample and class, reduced
    return any(len(shape) == 3 and out[0] in shape and out[1] in shape for shape in inputs)


SCALAR_TYPES = re.compile(r"^(int|float|bool|numpy\.(u?int|float|bool)\w*)$")


def _numbers(summary: dict | None) -> bool:
    """Whether a list or tuple holds numbers (its first items, as summarised): a pair `(inputs, labels)` or a list
    of arrays is not one value per sample. An array is numbers by its dtype."""
    items = (summary or {}).get("items")
    if (summary or {}).get("type") not in ("list", "tuple") or not isinstance(items, list):
        return True
    return all(SCALAR_TYPES.match(str(item.get("type", ""))) for item in items if isinstance(item, dict))


def _samples(call: ObservedCall, given: Sequence[dict]) -> int:
    """How many samples a per-sample call's result is about: a vector's length; of a samples × epochs matrix, the
    dimension that is the samples' axis of an epochs × samples × classes input."""
    out = _rows(call.result)
    if len(out) == 1:
        return out[0]
    inputs = [_rows(s) for s in [*call.args.values(), *given]]
    return next((shape[1] for shape in inputs if len(shape) == 3 and shape[1] in out), out[0])


def describe(summary: dict | None) -> str:
    if not summary:
        return "nothing returned"
    shape = summary.get("shape")
    parts = [summary.get("type", "?"), summary.get("dtype") or "", f"{shape}" if shape is not None else
             (f"of {summary['len']}" if "len" in summary else "")]
    return " ".join(p for p in parts if p)


def observations(runs: Iterable[DriverRun]) -> dict[str, Observation]:
    """Per entry key, what the first driver (in the order run) that called it showed: a driver whose call returned
    one value per sample wins over one whose calls did not. A class's constructor and methods count as the class's
    calls, judged together."""
    found: dict[str, Observation] = {}
    for run in runs:
        by_entry: dict[str, list[ObservedCode]] = {}
        for code in run.observed:
            if code.calls:
                by_entry.setdefault(entry_key(code.key), []).append(code)
        for key, codes in by_entry.items():
            calls = sorted((c for code in codes for c in code.calls), key=lambda c: c.order)
            given = [s for c in calls for s in c.args.values() if _rows(s)]
            scoring = [c for c in calls if per_sample(c, given)]
            first = (scoring or calls)[0]
            seen = found.get(key)
            if seen is not None and (seen.per_sample or not scoring):
                continue
            entry_first = calls[0]  # where the driver first called the entry: its constructor for a class
            args = dict(first.args)  # the call that showed a score; a class's constructor's and methods' beside it
            for code in codes:
                for name, summary in code.calls[0].args.items():
                    args.setdefault(name, summary)
            valued = next((run.values[code.key] for code in codes if code.key in run.values), None)
            gave = [c for c in calls if not c.raised and (c.result or {}).get("type") not in (None, "NoneType")]
            shown = first if first in gave else next(iter(gave), None)
            kinds = run.planted.get(str(len(valued))) if valued is not None and scoring else None
            found[key] = Observation(
                driver=run.driver.target, kind=run.driver.kind, replay=replay(run.driver),
                line=entry_first.caller[1] if entry_first.caller else None,
                caller_path=entry_first.caller[0] if entry_first.caller else None,
                calls=max(code.count for code in codes), per_sample=bool(scoring), returns=describe(first.result),
                n=_samples(first, given) if scoring else None, args=args, replaced=list(run.replaced),
                values=valued if kinds else None, planted_kinds=kinds or None,
                result=shown.result if shown is not None else None, returned=sum(not c.raised for c in calls),
                raised=sum(c.raised for c in calls))
    return found


__all__ = ["DriverRun", "Observation", "OnPlanted", "ObservedCall", "ObservedCode", "describe", "entry_key", "observations",
           "listed", "per_sample"]
