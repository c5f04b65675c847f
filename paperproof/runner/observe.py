"""Running the repository's own drivers in the sandbox, cheapest first under one budget, and reading back what
they called.

`catalogue.drivers` finds the tests, examples, scripts, notebooks and README blocks that reach the repository's
entries; each runs here as a sandbox run of its own (the same zygotes, namespaces, filter and limits as an entry's
case), with the tracer (`runner.tracer`) recording every call into the repository's code. A driver is stopped at
`child.DRIVER_SHARE` of its case budget so what it called until then still comes back. One budget covers all of a
repository's drivers: at most `MAX_RUNS` runs and `BUDGET_SECONDS` of CPU time, as many run side by side as the
executor has zygotes; a driver that reaches only entries already settled (shown returning one value per sample, or
called by two drivers) is not run. What comes back is parsed into validated records (`catalogue.observed`);
anything malformed makes that driver `failed`, never a fact about an entry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import ValidationError

from paperproof.catalogue.budget import Budget
from paperproof.catalogue.driver_line import DriverStatus
from paperproof.catalogue.drivers import Driver, find_drivers
from paperproof.catalogue.entry import Entry
from paperproof.catalogue.observed import DriverRun, ObservedCode, entry_key, observations
from paperproof.plumbing.progress import bar
from paperproof.runner.executor import Executor
from paperproof.runner.sandbox import Limits

MAX_RUNS = 6  # drivers run for one repository
BUDGET_SECONDS = 90.0  # CPU seconds all of a repository's drivers may spend together
MAX_LISTED = 24  # drivers a repository's record lists (run or not)


def payload(driver: Driver, snapshot: str, environment: str | None, stubs: Sequence[str],
            limits: dict | None, entry_files: Iterable[str] = ()) -> dict:
    """The request a zygote runs: the harness reads `driver` and runs one case process that runs it. `entry_files`:
    the files the entries lie in, whose classes own the methods they inherit (`runner.tracer`)."""
    return {"snapshot": snapshot, "driver": driver.model_dump(mode="json"), "path": driver.path,
            "entry_files": sorted(entry_files),
            "name": driver.target, "kind": "driver", "cases": [{"case_id": "driver", "args": []}],
            "environment": environment, "stubs": list(stubs), "limits": limits or {}, "wants_device": False}


# A temporary file or folder the driver made in the sandbox's own /tmp: a random name, the same every run for what
# a record says, so that the same code gives the same record.
TEMPORARY = re.compile(r"/tmp/(?:tmp|run-)[\w.-]*")


def _said(text: object, limit: int) -> str:
    return TEMPORARY.sub("<a temporary path>", str(text))[:limit]


def parse(driver: Driver, answer: dict, keys: set[str]) -> DriverRun:
    """A zygote's answer as a driver's run: what the harness decided, the trace it bounded, validated here, kept for
    the calls of `keys` (entry keys) only."""
    if "runner_error" in answer:
        return DriverRun(driver=driver, status="failed", ended=f"runner error: {str(answer['runner_error'])[:300]}")
    case = None
    for line in answer.get("report") or []:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") in ("case", "load_failed"):
            case = event
    if case is None:
        return DriverRun(driver=driver, status="failed", ended="the sandbox reported no run of it")
    if case.get("event") == "load_failed" or case.get("outcome") != "returned":
        exception = case.get("exception") or {}
        why = case.get("ended") or f"{exception.get('type', 'Exception')}: {exception.get('message', '')}"
        cut: DriverStatus = "cut" if case.get("end") in ("killed", "timeout", "cut_by_load") else "failed"
        return DriverRun(driver=driver, status=cut, ended=_said(why, 300))
    trace = case.get("trace") or {}
    try:
        observed = [ObservedCode.model_validate(o) for o in trace.get("observed", [])
                    if isinstance(o, dict) and entry_key(str(o.get("key", ""))) in keys]
        ended = str(trace.get("ended", "returned"))[:120]
        error = trace.get("error")
        status: DriverStatus = "cut" if ended == "cut" else "ran" if ended in ("passed", "returned") else "failed"
        return DriverRun(driver=driver, status=status, ended=ended, error=_said(error, 300) if error else None,
                         cpu_seconds=float(trace["cpu_seconds"]) if "cpu_seconds" in trace else None,
                         replaced=[str(r)[:120] for r in trace.get("replaced", [])][:32], observed=observed,
                         values={k: v for k, v in (trace.get("values") or {}).items() if entry_key(str(k)) in keys},
                         planted=trace.get("planted") or {})
    except (ValidationError, ValueError, TypeError, AttributeError) as exc:
        return DriverRun(driver=driver, status="failed", ended=f"its trace is malformed: {str(exc).splitlines()[0][:200]}")


def observe(root: Path, entries: Sequence[Entry], executor: Executor, environment: str | None = None,
            stubs: Sequence[str] = (), limits: dict | None = None, skipped: list[tuple[str, str]] | None = None,
            budget: Budget | None = None, drivers: Sequence[Driver] | None = None) -> list[DriverRun]:
    """The repository's drivers (`drivers`, when the caller found them already), run cheapest first until each
    entry they reach was observed or the budget is spent; the drivers not run are listed too (up to `MAX_LISTED`),
    each with why."""
    keys = {f"{e.path}::{e.qualname}" for e in entries}
    files = {e.path for e in entries}
    drivers = find_drivers(root, entries, None, skipped, budget) if drivers is None else drivers
    per_run = Limits(**(limits or {})).cpu_seconds
    runs: list[DriverRun | None] = []  # in the order the drivers were taken
    settled: set[str] = set()  # entries a driver showed returning one value per sample, or two drivers called
    called: dict[str, int] = {}
    spent, made = 0.0, 0
    wave: list[tuple[int, Driver]] = []

    def run_wave() -> None:
        """The drivers taken, run side by side (one per zygote), their calls counted in the order taken."""
        nonlocal spent
        with ThreadPoolExecutor(max_workers=len(wave)) as pool:
            answers = list(pool.map(lambda d: executor.answer(payload(d[1], str(root), environment, stubs, limits, files)),
                                    wave))
        for (slot, driver), answer in zip(wave, answers, strict=True):
            run = parse(driver, answer, keys)
            spent += run.cpu_seconds if run.cpu_seconds is not None else per_run
            for key, seen in observations([run]).items():
                called[key] = called.get(key, 0) + 1
                if seen.per_sample or called[key] >= 2:
                    settled.add(key)
            runs[slot] = run
        wave.clear()

    for driver in bar(drivers[:MAX_LISTED], "drivers", unit="driver"):
        if made >= MAX_RUNS or spent >= BUDGET_SECONDS:
            runs.append(DriverRun(driver=driver, status="not_run", ended=f"past the repository's driver budget "
                                  f"({MAX_RUNS} runs, {BUDGET_SECONDS:.0f} s of CPU time)"))
        elif set(driver.reaches) <= settled:
            runs.append(DriverRun(driver=driver, status="not_run",
                                  ended="every entry it reaches was observed by the drivers run before it"))
        else:
            wave.append((len(runs), driver))
            runs.append(None)
            made += 1
            if len(wave) >= executor.workers:
                run_wave()
    if wave:
        run_wave()
    return [run for run in runs if run is not None]


__all__ = ["BUDGET_SECONDS", "MAX_RUNS", "observe", "parse", "payload"]
