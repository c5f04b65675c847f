"""What we made up, and what the code did with it: the strings of our fixture that a refusal, a
missing file or a folder the code created can be traced to.

A string argument (`task_name = 'yes'`) or a namespace field (`output_dir = 'out'`) is our
invention. When the code refuses it by name ("Reader for yes not implemented"), looks for a file
under it that does not exist, or creates folders named after it (`y`, `e`, `s` from `'yes'`), the
fault is our choice, not the code's and not the sandbox's: the verdict charges it to the fixture
and says which value did it.
"""

from __future__ import annotations

import re

from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet, ValueSpec
from paperproof.catalogue.run_result import ExceptionInfo, RunResult

NOT_HELD = "file not available in the sandbox: "


def strings(case: FixtureCase) -> list[tuple[str, str]]:
    """(where, value) for every string we made up for a case: literal arguments and namespace fields."""
    found: list[tuple[str, str]] = []
    for arg in case.args:
        found.extend(_of(arg.name, arg.spec))
    return found


def _of(name: str, spec: ValueSpec) -> list[tuple[str, str]]:
    if spec.kind == "literal" and isinstance(spec.params.get("value"), str) and spec.params["value"]:
        return [(f"`{name}`", spec.params["value"])]
    if spec.kind == "namespace":
        attrs = spec.params.get("attrs", {})
        return [(f"`{name}.{key}`", value) for key, value in sorted(attrs.items()) if isinstance(value, str) and value]
    return []


def refused(case: FixtureCase, exc: ExceptionInfo) -> str | None:
    """Our made-up value the exception's message names, in words: a string argument as a word
    ("Reader for yes not implemented"), a namespace field quoted or as a folder (`'out'`, `out/x.json`),
    where a common word such as `data` or `cpu` in a message means nothing."""
    made = strings(case)
    for where, value in made:
        word = re.escape(value)
        pattern = rf"(?<![\w.]){word}(?![\w])" if "." not in where else rf"(['\"]){word}\1|(?<![\w./]){word}/"
        if len(value) >= 2 and re.search(pattern, exc.message):
            return f"{where} = {value!r}"
    literal = [(where, value) for where, value in made if "." not in where]
    if exc.type.rpartition(".")[2] == "NotImplementedError" and not exc.message.strip() and literal:
        where, value = literal[0]  # a bare `else: raise NotImplementedError` after the branches a string selects
        return f"{where} = {value!r} (a bare NotImplementedError, as code raises on a value it has no branch for)"
    return None


def under_ours(case: FixtureCase, path: str) -> str | None:
    """The made-up value a relative path lies under (`out/config.json` under `output_dir = 'out'`)."""
    if path.startswith("/"):
        return None
    head = path.removeprefix("./").split("/", 1)[0]
    return next((f"{where} = {value!r}" for where, value in strings(case) if value.rstrip("/") == head), None)


def unblock(fixtures: FixtureSet, result: RunResult) -> RunResult:
    """A result in which a file the code missed under a folder we made up is its own FileNotFoundError
    at its input boundary, not an attempt the sandbox blocked: nothing of the host was hidden there."""
    cases = {c.case_id: c for c in fixtures.cases}
    changed, kept_paths = [], set()
    for outcome in result.cases:
        exc, case = outcome.exception, cases.get(outcome.case_id)
        if outcome.outcome == "blocked" and exc is not None and exc.blocked and exc.blocked.startswith(NOT_HELD) \
                and case is not None and (ours := under_ours(case, exc.blocked.removeprefix(NOT_HELD))):
            kept_paths.add(exc.blocked.removeprefix(NOT_HELD))
            exc = exc.model_copy(update={"type": "FileNotFoundError", "blocked": None, "message": (
                f"{exc.message} (a path under our made-up {ours}, which names no folder)")})
            outcome = outcome.model_copy(update={"outcome": "raised", "exception": exc})
        changed.append(outcome)
    if not kept_paths:
        return result
    blocked = [line for line in result.blocked if not any(f"open {path}," in line for path in kept_paths)]
    return result.model_copy(update={"cases": changed, "blocked": blocked})


def created_from(case: FixtureCase, written: list[str]) -> tuple[str, bool] | None:
    """Our made-up value the names the code created come from, and whether they are pieces of it (`y`,
    `e`, `s` of `'yes'`: our string taken as a list of paths) rather than the value itself (our
    `output_dir` used as the folder it names)."""
    names = [w.rstrip("/") for w in written]
    for where, value in strings(case):
        if names and all(n and n in value for n in names):
            return f"{where} = {value!r}", any(n != value for n in names)
    return None


__all__ = ["created_from", "refused", "strings", "unblock", "under_ours"]
