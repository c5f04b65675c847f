"""Turning a zygote's answer into a `RunResult`, with a precise reason for how the run ended.

The answer's frame (exit status, signal, sizes, limits) comes from the zygote, which we trust;
its report lines were written by the sample's process, which we do not: they are parsed as
JSON into validated models, and anything unexpected (an unknown event, a second isolation
record or case result, a case we did not ask for) makes the report untrusted as a whole.
"""

from __future__ import annotations

import json
import signal
from typing import TYPE_CHECKING

from pydantic import ValidationError

from paperproof.catalogue.run_result import CaseOutcome, ExceptionInfo, Isolation, RunResult
from paperproof.runner.sandbox import Limits

if TYPE_CHECKING:
    from paperproof.runner.executor import RunRequest

RUNNER_VERSION = "2"

_SIGNAL_REASONS = {
    signal.SIGSEGV: "segmentation fault",
    signal.SIGBUS: "bus error",
    signal.SIGABRT: "aborted",
    signal.SIGILL: "illegal instruction",
    signal.SIGFPE: "arithmetic fault",
    signal.SIGALRM: "its own alarm timer",
    signal.SIGKILL: "killed, not by the runner's timeout (by the sample itself or the kernel's out-of-memory killer)",
    signal.SIGTERM: "terminated, not by the runner",
}


def _mib(size: int) -> str:
    return f"{size / 1024**2:g} MiB"


class _Report:
    """What the report lines said, or the first reason they cannot be trusted."""

    def __init__(self, lines: list, wanted: list[str]) -> None:
        self.isolation: Isolation | None = None
        self.cases: dict[str, CaseOutcome] = {}
        self.load_error: ExceptionInfo | None = None
        self.started: list[str] = []
        self.tampered: list[str] | None = None
        self.untrusted: str | None = None
        for line in lines:
            try:
                self._read(json.loads(line), wanted)
            except (ValueError, ValidationError, KeyError, TypeError, AttributeError) as exc:
                self.untrusted = f"malformed report line: {str(exc).splitlines()[0][:200]}"
            if self.untrusted or self.tampered is not None:
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
        elif kind == "start":
            self.started.append(str(fields["case_id"]))
        elif kind == "load_failed":
            self.load_error = ExceptionInfo.model_validate({**fields["exception"], "where": "load"})
        elif kind == "case":
            outcome = CaseOutcome.model_validate(fields)
            if outcome.case_id not in wanted:
                self.untrusted = f"a result for case {outcome.case_id!r}, which was not asked for"
            elif outcome.case_id in self.cases:
                self.untrusted = f"two results for case {outcome.case_id}"
            self.cases[outcome.case_id] = outcome
        elif kind == "tampered":
            self.tampered = [str(n)[:80] for n in fields["names"]][:20]
        else:
            self.untrusted = f"a report line with an unknown event {str(kind)[:40]!r}"

    @property
    def current(self) -> str | None:
        """The case that was running when the run ended: started, never reported."""
        pending = [cid for cid in self.started if cid not in self.cases]
        return pending[-1] if pending else None


def parse_answer(answer: dict, request: RunRequest) -> RunResult:
    """Turn a zygote's answer into a RunResult; anything malformed is a protocol error, not a crash."""
    base = {
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
    if end == "protocol_error":  # nothing it reported is kept
        cases = [CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted]
    else:
        cases = [report.cases.get(cid) or CaseOutcome(case_id=cid, outcome="not_reached") for cid in wanted]
    return RunResult(**base, end=end, reason=reason, load_error=report.load_error if end == "load_failed" else None,
                     cases=cases if end != "load_failed" else [], isolation=report.isolation or Isolation())


def _how_it_ended(answer: dict, report: _Report, wanted: list[str]) -> tuple[str, str | None]:
    limits = Limits(**(answer.get("limits") or {}))
    during = f" during case {report.current}" if report.current else ""
    if report.tampered is not None:
        return "protocol_error", (f"the sample modified the runner ({', '.join(report.tampered)}); "
                                  "its report is not trusted")
    memory = answer.get("memory") or {}
    if memory.get("stopped"):
        return "killed", (f"stopped for memory: its processes together reached the memory limit of "
                          f"{_mib(limits.memory_bytes)} (every page they held, memfd and shared memory included, "
                          f"counted by its {memory.get('accounting')}){during}")
    if answer.get("timed_out"):
        return "timeout", f"wall-clock limit of {limits.wall_seconds:g} s reached{during}; the process tree was killed"
    number = answer.get("signal")
    if number:
        if number == signal.SIGXFSZ:
            sizes = answer.get("output_sizes") or {}
            full = [name for name, size in sizes.items() if size >= limits.file_size] or ["a file it wrote"]
            return "output_limit", f"{' and '.join(full)} reached the file-size cap of {_mib(limits.file_size)} (SIGXFSZ){during}"
        if number == signal.SIGXCPU:
            return "killed", f"CPU time limit of {limits.cpu_seconds} s reached (SIGXCPU){during}"
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else f"signal {number}"
        return "killed", f"ended by {name}: {_SIGNAL_REASONS.get(number, 'a signal')}{during}"
    if answer.get("report_truncated"):
        return "output_limit", f"its report passed the cap of {_mib(limits.output_bytes)}"
    if report.untrusted:
        return "protocol_error", f"{report.untrusted}; its report is not trusted"
    if report.load_error is not None:
        return "load_failed", None
    code = answer.get("exit_code")
    if not all(cid in report.cases for cid in wanted):
        return "exited", f"exited with status {code}{during} before reporting every case"
    if code not in (0, None):
        return "exited", f"exited with status {code} after reporting"
    return "completed", None
