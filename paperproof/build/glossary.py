"""What the sample tables say, in words: the statuses index (`/status/`) and the anchors every column
heading and badge links to, so a researcher reads a table without a manual.

The words of each vocabulary are defined once, in `catalogue.sample`; this module groups them by the
column that shows them and adds what a column means. A `ran` that returned on only some of its cases
is called out (`partial_ran`): its badge is not the green of a sample that returned on every case.
"""

from __future__ import annotations

import re

from paperproof.build.pages import About, StatusCount, StatusIndex, Term, TermGroup
from paperproof.build.paper_verdict import GRADE_LABELS, GRADE_MEANINGS
from paperproof.build.urls import SiteUrls
from paperproof.catalogue.repo_record import REACH_VOCABULARY
from paperproof.catalogue.sample import (
    CHECKED_VOCABULARY,
    CONTRACT_CHECK_VOCABULARY,
    STATUS_VOCABULARY,
    TIER_VOCABULARY,
)

DESCRIPTION = ("What every status, contract check, tier and fidelity value on a sample table means, and every badge "
               "of a code link.")

FIDELITY_VOCABULARY: dict[str, str] = {
    "paper's definition": "The output equals the metric as the paper defines it, computed by paperproof's reference "
                          "metric core on the shared training-dynamics cases (verdict exact: within floating-point "
                          "tolerance)",
    "paper's estimator": "The output equals no definition, but is an estimate of the paper's as the paper's own "
                         "estimator makes it (permutation sampling, say): every error lies within the bound that "
                         "estimator has at the budget the errors are likeliest at (verdict estimator); the sample page "
                         "states the bound, how it was chosen, and the budget",
    GRADE_LABELS["departs_rescales"]: "The output equals a published variant of the metric that is not the "
                                      "paper's definition, but ranks the samples as the paper's metric does on the "
                                      "same run; the sample page says where it departs",
    GRADE_LABELS["departs_ranking"]: "The output equals a published variant of the metric that is not the paper's "
                                     "definition, and ranks the samples differently on the same run; the sample "
                                     "page says where it departs and by how much",
    "—": "The entry was not recognised as a hardness metric, so nothing was compared with a paper's definition",
}

CONTRACT_TERMS: dict[str, str] = {
    **CONTRACT_CHECK_VOCABULARY,
    "—": "No check: nothing was declared to check against (no annotation, docstring return or recognised metric), "
         "or no case returned",
}
TIER_TERMS: dict[str, str] = {**TIER_VOCABULARY, "—": "No tier: no case returned a value to compare"}

PARTIAL = ("A sample that ran and returned on some of its cases but not all (the others raised, were cut short or "
           "were blocked) is marked “ran, k of n”, in amber rather than green: what it returned met its contract, "
           "but not every case returned")

COLUMNS: list[tuple[str, str, str, dict[str, str]]] = [
    ("Status", "status", "What happened when the entry ran, and whose fault a failure is. Each status links to every "
                         "sample that has it.", STATUS_VOCABULARY),
    ("Checked", "checked", "For a sample that ran: what its run was checked against. A status that begins with "
                           "“ran” says only that it ran; this says whether anything certified what it computed.",
     {**CHECKED_VOCABULARY, **{GRADE_LABELS[g]: GRADE_MEANINGS[g] for g in GRADE_LABELS},
      "—": "Not run, so nothing to check"}),
    ("Contract", "contract", "What checking the outputs against the contract found. The contract is drafted from the "
                             "entry's own declarations: its annotations, its docstring, its name, or the definition "
                             "of the metric it was recognised as.", CONTRACT_TERMS),
    ("Tier", "tier", "How far the runs could be trusted to mean something: the strongest property that held on every "
                     "case.", TIER_TERMS),
    ("Fidelity", "fidelity", "For hardness and training-dynamics metrics: which published definition the output "
                             "computes.", FIDELITY_VOCABULARY),
]
LINK_TERMS: dict[str, str] = {
    "official": "The archive marks this repository as the paper's official code",
    "not official": "The archive lists the repository for this paper without marking it official (or, in older "
                    "dumps, did not say)",
    "in paper": "The paper itself mentions the repository",
    "framework": "The deep-learning framework the archive gives for the repository",
    "licence": "The licence found in the repository (its SPDX identifier); it decides whether a sample page shows "
               "the code or only points to it",
}
REACH_TERMS: dict[str, str] = {
    **REACH_VOCABULARY, "not probed": "Nobody asked the host yet: the repository came from a local checkout or had "
                                      "no harvest",
}
COLUMNS += [
    ("Code links", "links", "The badges beside each code link of a paper: what the archive says about the link.",
     LINK_TERMS),
    ("Reach", "reach", "What the host answered when the harvest asked about the repository.", REACH_TERMS),
]
TERMS: dict[str, dict[str, str]] = {key: words for _, key, _, words in COLUMNS}  # for the templates, by column

_RETURNED = re.compile(r"^returned on (\d+) of (\d+) cases")


def anchor(column: str, value: str | None = None) -> str:
    """The fragment of a column (`contract`) or of one of its values (`contract-PASSES`) on `/status/`."""
    if value is None:
        return column
    return f"{column}-{re.sub(r'[^A-Za-z0-9_]+', '-', value).strip('-') or 'none'}"


def partial_ran(status: str, reason: str | None) -> tuple[int, int] | None:
    """(returned, cases) for a `ran` sample that returned on fewer than all of its cases, else None. Read from
    the reason, whose first words `build.verdict` writes as "returned on K of N cases"."""
    match = _RETURNED.match(reason or "") if status == "ran" else None
    if match is None or match.group(1) == match.group(2):
        return None
    return int(match.group(1)), int(match.group(2))


def status_index(about: About, urls: SiteUrls, statuses: list[StatusCount]) -> StatusIndex:
    groups = [TermGroup(column=column, anchor=key, meaning=meaning,
                        terms=[Term(value=value, meaning=text, anchor=anchor(key, value)) for value, text in words.items()])
              for column, key, meaning, words in COLUMNS]
    # The statuses themselves are the index's table of counts (`statuses`); the Status column adds the partial ran.
    groups[0] = groups[0].model_copy(update={"terms": [Term(value="ran, k of n", meaning=PARTIAL,
                                                            anchor=anchor("status", "partial"))]})
    return StatusIndex(about=about, schema_url=urls.schema("status-index"), page_url=urls.statuses(),
                       json_url=urls.statuses_json(), statuses=statuses, columns=groups)


__all__ = ["COLUMNS", "DESCRIPTION", "FIDELITY_VOCABULARY", "TERMS", "anchor", "partial_ran", "status_index"]
