"""Choosing which entries of a repository become samples: by what their code does, then by relevance.

A metrics repository should show its metrics, not its model definitions, TSV readers and argument
parsers. Every entry whose code carries hardness evidence (`catalogue.evidence`: it takes per-sample
predictions, works on them as hardness metrics do, yields one value per sample, or hands that work to
such an entry of the same repository) is taken, however many there are, up to a cap; the limit is
filled only with what is left, scored on metric vocabulary, the linked papers' terms and the README.
Model definitions, training loops, entry points, argument parsers, datasets and abstract bases are
never taken to fill. Each choice carries one line saying why (`Selected.why`), and so does each
entry left out (`left_out`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.evidence import AGGREGATE, FILE_IO, PLOTTING, WEAK
from paperproof.catalogue.observed import Observation

DEFAULT_PER_REPO = 8

METRIC_VOCABULARY = frozenset({
    "hardness", "hard", "easy", "ambiguous", "confidence", "variability", "correctness", "correct",
    "forget", "forgetting", "forgetfulness", "aum", "margin", "el2n", "grand", "loss", "entropy",
    "uncertainty", "aleatoric", "epistemic", "dynamics", "cartography", "datamap", "data_map", "map",
    "noise", "noisy", "flip", "mislabel", "mislabeled", "perturb", "perturbation", "corrupt", "shift",
    "zoom", "crop", "augment", "ood", "prototypicality", "prototype", "vog", "allsh", "agree",
    "agreement", "metric", "metrics", "score", "scores", "probability", "probabilities", "logits",
    "gold", "threshold", "closeness", "cleanlab", "confident", "dataiq", "bootstrap", "fdr",
    # data valuation and attribution (issue 47): the field's method names, not any repository's
    "shapley", "banzhaf", "loo", "valuation", "influence", "influences", "tracin", "tracincp", "representer",
    "attribution", "oob", "trak", "datamodels", "lissa", "memorization", "selfinfluence",
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


HARDNESS_CAP = 32  # a repository of hundreds of metric-like entries is still bounded
AGAINST_WEIGHT = {PLOTTING: 2, FILE_IO: 1, AGGREGATE: 3}


@dataclass(frozen=True)
class Selected:
    entry: Entry
    score: float
    link_basis: str
    why: str = ""
    observed: Observation | None = None  # the repository's driver that called it (`catalogue.observed`)


@dataclass(frozen=True)
class Judgement:
    """What selection made of one entry: its hardness strength, whether it is hardness, and why."""

    entry: Entry
    strength: float
    hardness: bool
    delegates: tuple[str, ...]
    excluded: str | None
    why: str


def words(text: str) -> set[str]:
    """Lower-cased word pieces, splitting snake_case and CamelCase."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", spaced.replace("_", " "))}


def paper_terms(abstract: str | None, tasks: list[str]) -> set[str]:
    """Content words of a paper's abstract and task names, the vocabulary entries are matched on."""
    found = words(abstract or "") | {w for t in tasks for w in words(t)}
    return {w for w in found if len(w) >= 5 and w not in STOPWORDS}


def score(entry: Entry, terms: set[str], readme: str) -> tuple[float, str]:
    """Relevance by vocabulary (the whole of selection before code evidence): name, docstring, paper
    terms, README. Fills the limit after the hardness entries; `bench/bench_select.py` keeps it as the
    baseline."""
    name_words = words(entry.name)
    doc_words = words(entry.docstring or "")
    metric_hits = len(name_words & METRIC_VOCABULARY) * 3 + len(doc_words & METRIC_VOCABULARY)
    paper_hits = len((name_words | doc_words) & terms)
    readme_hit = bool(readme) and _in_readme(entry.name, readme)
    total: float = metric_hits + min(paper_hits, 6) + (6 if readme_hit else 0)
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


_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=4)
def _readme_words(readme: str) -> frozenset[str]:
    """Every run of word characters of a README, read once for all of a repository's entries."""
    return frozenset(_WORD.findall(readme))


def _in_readme(name: str, readme: str) -> bool:
    """`re.search(rf"\\b{name}\\b", readme)`: a name of word characters only (every identifier, nearly) is there as a
    whole run of them; searching the README once per entry was quadratic in a repository of many entries."""
    if _WORD.fullmatch(name):
        return name in _readme_words(readme)
    return re.search(rf"\b{re.escape(name)}\b", readme) is not None


def _against(entry: Entry) -> int:
    return sum(AGAINST_WEIGHT.get(a, 0) for a in entry.evidence.against)


def own_strength(entry: Entry) -> float:
    """Hardness evidence in the entry's own code, less what speaks against it."""
    ev = entry.evidence
    strong = [d for d in ev.does if d not in WEAK]
    value = 2 * len(strong) + (len(ev.does) - len(strong)) + (1 if ev.per_sample else 0)
    return value - _against(entry)


def _phrase(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _hardness_why(entry: Entry, delegates: tuple[str, ...]) -> str:
    ev = entry.evidence
    parts = []
    if ev.takes:
        parts.append("takes " + _phrase(ev.takes))
    if ev.does:
        parts.append("uses " + _phrase(ev.does))
    if delegates:
        parts.append("calls " + _phrase([f"`{d}`" for d in delegates]) + " of this repository, whose code does too")
    if ev.per_sample:
        parts.append(ev.per_sample)
    if ev.against:
        parts.append("also does " + _phrase(ev.against))
    return "; ".join(parts)


def judge(entries: list[Entry]) -> list[Judgement]:
    """Each entry's hardness verdict, delegation to the repository's other hardness code included."""
    own = {id(e): own_strength(e) for e in entries}
    workers = {e.name for e in entries if own[id(e)] >= 2 and not e.evidence.excluded}
    models = {e.name for e in entries if e.kind == "class" and (e.evidence.excluded or "").startswith("a model")}
    out = []
    for entry in entries:
        ev = entry.evidence
        built = sorted(set(ev.returns_calls) & models)
        excluded = ev.excluded or (f"builds a model (returns `{built[0]}`)" if built else None)
        delegates = tuple(sorted((set(ev.calls) & workers) - {entry.name}))
        strength = own[id(entry)] + 2 * len(delegates)
        vetoed = AGGREGATE in ev.against
        hardness = not excluded and not vetoed and strength >= 2 and (bool(ev.takes) or strength >= 4)
        if hardness:
            why = _hardness_why(entry, delegates)
        elif excluded:
            why = f"left out: {excluded}"
        elif vetoed:
            why = f"no hardness: it computes {AGGREGATE}"
        else:
            seen = [*ev.takes, *ev.does]
            why = "no hardness evidence in its code" + (f" (only {_phrase(seen)})" if seen else "") + (
                f"; it {ev.per_sample}" if ev.per_sample else "") + (
                f"; it does {_phrase(ev.against)}" if ev.against else "")
        out.append(Judgement(entry, strength, hardness, delegates, excluded, why))
    return out


FILL_WHY = {
    "readme_mention": "the README names it",
    "metric_vocabulary": "its name or docstring uses metric vocabulary",
    "paper_terms": "its name or docstring uses terms of the paper",
    "first_harvest_node": "taken in file order",
}


def select(entries: list[Entry], terms: set[str], readme: str, limit: int | None = DEFAULT_PER_REPO,
           observed: Mapping[str, Observation] | None = None) -> list[Selected]:
    """Every entry the repository's own drivers showed returning one value per sample (`observed`, by entry key),
    then every entry with hardness evidence (together at most `HARDNESS_CAP`), then the most relevant of the rest up
    to `limit`, never one excluded by its code nor one a driver showed returning no per-sample value; `limit=None`
    keeps every entry. In file order."""
    observed = observed or {}
    judged = judge(entries)
    seen = [observed.get(f"{j.entry.path}::{j.entry.qualname}") for j in judged]
    relevance = [score(j.entry, terms, readme) for j in judged]
    if limit is None:
        chosen = list(range(len(judged)))
    else:
        scoring = [i for i, o in enumerate(seen) if o is not None and o.per_sample]
        hard = sorted((i for i, j in enumerate(judged) if j.hardness and i not in scoring),
                      key=lambda i: (-judged[i].strength, i))
        chosen = (scoring + hard)[:HARDNESS_CAP]
        rest = [i for i, j in enumerate(judged) if not j.hardness and not j.excluded and seen[i] is None]
        # among equally relevant entries, one whose code returns a value per sample fills first
        rest.sort(key=lambda i: (-relevance[i][0] + _against(judged[i].entry), not judged[i].entry.evidence.per_sample, i))
        chosen += rest[:max(0, limit - len(chosen))]
    out = []
    for i in sorted(chosen):
        j, (total, basis), o = judged[i], relevance[i], seen[i]
        if o is not None and o.per_sample:
            out.append(Selected(j.entry, j.strength + 10, "observed", _observed_why(o), o))
        elif j.hardness:
            out.append(Selected(j.entry, j.strength, "hardness_evidence", j.why, o))
        else:
            out.append(Selected(j.entry, total, basis, f"{j.why}; kept to fill the limit: {FILL_WHY[basis]}"
                                if limit is not None else f"{j.why}; named or every entry asked for", o))
    return out


def _observed_why(o: Observation) -> str:
    times = "once" if o.calls == 1 else f"{o.calls} times"
    return f"observed: the repository's {o.kind} `{o.driver}` called it {times}, and it returned one value per " \
           f"sample ({o.returns})"


def left_out(entries: list[Entry], selected: list[Selected], limit: int | None = DEFAULT_PER_REPO) -> list[tuple[Entry, str]]:
    """The entries not selected, each with the reason, in file order (for the repository page)."""
    taken = {id(s.entry) for s in selected}
    out = []
    for j in judge(entries):
        if id(j.entry) in taken:
            continue
        if j.hardness:
            out.append((j.entry, f"{j.why}; left out: over the cap of {HARDNESS_CAP} hardness entries"))
        elif j.excluded:
            out.append((j.entry, j.why))
        else:
            out.append((j.entry, f"{j.why}; left out: the limit of {limit} was reached"))
    return out
