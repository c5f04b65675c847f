"""Choosing which entries of a repository become samples, by relevance to its papers.

A metrics repository should show its metrics, not its TSV readers and argument parsers. Entries
are scored on hardness, training-dynamics, perturbation and metric vocabulary, on the terms of
the linked papers' abstracts and tasks, and on being named in the README; utilities score down.
The strongest reason becomes the sample's `link_basis`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from paperproof.catalogue.entry import Entry

DEFAULT_PER_REPO = 8

METRIC_VOCABULARY = frozenset({
    "hardness", "hard", "easy", "ambiguous", "confidence", "variability", "correctness", "correct",
    "forget", "forgetting", "forgetfulness", "aum", "margin", "el2n", "grand", "loss", "entropy",
    "uncertainty", "aleatoric", "epistemic", "dynamics", "cartography", "datamap", "data_map", "map",
    "noise", "noisy", "flip", "mislabel", "mislabeled", "perturb", "perturbation", "corrupt", "shift",
    "zoom", "crop", "augment", "ood", "prototypicality", "prototype", "vog", "allsh", "agree",
    "agreement", "metric", "metrics", "score", "scores", "probability", "probabilities", "logits",
    "gold", "threshold", "closeness", "cleanlab", "confident", "dataiq", "bootstrap", "fdr",
})
UTILITY_NAMES = re.compile(
    r"^(main|str2bool|parse_args|get_args|build_parser|setup|set_seed|seed_everything|get_logger|"
    r"(read|load|save|write|dump|print|log|plot|draw|show|download|convert)_\w*)$"
)
STOPWORDS = frozenset({
    "about", "across", "after", "again", "against", "along", "also", "among", "based", "because", "before",
    "being", "between", "both", "could", "different", "during", "each", "either", "every", "first", "from",
    "further", "given", "have", "however", "into", "itself", "large", "many", "more", "most", "much", "other",
    "over", "paper", "propose", "results", "several", "should", "show", "since", "some", "such", "than", "that",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "under", "using", "very",
    "well", "were", "what", "when", "where", "which", "while", "with", "within", "without", "would", "written",
    "specimen", "describes", "paperproof",
})


@dataclass(frozen=True)
class Selected:
    entry: Entry
    score: float
    link_basis: str


def words(text: str) -> set[str]:
    """Lower-cased word pieces, splitting snake_case and CamelCase."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", spaced.replace("_", " "))}


def paper_terms(abstract: str | None, tasks: list[str]) -> set[str]:
    """Content words of a paper's abstract and task names, the vocabulary entries are matched on."""
    found = words(abstract or "") | {w for t in tasks for w in words(t)}
    return {w for w in found if len(w) >= 5 and w not in STOPWORDS}


def score(entry: Entry, terms: set[str], readme: str) -> tuple[float, str]:
    name_words = words(entry.name)
    doc_words = words(entry.docstring or "")
    metric_hits = len(name_words & METRIC_VOCABULARY) * 3 + len(doc_words & METRIC_VOCABULARY)
    paper_hits = len((name_words | doc_words) & terms)
    readme_hit = bool(readme) and re.search(rf"\b{re.escape(entry.name)}\b", readme) is not None
    total = metric_hits + min(paper_hits, 6) + (6 if readme_hit else 0)
    if UTILITY_NAMES.match(entry.name):
        total -= 4
    if entry.docstring:
        total += 0.5
    if readme_hit:
        basis = "readme_mention"
    elif metric_hits and metric_hits >= paper_hits:
        basis = "metric_vocabulary"
    elif paper_hits:
        basis = "paper_terms"
    else:
        basis = "first_harvest_node"
    return total, basis


def select(entries: list[Entry], terms: set[str], readme: str, limit: int = DEFAULT_PER_REPO) -> list[Selected]:
    """The `limit` most relevant entries, in file order among equals; the result is in file order."""
    scored = [(entry, *score(entry, terms, readme)) for entry in entries]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))[:limit]
    return [Selected(scored[i][0], scored[i][1], scored[i][2]) for i in sorted(order)]
