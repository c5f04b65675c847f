"""Turning a zygote's answer into a `RunResult`, with a precise reason for how the run ended.

The answer's frame (exit status, signal, sizes, limits) comes from the zygote, and its report
lines from the run's harness (`runner.harness`), which decided every case's outcome without
running sample code. They are still parsed as JSON into validated models, and anything
unexpected (an unknown event, a second isolation record or case result, a case we did not ask
for) makes the report untrusted as a whole: a fault of ours is never published as a result.
"""

from __future__ import annotations

import json
from typing import Protocol, TypedDict, cast

from pydantic import ValidationError

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import FixtureSet
from paperproof.catalogue.run_result import CaseOutcome, ExceptionInfo, Isolation, RunEnd, RunResult
from paperproof.runner.sandbox import Limits

RUNNER_VERSION = "7"


class Asked(Protocol):
    """What a run was asked for (an `executor.RunRequest`, which imports this module): the entry and its cases."""

    @property
    def entry(self) -> Entry: ...

    @property
    def fixtures(self) -> FixtureSet: ...


def _mib(size: int) -> str:
    return f"{size / 1024**2:g} MiB"


class _Report:
    """What the report lines said, or the first reason they cannot be trusted."""

    def __init__(self, lines: list, wanted: list[str]) -> None:
        self.isolation: Isolation | None = None
        self.cases: dict[str, CaseOutcome] = {}
        self.load_error: ExceptionInfo | None = None
        self.started: list[str] = []
        self.ends: dict[str, tuple[str, str]] = {}  # case -> (run end, how its process ended)
        self.blocked: list[str] = []
        self.usage: dict | None = None  # what the run used (`runner.meter`): timing, never part of a verdict
        self.untrusted: str | None = None
        for line in lines:
            try:
                self._read(json.loads(line), wanted)
            except (ValueError, ValidationError, KeyError, TypeError, AttributeError) as exc:
                self.untrusted = f"malformed report line: {str(exc).splitlines()[0][:200]}"
            if self.untrusted:
                break

    def _read(self, event: dict, wanted: list[str]) -> None:
        kind = event.get("event")
        fields = {k: v for k, v in event.items() if k != "event"}
        if kind == "isolation":
            if self.isolation is not None:
                self.untrusted = "a second isolation record in the report"
            self.isolation = Isolation.model_validate(fields)
        elif kind in ("load", "loaded"):
            pass
        elif kind == "usage":
            if self.usage is not None:
                self.untrusted = "a second usage record in the report"
            self.usage = {key: float(fields[key]) if fields.get(key) is not None else None
                          for key in ("cpu", "wall", "waited")}
        elif kind == "start":
            self.started.append(str(fields["case_id"]))
        elif kind == "load_failed":
            self.load_error = ExceptionInfo.model_validate({**fields["exception"], "where": "load"})
            self._attempts(fields.get("blocked", []))
        elif kind == "case":
            end = fields.pop("end", None)
            self._attempts(fields.pop("blocked", []))
            outcome = CaseOutcome.model_validate(fields)
            if end is not None:
                self.ends[outcome.case_id] = (str(end), outcome.ended or str(end))
            if outcome.case_id not in wanted:
                self.untrusted = f"a result for case {outcome.case_id!r}, which was not asked for"
            elif outcome.case_id in self.cases:
                self.untrusted = f"two results for case {outcome.case_id}"
            self.cases[outcome.case_id] = outcome
        else:
            self.untrusted = f"a report line with an unknown event {str(kind)[:40]!r}"

    def _attempts(self, lines: list) -> None:
        for line in lines:
            if str(line)[:300] not in self.blocked:
                self.blocked.append(str(line)[:300])

    @property
    def current(self) -> str | None:
        """The case that was running when the run ended: started, never reported."""
        pending = [cid for cid in self.started if cid not in self.cases]
        return pending[-1] if pending else None


class _Frame(TypedDict):
    """The fields of a RunResult that come from the request and the answer's frame, however the run ended."""

    code_sha256: str
    fixture_digest: str
    runner_version: str
    device: str
    exit_code: int | None
    signal: int | None
    stdout_tail: str
    stderr_tail: str


class _Timing(TypedDict):
    """What the run used (the harness's `usage` record) and the tries before it the machine's load cut short."""

    cpu_seconds: float | None
    wall_seconds: float | None
    waited_seconds: float | None
    load_cuts: list[str]


LOAD_ADVICE = "a rerun on a less busy machine is expected to give its status"


def load_cut(answer: dict) -> str | None:
    """How the machine's load cut this run short (its processes starved of a CPU until the wall-clock
    backstop), in words, or None: then the run is tried again, and such an answer is never a result."""
    limits = Limits(**(answer.get("limits") or {}))
    if answer.get("timed_out") and answer.get("starved"):
        return (f"cut by load: the machine's other work held the CPU its processes waited for until the "
                f"wall-clock backstop of {limits.wall_seconds:g} s")
    for line in answer.get("report", []) or []:
        if '"cut_by_load"' in line:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "case" and event.get("end") == "cut_by_load":
                return f"{str(event.get('ended'))[:300]} during case {str(event.get('case_id'))[:100]}"
    return None


def parse_answer(answer: dict, request: Asked) -> RunResult:
    """Turn a zygote's answer into a RunResult; anything malformed is a protocol error, not a crash.
    `load_cuts` in the answer are the tries before it that the machine's load cut short (`Zygote.run`)."""
    base: _Frame = {
        "code_sha256": request.entry.code_sha256,
        "fixture_digest": request.fixtures.digest(),
        "runner_version": RUNNER_VERSION,
        "device": str(answer.get("device", "cpu")),
        "exit_code": answer.get("exit_code"),
        "signal": answer.get("signal"),
        "stdout_tail": str(answer.get("stdout_tail", ""))[-2048:],
        "stderr_tail": str(answer.get("stderr_tail", ""))[-2048:],
    }
    wanted = [c.case_id for c in request.fixtures.cases]
    if "runner_error" in answer:
        return RunResult(**base, end="runner_error", reason=str(answer["runner_error"])[:500],
                         cases=[CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted])
    report = _Report(answer.get("report", []), wanted)
    end, reason = _how_it_ended(answer, report, wanted)
    cuts = [str(c)[:500] for c in answer.get("load_cuts", []) or []]
    usage = report.usage or {}
    timing: _Timing = {"cpu_seconds": usage.get("cpu"), "wall_seconds": usage.get("wall"),
                       "waited_seconds": usage.get("waited"), "load_cuts": cuts}
    if end == "cut_by_load":
        tries = "on both tries" if cuts else "on its only try"
        reason = f"{reason} ({tries}); {LOAD_ADVICE}"
        return RunResult(**base, **timing, end=end, reason=reason, isolation=report.isolation or Isolation(),
                         cases=[CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted])
    if end == "protocol_error":  # nothing it reported is kept
        cases = [CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted]
    else:
        cases = [report.cases.get(cid) or CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted]
    return RunResult(**base, **timing, end=end, reason=reason, load_error=report.load_error if end == "load_failed" else None,
                     cases=cases if end != "load_failed" else [], isolation=report.isolation or Isolation(),
                     blocked=report.blocked if end != "protocol_error" else [])


def _how_it_ended(answer: dict, report: _Report, wanted: list[str]) -> tuple[RunEnd, str | None]:
    limits = Limits(**(answer.get("limits") or {}))
    during = f" during case {report.current}" if report.current else ""
    memory = answer.get("memory") or {}
    if memory.get("stopped"):
        return "killed", (f"stopped for memory: its processes together reached the memory limit of "
                          f"{_mib(limits.memory_bytes)} (every page they held, memfd and shared memory included, "
                          f"counted by its {memory.get('accounting')}){during}")
    if answer.get("timed_out"):  # the harness itself stopped answering: the zygote's backstop
        if answer.get("starved"):
            return "cut_by_load", (f"cut by load: the machine's other work held the CPU its processes waited for until "
                                   f"the wall-clock backstop of {limits.wall_seconds:g} s{during}")
        return "timeout", f"wall-clock limit of {limits.wall_seconds:g} s reached{during}; the process tree was killed"
    if answer.get("report_truncated"):
        return "output_limit", f"its report passed the cap of {_mib(limits.output_bytes)}"
    if report.untrusted:
        return "protocol_error", f"{report.untrusted}; its report is not trusted"
    if report.load_error is not None:
        return "load_failed", None
    if report.ends:  # cases whose process ended without returning: the first says how
        ends = [(cid, *report.ends[cid]) for cid in wanted if cid in report.ends]
        order = ("cut_by_load", "timeout", "output_limit", "killed", "exited")
        end = min((e for _, e, _ in ends), key=lambda e: order.index(e) if e in order else len(order))
        first, _, how = next(x for x in ends if x[1] == end)
        if end == "exited" and how.endswith(" without returning"):
            how = "exited without returning (" + how.removesuffix(" without returning").removeprefix("exited with ") + ")"
        others = len(ends) - 1
        more = f" and {others} other case{'s' if others > 1 else ''}" if others else ""
        killed = "; the process tree was killed" if end == "timeout" else ""
        # a case's end as the harness wrote it (a RunEnd); RunResult validates it
        return cast(RunEnd, end), f"{how} during case {first}{more}{killed}"
    code = answer.get("exit_code")
    if report.current is not None or not all(cid in report.cases for cid in wanted):
        if answer.get("signal"):
            return "killed", f"the run's harness ended by signal {answer['signal']}{during}"
        if not report.current and code == 0:
            return "killed", f"CPU time limit of {limits.cpu_seconds:g} s spent before every case ran"
        return "runner_error", f"the run's harness exited with status {code}{during} before every case was reported"
    return "completed", None
