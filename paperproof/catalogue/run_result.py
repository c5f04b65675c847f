"""What one sandboxed run of an entry did, as the parent records it.

The child reports in plain JSON; the parent validates it into these models and never unpickles
anything that came out of the sandbox.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CaseOutcomeKind = Literal[
    "returned",  # the call returned a value, encoded below
    "raised",  # the call raised an exception
    "blocked",  # the call tried something the sandbox forbids (network, writing outside its directory)
    "unserialisable",  # it returned something we could not encode, or what came back is not a value
    "exited",  # its process ended without handing back a value (exit, signal, a limit)
    "not_reached",  # the run ended (timeout, crash, exit) before this case
]

RunEnd = Literal[
    "completed",  # every case reported
    "load_failed",  # the entry could not be defined (missing module, syntax, default argument)
    "timeout",  # the wall-clock backstop, not for want of a CPU (it slept or waited); the whole process tree was killed
    # The wall-clock backstop, reached while its processes waited for a CPU the machine's other work held, on
    # the try the runner makes again after such a cut too: not the sample's result (a quiet machine gives one),
    # never cached, and never a verdict but `unverified`, which a rerun is expected to replace.
    "cut_by_load",
    "killed",  # ended by a signal or a limit (the CPU budget of all its processes, memory, segfault, killed itself)
    "exited",  # a case's process ended without returning (exit, or stopped without a value)
    "output_limit",  # its report or its output exceeded the caps
    "protocol_error",  # its report was not valid, or the sample modified the runner: not trusted
    "runner_error",  # the runner failed (its zygote died): not the sample's result, never cached
]


# RunResult's fields that say how long a run took: they vary from run to run, and compare nothing about the sample
TIMING_FIELDS = frozenset({"cpu_seconds", "wall_seconds", "waited_seconds"})


class EncodedValue(BaseModel):
    """A returned value as the child summarised it: type, shape, range, and small data in full."""

    model_config = ConfigDict(frozen=True)

    type: str
    dtype: str | None = None
    shape: list[int] | None = None
    length: int | None = None
    finite: bool | None = None
    min: float | None = None
    max: float | None = None
    data: list | None = None
    items: list[EncodedValue] | None = None
    keys: list[str] | None = None
    values: dict[str, EncodedValue] | None = None
    repr: str | None = None
    digest: str
    truncated: bool = False

    def describe(self) -> str:
        """A short human summary for pages: `ndarray float64 [16] in [0.02, 0.97]`."""
        parts = [self.type]
        if self.dtype:
            parts.append(self.dtype)
        if self.shape is not None:
            parts.append("[" + ", ".join(str(d) for d in self.shape) + "]")
        elif self.length is not None:
            parts.append(f"len {self.length}")
        if self.min is not None and self.max is not None:
            parts.append(f"in [{self.min:.4g}, {self.max:.4g}]")
        if self.finite is False:
            parts.append("non-finite")
        if self.keys is not None and self.type in ("dict", "DataFrame", "namespace"):
            shown = ", ".join(self.keys[:6]) + (", …" if len(self.keys) > 6 else "")
            parts.append("{" + shown + "}")
        if self.repr is not None and self.type in ("str", "int", "float", "bool", "NoneType", "object"):
            parts.append(self.repr if len(self.repr) <= 40 else self.repr[:39] + "…")
        return " ".join(parts)


class ExceptionInfo(BaseModel):
    """An exception raised by the entry. `where` says whether it came from binding our arguments,
    the entry's own frame, or code it called; `missing_module` is set for imports we lack."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    where: Literal["binding", "entry", "callee", "load"] = "entry"
    missing_module: str | None = None
    blocked: str | None = None
    line: int | None = None


class CaseOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    case_id: str
    outcome: CaseOutcomeKind
    value: EncodedValue | None = None
    exception: ExceptionInfo | None = None
    repeat_equal: bool | None = None
    ended: str | None = None  # for `exited`: how its process ended
    wrote: list[str] = Field(default_factory=list)  # names it added to its working directory, outside its scratch folder
    # How its case process had the entry: its module imported as the repository imports it, or its closure
    # where that module's top level could not run (`runner.child._define`), in the case process's own words.
    loaded: str | None = None


class Isolation(BaseModel):
    """Which isolation layers held for this run; `fallbacks` states each one that did not."""

    model_config = ConfigDict(frozen=True)

    network: Literal["namespace", "none"] = "none"
    pid: Literal["namespace", "process_group"] = "process_group"
    filesystem: Literal["read_only", "private_tmp", "none"] = "none"
    user: Literal["unprivileged", "same"] = "same"
    syscalls: Literal["seccomp", "none"] = "none"
    fallbacks: list[str] = Field(default_factory=list)


class RunResult(BaseModel):
    """Everything one run produced. `end` says how the run ended; `cases` what each call did."""

    model_config = ConfigDict(frozen=True)

    code_sha256: str
    fixture_digest: str
    runner_version: str
    end: RunEnd
    reason: str | None = None
    load_error: ExceptionInfo | None = None
    cases: list[CaseOutcome] = Field(default_factory=list)
    device: str = "cpu"
    isolation: Isolation = Field(default_factory=Isolation)
    blocked: list[str] = Field(default_factory=list)  # what the sandbox refused it, as the harness saw it
    exit_code: int | None = None
    signal: int | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    # What the run used, in seconds (`runner.meter`): CPU time of all its processes together, wall-clock time,
    # and time some process of it was ready to run and waited for a CPU. Timing: it varies from run to run and
    # with the machine's load, so no verdict and no page reads it.
    cpu_seconds: float | None = None
    wall_seconds: float | None = None
    waited_seconds: float | None = None
    # Earlier tries of this run that the machine's load cut short (`cut_by_load`), each in the runner's words.
    load_cuts: list[str] = Field(default_factory=list)
