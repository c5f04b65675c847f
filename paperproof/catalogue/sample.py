"""A sample: one extracted entry, what happened when it ran, and the verdict.

The vocabularies below are the single definition of every status word the site uses; the twin
carries them (`status_vocabulary`) and the pages print them. The rules that pick a status are in
`paperproof.verify.verdict`.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from paperproof.catalogue.fixture_case import ArgumentEvidence
from paperproof.catalogue.observed import Observation
from paperproof.catalogue.planted_record import PlantedHardness
from paperproof.catalogue.run_result import Isolation

Status = Literal["ran", "ran_violates", "ran_fixture", "ran_draft_wrong", "unverified"]
ContractCheck = Literal["PASSES", "VIOLATES", "OUTPUT_MISDECLARED", "RAISES"]
MetamorphicTier = Literal["relational", "deterministic", "well_formed"]
ClauseOrigin = Literal["annotation", "docstring", "name", "metric"]
Checked = Literal["paper", "contracts", "nothing"]

STATUS_VOCABULARY: dict[str, str] = {
    "ran": "Ran on synthesized fixtures and returned; every output met its contract, or nothing was declared to check",
    "ran_violates": "Ran, and an output broke a contract the code declares itself (annotation) or the definition of the metric it implements; or it raised on every case past its input boundary",
    "ran_fixture": "Ran, but raised at its input boundary (or on a dtype or shape error of the operation our input reached) on every case, with every layout we tried: the fault is charged to our fixture, not to the code, and the reason names our choices",
    "ran_draft_wrong": "Ran and returned, but the output contradicts the contract we drafted from its prose (docstring, name): our draft was wrong, not the code",
    "unverified": "Not run to a result: it could not be loaded, no fixture could be made for it, only a class's constructor ran, or every case was cut short; the reason says which",
}

# What a `ran*` status checked: a bare `ran` certifies nothing unless this says what was compared.
CHECKED_VOCABULARY: dict[str, str] = {
    "paper": "Ran, and an output was compared with the paper's definition of the metric it computes (the reference "
             "metric core, on the same run): it is faithful, or the page says where and how much it departs",
    "contracts": "Ran, and its outputs were checked only against contracts drawn from its own declarations "
                 "(annotations, docstring, name): no output was recognised as a metric of the reference core, so "
                 "nothing says whether it computes what a paper defines",
    "nothing": "Ran, and nothing was checked: it declares nothing to check and no output was recognised as a metric, "
               "so its status says only that it returned (or raised)",
}

CONTRACT_CHECK_VOCABULARY: dict[str, str] = {
    "PASSES": "Every returned output met every clause of the contract",
    "VIOLATES": "An output broke a clause the code declares (annotation) or the metric's definition",
    "OUTPUT_MISDECLARED": "An output broke a clause we drafted from the docstring or the name",
    "RAISES": "Every case raised before returning",
}

TIER_VOCABULARY: dict[str, str] = {
    "relational": "Deterministic, and metamorphic relations hold: permuting the samples permutes the per-sample outputs, and renaming the classes consistently leaves them unchanged",
    "deterministic": "A repeated run on the same case gave identical outputs",
    "well_formed": "Outputs were of the declared kind on every case, but a repeated run differed",
}

LINK_BASIS_VOCABULARY: dict[str, str] = {
    "behaviour": "When it ran, its per-sample output matched a metric of the reference core (exactly, or in rank order)",
    "observed": "The repository's own test, example or script called it, and a call returned one value per sample of what it was given",
    "hardness_evidence": "Its code computes per-sample hardness: it takes predictions and works on them as hardness metrics do",
    "readme_mention": "The repository's README names this entry",
    "paper_terms": "Its name or docstring uses terms of the paper's abstract or tasks",
    "metric_vocabulary": "Its name or docstring uses hardness, training-dynamics, perturbation or metric vocabulary",
    "first_harvest_node": "Taken in file order after the entries chosen for relevance",
}

assert set(STATUS_VOCABULARY) == set(get_args(Status))
assert set(CONTRACT_CHECK_VOCABULARY) == set(get_args(ContractCheck))
assert set(TIER_VOCABULARY) == set(get_args(MetamorphicTier))
assert set(CHECKED_VOCABULARY) == set(get_args(Checked))


class Clause(BaseModel):
    """One checkable promise about an output: `kind` says what is checked, `expect` the value."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["type", "length", "shape", "range", "finite", "not_none"]
    expect: Any
    origin: ClauseOrigin
    text: str


class Contract(BaseModel):
    model_config = ConfigDict(frozen=True)

    clauses: list[Clause] = Field(default_factory=list)


class Departure(BaseModel):
    """Where and how an output departs from the paper's definition, with one case from the run.

    `lines` is the range of the code that departs (file lines); `paper_formula` and `code_formula`
    say the two definitions; the worked case is the sample of the case where the code's output and
    the paper's differ most; `effect` says what it changes for a user (ranking, which samples move).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    lines: list[int]
    located: bool  # whether `lines` point at the departing expression, not just the whole entry
    helper: str | None = None  # a function of the same file the entry calls at `lines`, where it departs
    helper_lines: list[int] | None = None  # the helper's departing lines, in the same file
    paper_formula: str
    code_formula: str
    case_id: str
    sample: int | None = None  # the sample of the worked case; None where the output is one number (an evaluator)
    gold: int | None = None
    inputs: str
    paper_value: float
    code_value: float
    worked: str
    same_ranking: bool
    rank_correlation: float | None = None
    moved: list[int] = Field(default_factory=list)
    effect: str
    # Severity, measured on the same run: `rescales` keeps the paper's ranking of the samples, `changes_ranking`
    # does not; the share of the paper's hardest 10% that the code also puts in its hardest 10%; and the planted
    # AUROC (mean over kinds) of the code's output and of the paper's metric, where the planted run scored both.
    severity: Literal["rescales", "changes_ranking"] = "changes_ranking"
    top_overlap: float | None = None
    planted_auroc: float | None = None
    paper_planted_auroc: float | None = None


Verdict = Literal["exact", "estimator", "departure"]


class Estimate(BaseModel):
    """An output judged as an estimate of a definition, not its value: it is held to the error the paper's own
    estimator has at a budget. `budget` is the most samples of that estimator (orderings of the training points,
    say) whose error bound every value lies within on every case compared; `tolerance` says how the bound was
    chosen; `error` is the output's largest distance from the exact value and `rank_correlation` its lowest
    Spearman ρ against it over the cases."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    estimator: str
    budget: int
    tolerance: str
    error: float
    rank_correlation: float | None = None


class Fidelity(BaseModel):
    """Which published definition of a hardness metric one output computes (see `build.fidelity`).

    `output` names the output (`return value`, `column confidence`); `matches` the variant of
    `metric` it equals on `cases_matched` of the `cases` compared; `paper` whether that variant
    is the paper's definition; `departures` says, in words, where it departs from it.

    `verdict` is one of three: `exact` (equal to the variant within floating-point tolerance, and nothing of it
    charged as a departure), `estimator` (an approximation the paper proposes, within the error that estimator
    has at the budget in `estimate`), `departure` (it departs: `departures`, and `worked` where a case shows it).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    output: str
    metric: str
    matches: str
    source: str
    paper: bool
    cases_matched: int
    cases: int
    departures: list[str] = Field(default_factory=list)
    worked: Departure | None = None
    # For an entry driven by a training run: the logits it was computed on, those of each epoch's evaluation of
    # the whole set, or those of the epoch's training forward passes. None: the arrays a case gave it.
    dynamics: Literal["evaluated", "training"] | None = None
    # How it was found: its output equals a variant of the reference core (`variants`), or a behavioural check
    # caught it: a score that did not follow its sample when the samples were reordered (`reordering`), or one
    # value for every sample where the metric varies (`constancy`). Only `variants` findings recognise a metric.
    found_by: Literal["variants", "reordering", "constancy"] = "variants"
    # The metric as its paper defines it, quoted for the page: the citation and our restatement of the definition.
    cited: str | None = None
    definition: str | None = None
    verdict: Verdict = "exact"
    estimate: Estimate | None = None
    # Which end of the output the hard samples are at (a valuation's: the harmful, mislabelled points), as the
    # paper reads the metric, or the variant where it reads the other way. None where no metric was recognised.
    orientation: Literal["high_is_hard", "low_is_hard"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _verdict(cls, data: Any) -> Any:
        """A finding without a verdict (one recorded before there were three) departs where it says so."""
        if isinstance(data, dict) and "verdict" not in data:
            return {**data, "verdict": "departure" if data.get("departures") else "exact"}
        return data


class SampleLink(BaseModel):
    """Another sample, as a page links to it ("behaves like ...")."""

    model_config = ConfigDict(frozen=True)

    sample_id: str
    entry: str
    repo: str


class CaseSummary(BaseModel):
    """One fixture case as a page shows it: the arguments by recipe and what came back."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    kind: str
    args: dict[str, str]
    outcome: str
    output: str | None = None
    exception: str | None = None
    failed_clause: str | None = None


class Sample(BaseModel):
    """The full record of one sample, for its page and its JSON twin."""

    model_config = ConfigDict(frozen=True)

    sample_id: str
    entry: str
    qualname: str
    kind: str
    repo: str
    repo_url: str
    path: str
    lineno: int
    end_lineno: int
    file_url: str
    link_basis: str
    why_chosen: str = ""
    language: str = "python"
    status: Status
    reason: str
    verification_level: int
    checked: Checked | None = None  # for a `ran*` status: what was checked (`CHECKED_VOCABULARY`); None when not run
    contract_check: ContractCheck | None = None
    metamorphic_tier: MetamorphicTier | None = None
    behaviour_fingerprint: bool = False
    fingerprint: str | None = None
    licence: str
    inline_ok: bool
    code_sha256: str
    signature: str
    docstring: str | None = None
    source: str | None = None
    contract: Contract = Field(default_factory=Contract)
    failed_clause: str | None = None
    cases: list[CaseSummary] = Field(default_factory=list)
    closure_names: list[str] = Field(default_factory=list)
    # How the sandbox had the entry: `module` (its module imported as its repository imports it) or `closure`
    # (its module's top level could not run, so the names it uses were defined alone); None when it never loaded.
    loaded: Literal["module", "closure"] | None = None
    arguments: list[ArgumentEvidence] = Field(default_factory=list)  # where each argument's recipe came from
    isolation: Isolation | None = None
    blocked: list[str] = Field(default_factory=list)  # what it tried that the sandbox refused, one plain line each
    device: str | None = None
    reproduce: str
    papers: list[str] = Field(default_factory=list)
    fidelity: list[Fidelity] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    behaves_like: list[SampleLink] = Field(default_factory=list)
    # AUROC and AUPRC of its per-sample outputs on the planted training run (`verify.planted_scores`); None
    # when it yields no value per training sample, and in records made before planted scoring.
    planted: PlantedHardness | None = None
    # The repository's own driver that called this entry (`catalogue.observed`), or None: no driver run reached it,
    # and its arguments were inferred (`arguments` says how).
    observed: Observation | None = None

    @property
    def code_sha256_prefix(self) -> str:
        return self.code_sha256[:16]
