"""Turning an entry, its fixtures, its run and its verdict into the `Sample` record pages show."""

from __future__ import annotations

import hashlib
from typing import Literal

from paperproof.catalogue import licence
from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import ArgumentEvidence, FixtureSet
from paperproof.catalogue.observed import Observation
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import CaseSummary, Checked, Contract, Fidelity, Sample, SampleLink
from paperproof.fixtures.describe import describe
from paperproof.runner import cuda_on_cpu, legacy_numpy, sandbox
from paperproof.verify.verdict import Verdict


def sample_id(entry: Entry) -> str:
    """Stable across builds; distinct for identical code in two forks."""
    key = "\0".join((entry.repo, entry.path, entry.qualname, entry.code_sha256))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def signature(entry: Entry) -> str:
    parts = []
    for p in entry.params:
        text = {"var_positional": "*", "var_keyword": "**"}.get(p.kind, "") + p.name
        if p.annotation:
            text += f": {p.annotation}"
        if p.default is not None:
            text += f" = {p.default}" if p.annotation else f"={p.default}"
        parts.append(text)
    head = "class " if entry.kind == "class" else "def "
    tail = f" -> {entry.returns}" if entry.returns else ""
    return f"{head}{entry.name}({', '.join(parts)}){tail}"


def case_summaries(fixtures: FixtureSet, result: RunResult | None, verdict: Verdict) -> list[CaseSummary]:
    outcomes = {c.case_id: c for c in result.cases} if result else {}
    summaries = []
    for case in fixtures.cases:
        outcome = outcomes.get(case.case_id)
        exception = None
        if outcome and outcome.exception:
            exc = outcome.exception
            exception = exc.blocked or f"{exc.type}: {exc.message}" + (f" (line {exc.line})" if exc.line else "")
        summaries.append(CaseSummary(
            case_id=case.case_id,
            kind=case.kind,
            args={a.name: describe(a.spec, case) for a in case.args},
            outcome=outcome.outcome if outcome else "not_run",
            output=outcome.value.describe() if outcome and outcome.value else None,
            exception=exception or (outcome.ended if outcome else None),
            failed_clause=verdict.case_failures.get(case.case_id),
        ))
    return summaries


def reproduce_command(record: RepoRecord, entry: Entry) -> str:
    where = record.url if not record.specimen else f"{record.url} (bundled with paperproof)"
    checkout = "CHECKOUT" if record.commit is None else f"CHECKOUT@{record.commit[:12]}"
    return f"paperproof verify {checkout} --entry {entry.path}::{entry.qualname} --json   # CHECKOUT: {where}"


def loaded(result: RunResult | None) -> tuple[Literal["module", "closure"] | None, str]:
    """How the sandbox had the entry (`module` or `closure`), and the case process's line saying so."""
    line = next((c.loaded for c in result.cases if c.loaded), None) if result else None
    if line is None:
        return None, ""
    return ("closure" if line.startswith("defined from its closure") else "module"), line


def notes(entry: Entry, fixtures: FixtureSet, result: RunResult | None = None) -> list[str]:
    """What we did to run the entry that a reader should know."""
    out = []
    how, line = loaded(result)
    if how == "module":
        out.append(f"Loaded as its repository loads it: {line} (its package root and the folders its scripts put "
                   "on sys.path; `__main__` blocks not run), so its module's globals exist.")
    elif how == "closure":
        out.append(f"{line[0].upper()}{line[1:]}; so it was defined from its closure in {entry.path} "
                   f"({', '.join(entry.closure_names) or 'no helpers'}), and the rest of the module was not executed.")
    for name in fixtures.supplied_defaults:
        default = next(p.default for p in entry.params if p.name == name)
        out.append(f"The default of `{name}` (`{default}`) runs code when the function is defined; our fixture "
                   f"supplies `{name}`, so that default was not evaluated.")
    for skipped in fixtures.skipped_methods:
        out.append(f"Method {skipped.param} was not called: {skipped.reason}.")
    if result is not None and result.device == "cpu" and cuda_on_cpu.mentions_cuda(entry.closure) \
            and not sandbox.gpu_present():
        out.append("Its code moves tensors to a GPU (`.cuda()`, `device=\"cuda\"`); this machine has none, so those "
                   "moves left each tensor on the CPU, where it computed the same values.")
    if result is not None and (removed := legacy_numpy.used(entry.closure)):
        out.append(f"Its code uses names NumPy has since removed ({', '.join(f'`np.{n}`' for n in removed)}); the "
                   "sandbox gave each its old meaning (`np.Inf` is `np.inf`, `np.float` is `float`), as the NumPy it "
                   "was written for did.")
    if fixtures.stubs:
        out.append(f"Not installed in the runner, so given stand-in modules: {', '.join(fixtures.stubs)}; "
                   "code that uses one raises \"needs X\", code that does not runs.")
    protocol = next((case.protocol for case in fixtures.cases if case.protocol), None)
    if protocol:
        words = {"batch": "per batch", "epoch": "per epoch", "chosen": "at chosen epochs (the first, middle and last)",
                 "start": "once before training", "end": "once after training"}
        hooks = ", ".join(f"{m}() {words.get(when, 'per ' + when)}" for m, when in protocol.get("hooks", []))
        final = f", then {protocol['final']}" if protocol.get("final") else ""
        driven = (f"as its repository's own loop drives it ({protocol['loop']})" if protocol.get("loop") else
               "as a training loop would (no loop of its repository calls its hooks)" if protocol["kind"] == "hooks"
               else f"as {protocol['kind']}")
        if protocol["kind"] == "fits":
            out.append(f"It trains its model itself: given a real training run's untrained model, optimiser and data, "
                       f"{hooks.replace(' once before training', '')} trained it in its own loop{final}. No reference "
                       "of ours saw the same training, so its scores are checked by their contracts, planted hardness "
                       "and sample order, not against the paper's formula.")
        else:
            out.append(f"Driven {driven} on a real training run (batches of {tuple(protocol['batch'])}"
                       f"{'; ' + hooks if hooks else ''}{final}).")
    if any(case.per_sample for case in fixtures.cases):
        out.append("It takes one sample's data: each case called it once per sample, judged each call's output "
                   "against its annotation, and collected the outputs.")
    out.extend(fixtures.choices)
    return out


def _linked(record: RepoRecord, found: ArgumentEvidence) -> ArgumentEvidence:
    """A call site's line, linked at the repository's pinned commit."""
    if found.path is None:
        return found
    return found.model_copy(update={"url": record.line_url(found.path, found.line)})


def _observed(record: RepoRecord, observed: Observation | None) -> Observation | None:
    """The driver's call, its caller's line linked at the repository's pinned commit."""
    if observed is None or observed.caller_path is None:
        return observed
    return observed.model_copy(update={"url": record.line_url(observed.caller_path, observed.line)})


def checked(verdict: Verdict, fidelity: list[Fidelity]) -> Checked | None:
    """What a run checked: the paper's definition (an output recognised as a metric, faithful or not), only the
    code's own contracts, or nothing. None for a sample that did not run."""
    if not verdict.status.startswith("ran"):
        return None
    if fidelity:
        return "paper"
    if verdict.status == "ran_fixture":
        return "nothing"
    return "contracts" if verdict.contract_check is not None else "nothing"


def make_sample(entry: Entry, record: RepoRecord, link_basis: str, fixtures: FixtureSet,
                result: RunResult | None, contract: Contract, verdict: Verdict, papers: list[str],
                fidelity: list[Fidelity] | None = None, why_chosen: str = "",
                observed: Observation | None = None) -> Sample:
    spdx = record.licence or licence.NO_LICENCE
    shown = licence.inline_ok(spdx)
    return Sample(
        sample_id=sample_id(entry),
        entry=entry.name,
        qualname=entry.qualname,
        kind=entry.kind,
        repo=record.repo,
        repo_url=record.url,
        path=entry.path,
        lineno=entry.lineno,
        end_lineno=entry.end_lineno,
        file_url=record.file_url(entry.path) + f"#L{entry.lineno}-L{entry.end_lineno}",
        link_basis=link_basis,
        why_chosen=why_chosen,
        status=verdict.status,
        reason=verdict.reason,
        verification_level=verdict.verification_level,
        checked=checked(verdict, fidelity or []),
        contract_check=verdict.contract_check,
        metamorphic_tier=verdict.metamorphic_tier,
        behaviour_fingerprint=verdict.fingerprint is not None,
        fingerprint=verdict.fingerprint,
        licence=spdx,
        inline_ok=shown,
        code_sha256=entry.code_sha256,
        signature=signature(entry),
        docstring=entry.docstring if shown else None,
        source=entry.source if shown else None,
        contract=contract,
        failed_clause=verdict.failed_clause,
        cases=case_summaries(fixtures, result, verdict),
        closure_names=entry.closure_names,
        loaded=loaded(result)[0],
        arguments=[_linked(record, a) for a in fixtures.evidence],
        isolation=result.isolation if result else None,
        blocked=result.blocked if result else [],
        device=result.device if result else None,
        reproduce=reproduce_command(record, entry),
        papers=papers,
        fidelity=fidelity or [],
        notes=notes(entry, fixtures, result),
        observed=_observed(record, observed),
    )


def link_behaviours(samples: list[Sample]) -> list[Sample]:
    """Samples whose outputs agree on every shared case are linked to each other ("behaves like")."""
    groups: dict[str, list[Sample]] = {}
    for sample in samples:
        if sample.fingerprint and sample.status != "unverified":
            groups.setdefault(sample.fingerprint, []).append(sample)
    linked = []
    for sample in samples:
        peers = [p for p in groups.get(sample.fingerprint or "", []) if p.sample_id != sample.sample_id]
        if peers:
            sample = sample.model_copy(update={"behaves_like": [
                SampleLink(sample_id=p.sample_id, entry=p.entry, repo=p.repo) for p in peers]})
        linked.append(sample)
    return linked
