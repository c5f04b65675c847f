"""Fixture cases: recipes for the arguments an entry is called with.

A case holds recipes (`ValueSpec`), not values, so that it is JSON, hashable into cache keys,
shown on pages as written, and materialised identically (seeded) inside the sandbox child.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CaseKind = Literal["typical", "edge", "relation"]


class ValueSpec(BaseModel):
    """A recipe for one value: a kind from the fixture library and its parameters.

    `dims` names refer to the case's dimensions (E epochs, N samples, C classes, ...), so that
    logits `[E, N, C]` and labels `[N]` of one case agree.
    """

    model_config = ConfigDict(frozen=True)

    kind: str
    params: dict[str, Any] = Field(default_factory=dict)

    def describe(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.kind}({inner})" if inner else self.kind


class FixtureArg(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    spec: ValueSpec
    positional: bool = False


class FixtureCase(BaseModel):
    """One call of an entry: arguments by recipe, the dimensions they share, and its seed.

    `transform` derives a metamorphic case from another (`{"permute": seed}` reorders the samples,
    `{"relabel": seed}` renames the classes); `relation_of` names the case it must relate to.
    `per_sample` calls an entry that takes one sample's data once per sample, and collects the
    outputs into one list, so per-sample code is comparable with vectorised code. For a class,
    `args` construct it and `method_args` are the arguments of each public method called after.
    """

    model_config = ConfigDict(frozen=True)

    case_id: str
    kind: CaseKind = "typical"
    seed: int
    dims: dict[str, int] = Field(default_factory=dict)
    args: list[FixtureArg] = Field(default_factory=list)
    method_args: dict[str, list[FixtureArg]] = Field(default_factory=dict)
    transform: dict[str, int] | None = None
    relation_of: str | None = None
    per_sample: bool = False
    # The calling protocol that drives the entry on a real training run (`fixtures.protocol`), if any.
    protocol: dict[str, Any] | None = None


EvidenceSource = Literal["observed", "call_site", "use", "docstring", "annotation", "name", "feedback"]


class ArgumentEvidence(BaseModel):
    """Where one argument's recipe came from (`fixtures.arguments`): the repository's own call site, how the body
    uses the parameter, its docstring or annotation, its name, or what a probe run in the sandbox answered."""

    model_config = ConfigDict(frozen=True)

    param: str
    source: EvidenceSource
    why: str = ""
    path: str | None = None  # the call site followed: its file (a notebook cell as `nb.ipynb#cell-3`) and line
    line: int | None = None
    url: str | None = None  # that line at the repository's pinned commit, where the sample's record knows it


class Unsynthesizable(BaseModel):
    """A required parameter we could not make a value for, and why."""

    model_config = ConfigDict(frozen=True)

    param: str
    reason: str


class FixtureSet(BaseModel):
    """All cases for one entry, or the reason there are none.

    `supplied_defaults` names parameters whose default runs code when the def is executed (a
    call, such as reading a vocabulary file) and which our cases supply instead; `skipped_methods`
    are public methods of a class we could not call, and why; `choices` says which layout or dtype
    we gave an argument because of how the code uses it; `stubs` the modules given stand-ins.
    """

    model_config = ConfigDict(frozen=True)

    version: str
    cases: list[FixtureCase] = Field(default_factory=list)
    missing: list[Unsynthesizable] = Field(default_factory=list)
    supplied_defaults: list[str] = Field(default_factory=list)
    skipped_methods: list[Unsynthesizable] = Field(default_factory=list)
    choices: list[str] = Field(default_factory=list)  # layouts and dtypes we chose from the code's use, and why
    # Modules the repository imports that the runner lacks: the sandbox gives them stand-ins.
    stubs: list[str] = Field(default_factory=list)
    evidence: list[ArgumentEvidence] = Field(default_factory=list)  # where each argument's recipe came from

    def digest(self) -> str:
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()
