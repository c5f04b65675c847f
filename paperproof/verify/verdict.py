"""The status rules, in one place: from what a run did to `status`, `contract_check`, tier and reason.

In order:
1. No fixture could be made, the entry could not be defined, its report cannot be trusted (the
   sample modified the runner or wrote lines the runner never writes), the runner itself failed or
   the machine's load cut the run short on both tries (`cut_by_load`: a rerun is expected to give
   its status), or no case reached a result (cut short, blocked by the sandbox, unserialisable):
   `unverified`, and the reason says which.
2. Every case that finished raised: `ran_fixture` when each raise is the kind code gives when its
   input has the wrong structure (the input boundary: TypeError, ValueError, KeyError, IndexError,
   AttributeError, AssertionError, or a dtype or shape error of the operation our input reached),
   and the reason names our choices; else `ran_violates`; `contract_check` is `RAISES`.
   A class whose methods returned nothing that yields an output (only its constructor ran) is
   `unverified`.
3. An output broke a clause the code declares, or the definition of the metric it was recognised
   as: `ran_violates` / `VIOLATES`.
4. An output broke a clause we drafted from prose: `ran_draft_wrong` / `OUTPUT_MISDECLARED`.
5. Otherwise `ran`, with `PASSES` when there was a contract and null when nothing was declared.
6. Where our own cases said nothing of the entry (no fixture could be made, only its constructor ran, or every
   case raised at its input boundary) and a driver of the repository was seen calling it and getting a value back
   (`catalogue.observed`), the repository's own call decides (`from_observed`): `ran`, or `ran_violates` /
   `ran_draft_wrong` when that value broke a clause, and the reason says which driver and what our cases did.
Type clauses are checked on every case (for an entry called once per sample, on each call's
output, not on the list we collected them into); shape, range and metric clauses on the typical
cases, since edge cases (one epoch, two classes) may legitimately differ.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from paperproof.catalogue.fixture_case import FixtureSet, ValueSpec
from paperproof.catalogue.observed import Observation
from paperproof.catalogue.run_result import CaseOutcome, EncodedValue, ExceptionInfo, RunResult
from paperproof.catalogue.sample import Clause, Contract, ContractCheck, Fidelity, MetamorphicTier, Status
from paperproof.fixtures.reorder import sample_permutation
from paperproof.verify import made_up
from paperproof.verify.contracts import check
from paperproof.verify.fidelity import channels, departure

INPUT_BOUNDARY = frozenset({
    "TypeError", "ValueError", "KeyError", "IndexError", "AttributeError", "AssertionError", "LookupError",
    "AxisError",  # numpy's: a ValueError and an IndexError, an axis our input does not have
})
DECLARED = frozenset({"annotation", "metric"})
# Errors torch and numpy raise when an input's dtype or shape is not what a layer or an operation
# takes: the fault of our fixture's layout or dtype, whatever the exception's type. "expected … Float" and "shape …
# mismatch" are read once a line, from the line's first "expected " (or "shape ") on: what follows any later one
# follows the first, and from every occurrence a `.*` scanned to the line's end, quadratic on "expected " repeated.
FIXTURE_FAULT = re.compile(
    r"dtype|scalar type|^(?>.*?expected ).*?(Float|Double|Half|Long|dim)|(Float|Double|Long) but found|mat1 and mat2"
    r"|^(?>.*?shapes? ).*?(cannot be|not aligned|mismatch)|size mismatch|must match the size"
    r"|too many indices|operands could not be broadcast|cannot reshape|invalid for input of size"
    r"|expected \dD \(unbatched\)|input to conv\dd|number of sizes provided|dimensions of the array must be"
    r"|must be square", re.IGNORECASE | re.MULTILINE)
# What code that reaches for the network raises where the sandbox gives none (no name resolution, no route):
# the sandbox's refusal, not a fault of the code or of our fixture.
NO_NETWORK = re.compile(r"name resolution|Name or service not known|nodename nor servname|getaddrinfo failed"
                        r"|Network is unreachable|no internet connection", re.IGNORECASE)  # the last: torch.hub's


@dataclass
class Verdict:
    status: Status
    reason: str
    contract_check: ContractCheck | None = None
    metamorphic_tier: MetamorphicTier | None = None
    failed_clause: str | None = None
    case_failures: dict[str, str] = field(default_factory=dict)
    fingerprint: str | None = None

    @property
    def verification_level(self) -> int:
        return 1 if self.status.startswith("ran") else 0


def _value(outcome: CaseOutcome) -> EncodedValue:
    """The value of a case that returned one (`returned` holds only those)."""
    if outcome.value is None:
        raise ValueError(f"case {outcome.case_id} has no returned value")
    return outcome.value


def _exception_text(outcome: CaseOutcome) -> str:
    exc = outcome.exception
    return f"{exc.type}: {exc.message}" if exc else outcome.outcome


def fingerprint(result: RunResult) -> str | None:
    """A hash of every case's quantised output (or exception type), when every case finished."""
    parts = []
    for case in result.cases:
        if case.outcome == "returned" and case.value is not None:
            parts.append(f"{case.case_id}={case.value.digest}")
        elif case.outcome == "raised" and case.exception is not None:
            parts.append(f"{case.case_id}!{case.exception.type}")
        else:
            return None
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16] if parts else None


def at_boundary(exc: ExceptionInfo) -> bool:
    """Whether an exception is the kind code gives when its input has the wrong structure, or a
    dtype or shape error from the operation our input reached (our fixture's choice, not the code)."""
    kind = exc.type.rsplit(".", 1)[-1]
    return kind in INPUT_BOUNDARY or (kind in ("RuntimeError", "LinAlgError") and FIXTURE_FAULT.search(exc.message) is not None)


def choices(fixtures: FixtureSet) -> str:
    """Our choices for the arguments of the first case, in words: what a fixture fault is charged to."""
    case = fixtures.cases[0] if fixtures.cases else None
    made = [f"`{a.name}` = {_brief(a.spec)}" for a in (case.args if case else []) if a.spec.kind not in ("literal", "dim")]
    return ", ".join(made) or "the literal arguments"


def _brief(spec: ValueSpec) -> str:
    """A recipe in a few words: a namespace's attribute table is on the page, not in the reason."""
    inner = ", ".join(f"{k}={v}" for k, v in sorted(spec.params.items()) if k not in ("attrs", "sized", "words"))
    return f"{spec.kind}({inner})" if inner else spec.kind


def _calls(value: EncodedValue) -> list[EncodedValue]:
    """The output of each call of a per-sample entry, from the list the calls were collected into."""
    if value.items is not None:
        return list(value.items)
    if value.data is not None and value.dtype:
        word = "bool" if value.dtype == "bool" else "int" if value.dtype.startswith(("int", "uint")) else \
            "float" if value.dtype.startswith("float") else value.dtype
        return [EncodedValue(type=word, repr=repr(v), digest="") for v in value.data]
    return [value]


def _broken(clause: Clause, value: EncodedValue, dims: dict[str, int], per_sample: bool) -> str | None:
    """What broke a clause, or None. A per-sample entry's type is judged on each call's output."""
    if per_sample and clause.kind == "type" and value.type in ("list", "tuple"):
        for index, call in enumerate(_calls(value)):
            if not check(clause, call, dims):
                return f"{call.describe()} from the call for sample {index}"
        return None
    return None if check(clause, value, dims) else value.describe()


def judge(fixtures: FixtureSet, result: RunResult | None, contract: Contract,
          findings: list[Fidelity] | None = None, kind: str = "function") -> Verdict:
    """Apply the rules above. `findings` are the metric core's (see `paperproof.verify.fidelity`):
    an output recognised as a metric that departs from the paper's definition is a violation.
    A class counts as run only when a method that yields its outputs returned something.
    A sample that tried what the sandbox refuses is not clean, whatever it returned: not `ran`."""
    if result is not None:
        result = made_up.unblock(fixtures, result)
    verdict = _judge(fixtures, result, contract, findings, kind)
    if result is not None and result.blocked and verdict.status in ("ran", "ran_draft_wrong"):
        return Verdict("unverified", f"not clean: it {'; '.join(result.blocked)}; what it returned was computed "
                       f"without that, so it is not its result ({verdict.reason})")
    return _wrote(fixtures, result, verdict) if result is not None else verdict


def _wrote(fixtures: FixtureSet, result: RunResult, verdict: Verdict) -> Verdict:
    """A run that added files or folders to its working directory, outside the scratch folder it is
    given, says so. Named from a string we made up (folders `y`, `e`, `s` from `'yes'`), it acted on
    our invention as on a real path: charged to our fixture, not counted as the entry running."""
    cases = {c.case_id: c for c in fixtures.cases}
    wrote = [(c, cases[c.case_id]) for c in result.cases if c.wrote and c.case_id in cases]
    if not wrote:
        return verdict
    names = list(dict.fromkeys(n for c, _ in wrote for n in c.wrote))
    shown = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
    where = f"it created {shown} in its working directory, outside the scratch folder it is given"
    found = next((made for c, case in wrote if (made := made_up.created_from(case, c.wrote))), None)
    ours, pieces = found if found else (None, False)
    if pieces and verdict.status in ("ran", "ran_draft_wrong"):
        return Verdict("ran_fixture", f"not clean: {where}, each a piece of our made-up {ours}: it took our string "
                       f"for a list of real paths, so what it did is not a result of the code ({verdict.reason})",
                       fingerprint=verdict.fingerprint)
    note = f"; not clean: {where}" + (f", named from our made-up {ours}" if ours else "")
    return replace(verdict, reason=verdict.reason + note)


def _judge(fixtures: FixtureSet, result: RunResult | None, contract: Contract,
           findings: list[Fidelity] | None, kind: str) -> Verdict:
    metric_departure = departure(findings or [])
    if fixtures.missing:
        missing = "; ".join(m.reason for m in fixtures.missing)
        return Verdict("unverified", f"no fixture: {missing}")
    if result is None:
        return Verdict("unverified", "not run")
    if result.end == "load_failed" and result.load_error is not None:
        return Verdict("unverified", _load_reason(result))
    if result.end == "protocol_error":
        return Verdict("unverified", f"its report cannot be trusted: {result.reason}")
    if result.end in ("runner_error", "cut_by_load"):
        return Verdict("unverified", f"not run to a result: {result.reason}")
    finished = [c for c in result.cases if c.outcome in ("returned", "raised")]
    cut_short = f"; the run then ended: {result.reason}" if result.end != "completed" and result.reason else ""
    if not finished:
        return Verdict("unverified", _nothing_finished(result))
    missing_modules = {c.exception.missing_module for c in finished if c.exception and c.exception.missing_module}
    returned = [c for c in finished if c.outcome == "returned" and c.value is not None]
    if not returned:
        offline = next((c.exception for c in finished if c.exception and NO_NETWORK.search(c.exception.message)), None)
        if offline is not None:
            return Verdict("unverified", f"needs the network, which the sandbox does not give: "
                           f"{offline.type.rsplit('.', 1)[-1]}: {offline.message}{cut_short}")
        if missing_modules:
            said = next(c.exception.message for c in finished if c.exception and c.exception.missing_module)
            return Verdict("unverified", f"needs module {', '.join(sorted(missing_modules))}, which could not be had in "
                           f"the sandbox: {said}")
        kinds = Counter(c.exception.type.rsplit(".", 1)[-1] for c in finished if c.exception)
        case_of = {c.case_id: c for c in fixtures.cases}
        ours = {c.case_id: made_up.refused(case_of[c.case_id], c.exception)
                for c in finished if c.exception and c.case_id in case_of}
        boundary = all(at_boundary(c.exception) or ours.get(c.case_id) for c in finished if c.exception)
        first = finished[0]
        text = f"raised on every case ({', '.join(f'{k} ×{n}' for k, n in kinds.items())}); first: {_exception_text(first)}"
        named = next((v for v in ours.values() if v), None)
        if boundary:
            said = f"its error names our made-up {named}; " if named else ""
            return Verdict("ran_fixture", f"{text} — at its input boundary, so charged to our fixture: "
                           f"{said}our choice of {choices(fixtures)} failed{cut_short}",
                           contract_check="RAISES", fingerprint=fingerprint(result))
        return Verdict("ran_violates", f"{text} — past its input boundary, on input it accepted{cut_short}",
                       contract_check="RAISES", fingerprint=fingerprint(result))
    driven = any(case.protocol for case in fixtures.cases)  # a training run called its hooks: the value is the score
    if kind == "class" and not driven and not any(_yields(_value(c)) for c in returned):
        skipped = "; ".join(f"{m.param} not called: {m.reason}" for m in fixtures.skipped_methods)
        return Verdict("unverified", "constructed, but no method that yields its outputs returned any"
                       + (f" ({skipped})" if skipped else " (it has no public method we could call)")
                       + cut_short, fingerprint=None)
    dims = {c.case_id: c.dims for c in fixtures.cases}
    kinds_of = {c.case_id: c.kind for c in fixtures.cases}
    per_sample = {c.case_id for c in fixtures.cases if c.per_sample}
    failures: dict[str, Clause] = {}
    got_of: dict[str, str] = {}
    for outcome in returned:
        for clause in contract.clauses:
            if clause.kind != "type" and kinds_of.get(outcome.case_id) != "typical":
                continue
            broken = _broken(clause, _value(outcome), dims.get(outcome.case_id, {}), outcome.case_id in per_sample)
            if broken is not None:
                failures.setdefault(outcome.case_id, clause)
                got_of.setdefault(outcome.case_id, broken)
                break
    tier = _tier(result, returned, failures, fixtures)
    raised_note = ""
    raised = [c for c in finished if c.outcome == "raised"]
    if raised:
        raised_note = f"; raised on {', '.join(c.case_id for c in raised)} ({_exception_text(raised[0])})"
        if all(c.exception and at_boundary(c.exception) for c in raised):
            raised_note += " at its input boundary, so charged to our fixture for those cases"
    summary = f"returned on {len(returned)} of {len(result.cases)} cases{raised_note}{cut_short}{_not_per_sample(returned, per_sample)}"
    case_failures = {cid: clause.text for cid, clause in failures.items()}
    declared = [(cid, c) for cid, c in failures.items() if c.origin in DECLARED]
    drafted = [(cid, c) for cid, c in failures.items() if c.origin not in DECLARED]
    fp = fingerprint(result)
    if metric_departure:
        return Verdict("ran_violates", f"{summary}; departs from the paper's definition: {metric_departure}",
                       "VIOLATES", tier, f"the paper's definition: {metric_departure}", case_failures, fp)
    if declared:
        cid, clause = declared[0]
        got = got_of[cid]
        return Verdict("ran_violates", f"{summary}; on case {cid} it broke its own promise: {clause.text}, got {got}",
                       "VIOLATES", tier, clause.text, case_failures, fp)
    if drafted:
        cid, clause = drafted[0]
        got = got_of[cid]
        return Verdict("ran_draft_wrong", f"{summary}; our draft said it {clause.text}, but on case {cid} it returned {got}",
                       "OUTPUT_MISDECLARED", tier, clause.text, case_failures, fp)
    check_word: ContractCheck | None = "PASSES" if contract.clauses else None
    held = (f"; its contract holds ({'; '.join(c.text for c in contract.clauses)})" if contract.clauses else
            # an output recognised as a metric was checked against the paper: said so, or the line contradicts it
            "; it declares no contract of its own, and its output was checked against the paper's definition"
            if findings else "; nothing declared to check")
    return Verdict("ran", summary + held, check_word, tier, None, {}, fp)


SCALARS = frozenset({"int", "float", "bool", "NoneType"})


def _not_per_sample(returned: list[CaseOutcome], per_sample: set[str]) -> str:
    """Said when an entry called once per sample did not return one value per call."""
    for outcome in returned:
        if outcome.case_id in per_sample:
            other = next((c for c in _calls(_value(outcome)) if c.type not in SCALARS), None)
            if other is not None:
                return (f"; called once per sample, it did not return one value per sample "
                        f"(case {outcome.case_id}: {other.describe()})")
    return ""


def _yields(value: EncodedValue) -> bool:
    """Whether a class's case produced an output: some method returned something other than None."""
    return any(v.type != "NoneType" for v in (value.values or {}).values())


def _tier(result: RunResult, returned: list[CaseOutcome], failures: dict[str, Clause], fixtures: FixtureSet) -> MetamorphicTier | None:
    typical = [c.case_id for c in fixtures.cases if c.kind == "typical"]
    got = {c.case_id: c for c in returned}
    if not all(cid in got for cid in typical):
        return None
    if any(cid in failures and failures[cid].kind == "type" for cid in typical):
        return None
    kinds = {_value(got[cid]).type for cid in typical}
    if len(kinds) != 1:
        return None
    if any(got[cid].repeat_equal is True for cid in typical) and not any(got[cid].repeat_equal is False for cid in typical):
        return "relational" if _relations_hold(fixtures, result) else "deterministic"
    return "well_formed"


def _relations_hold(fixtures: FixtureSet, result: RunResult) -> bool:
    """Whether every metamorphic case relates to its base case as its transform says.

    Only per-sample outputs can relate; an entry without them never reaches this tier.
    """
    got = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    relations = [c for c in fixtures.cases if c.relation_of]
    if not relations:
        return False
    for case in relations:
        base = next(c for c in fixtures.cases if c.case_id == case.relation_of)
        if case.case_id not in got or base.case_id not in got:
            return False
        n = base.dims["N"]
        before = {ch.name: np.asarray(ch.values) for ch in channels(got[base.case_id], n)}
        after = {ch.name: np.asarray(ch.values) for ch in channels(got[case.case_id], n)}
        if not before or set(before) != set(after):
            return False
        transform = case.transform or {}
        order = sample_permutation(transform["permute"], n) if "permute" in transform else np.arange(n)
        for name, values in before.items():
            if not np.allclose(after[name], values[order], atol=1e-9, rtol=1e-7, equal_nan=True):
                return False
    return True


def _load_reason(result: RunResult) -> str:
    exc = result.load_error
    assert exc is not None
    if exc.missing_module:
        return f"could not be defined: module {exc.missing_module} could not be had in the sandbox: {exc.message}"
    if exc.blocked:
        return f"could not be defined: {exc.blocked} (line {exc.line})" if exc.line else f"could not be defined: {exc.blocked}"
    where = f" (line {exc.line})" if exc.line else ""
    if NO_NETWORK.search(exc.message):
        return f"could not be defined: its module reaches for the network, which the sandbox does not give: " \
               f"{exc.type}: {exc.message}{where}"
    return f"could not be defined: {exc.type}: {exc.message}{where}"


def _nothing_finished(result: RunResult) -> str:
    cut_short = f"; the run then ended: {result.reason}" if result.end != "completed" and result.reason else ""

    def scope(cases: Sequence[object]) -> str:
        return "on every case" if len(cases) == len(result.cases) else f"on {len(cases)} of {len(result.cases)} cases"

    blocked = [c.exception for c in result.cases if c.outcome == "blocked" and c.exception]
    if blocked:
        return f"blocked by the sandbox {scope(blocked)}: {blocked[0].blocked}{cut_short}"
    unserialisable = [c.exception for c in result.cases if c.outcome == "unserialisable" and c.exception]
    if unserialisable:
        return f"returned values we cannot record {scope(unserialisable)}: {unserialisable[0].message}{cut_short}"
    return f"no case finished: {result.reason or result.end}"


# Clauses an observed value can be checked against without our fixture's dimensions (its shape and length clauses
# name the sizes of our cases, which the repository's own call did not use).
OBSERVED_CLAUSES = frozenset({"type", "finite", "not_none", "range"})
# What our own cases' status must be for the repository's own call to decide instead: they said nothing of the code.
SAID_NOTHING = ("no fixture", "constructed, but no method", "could not be defined", "blocked by the sandbox",
                "no case finished", "needs module", "needs the network")


def observed_value(summary: dict) -> EncodedValue:
    """A value the tracer summarised in the driver's process (`runner.tracer.summary`) as the child's summary of a
    case's value: its type's own name, shape, dtype and range; finite unless its range is not."""
    low, high = summary.get("min"), summary.get("max")
    finite = None if low is None or high is None else bool(np.isfinite(low) and np.isfinite(high))
    return EncodedValue(type=str(summary.get("type", "object")).rpartition(".")[2], dtype=summary.get("dtype"),
                        shape=summary.get("shape"), length=summary.get("len"), finite=finite,
                        min=low if finite else None, max=high if finite else None,
                        digest=hashlib.sha256(repr(sorted(summary.items())).encode()).hexdigest()[:16])


def from_observed(before: Verdict, observed: Observation | None, contract: Contract) -> Verdict:
    """The status from the repository's own call of the entry, where our own cases said nothing of it (rule 6):
    the value its driver got back, checked against the clauses that need no fixture of ours."""
    said_nothing = before.status == "ran_fixture" or (
        before.status == "unverified" and before.reason.startswith(SAID_NOTHING))
    if observed is None or observed.result is None or not said_nothing:
        return before
    value = observed_value(observed.result)
    where = f"{observed.driver}" + (f" (line {observed.line} of {observed.caller_path})" if observed.line else "")
    kept = observed.returned + observed.raised
    summary = (f"observed: its repository's own {observed.kind} {where} called it {observed.calls} time(s); "
               f"{observed.returned} of the {kept} calls kept returned, first {value.describe()}"
               + ("; one value per sample" if observed.per_sample else "") + f". Our own cases: {before.reason}")
    checked = [c for c in contract.clauses if c.kind in OBSERVED_CLAUSES]
    for clause in checked:
        if not check(clause, value, {}):
            declared = clause.origin in DECLARED
            if declared:
                return Verdict("ran_violates", f"{summary}; on the repository's own call it broke its own promise: "
                               f"{clause.text}, got {value.describe()}", "VIOLATES", None, clause.text)
            return Verdict("ran_draft_wrong", f"{summary}; our draft said it {clause.text}, but on the repository's "
                           f"own call it returned {value.describe()}", "OUTPUT_MISDECLARED", None, clause.text)
    held = (f"; its contract holds on that call ({'; '.join(c.text for c in checked)})" if checked else
            "; nothing declared to check")
    return Verdict("ran", summary + held, "PASSES" if checked else None)
