"""Departures explained: where the code departs from the paper, in formulas and one worked case.

A fidelity finding says that an output computes a published variant that is not the paper's. This
module adds what a researcher needs to act on it: the line range of the code that departs (found
by the expression the variant is known by, such as `ddof=1` or `> 0.5`), the paper's formula and
the code's, one concrete case taken from the run where the code's output and the paper's differ
most (which sample, its gold class, the inputs that make them disagree, both values), and what it
changes for a user: whether the ranking of the samples is the same, and which samples move.
"""

from __future__ import annotations

import ast
import re
import textwrap

import numpy as np

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.planted_record import PlantedHardness
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import Departure, Fidelity
from paperproof.fixtures.values import softmax
from paperproof.verify import feature_references
from paperproof.verify.fidelity import ATOL, PER_EPOCH, RTOL, case_logits, channels, orientation, paper_reference
from paperproof.verify.metrics import instance_hardness
from paperproof.verify.rank_correlation import midranks, spearman

# (metric, variant) -> the formula, for sample i with gold label y, p_e its probabilities at epoch e.
FORMULAS: dict[tuple[str, str], str] = {
    ("confidence", "mean_gold_prob"): "μ = (1/E) Σₑ pₑ(y)",
    ("variability", "ddof0"): "σ = √((1/E) Σₑ (pₑ(y) − μ)²)",
    ("variability", "ddof1"): "√((1/(E−1)) Σₑ (pₑ(y) − μ)²)",
    ("variability", "include_ci"): "√(σ² + σ⁴/(E−1))",
    ("correctness", "fraction_argmax"): "(1/E) · #{e : argmax pₑ = y}",
    ("correctness", "fraction_p>0.5"): "(1/E) · #{e : pₑ(y) > 0.5}",
    ("correctness", "count_argmax"): "#{e : argmax pₑ = y}",
    ("correctness", "count_p>0.5"): "#{e : pₑ(y) > 0.5}",
    ("forgetfulness", "never1000_count"): "#{e : correct at e−1, wrong at e}; 1000 if never correct",
    ("forgetfulness", "never1000_normalised"): "#{e : correct at e−1, wrong at e} / E; 1000/E if never correct",
    ("forgetfulness", "neverE_count"): "#{e : correct at e−1, wrong at e}; E if never correct",
    ("forgetfulness", "neverE_normalised"): "#{e : correct at e−1, wrong at e} / E; 1 if never correct",
    ("forgetfulness", "never0_count"): "#{e : correct at e−1, wrong at e}; 0 if never correct",
    ("forgetfulness", "never0_normalised"): "#{e : correct at e−1, wrong at e} / E; 0 if never correct",
    ("el2n", "last_norm"): "‖p_E − onehot(y)‖₂ at the last epoch",
    ("el2n", "last_squared"): "‖p_E − onehot(y)‖₂² at the last epoch",
    ("el2n", "mean_norm"): "(1/E) Σₑ ‖pₑ − onehot(y)‖₂",
    ("el2n", "early_norm"): "‖pₑ − onehot(y)‖₂ at an early epoch e (10% into training)",
    ("el2n", "early_norm_runs"): "mean over initialisations of ‖pₑ − onehot(y)‖₂ at an early epoch e",
    ("el2n", "last_norm_one_run"): "‖p_E − onehot(y)‖₂ at the last epoch of one run",
    ("vog", "logit_class_normalised"): "(v − μ_y)/σ_y, v = mean_d std_k ∂z_y/∂x_d over the snapshots k",
    ("vog", "logit_raw"): "mean_d std_k ∂z_y/∂x_d over the snapshots k",
    ("vog", "prob_raw"): "mean_d std_k ∂p_y/∂x_d over the snapshots k (p = softmax(z))",
    ("vog", "prob_class_normalised"): "(v − μ_y)/σ_y, v = mean_d std_k ∂p_y/∂x_d",
    ("grand", "early_all_params"): "‖∇_θ ℓ(x, y)‖₂ early in training",
    ("grand", "init_all_params"): "‖∇_θ ℓ(x, y)‖₂ at initialisation",
    ("grand", "final_all_params"): "‖∇_θ ℓ(x, y)‖₂ on the final model",
    ("prototypicality", "kmeans_distance"): "‖h(x) − nearest k-means centroid‖₂ of the embeddings",
    ("prototypicality", "cosine_class_mean"): "cos(h(x), mean of h over the samples labelled y)",
    ("self_confidence", "out_of_sample_self_confidence"): "p̂(y | x) from a model not trained on x (cross-validated)",
    ("self_confidence", "in_sample_last_epoch"): "p_E(y | x) of the final model, which was trained on x",
    ("conf_agree", "max_mean_prob_train_mode"): "max_c mean_k p_k(c | x) over stochastic (dropout) passes k",
    ("conf_agree", "max_prob_eval_mode"): "max_c p(c | x) of one deterministic pass",
    ("confidence_weighted_entropy", "entropy_over_self_confidence"): "r = H(p) / (log C · p(y)), H in nats",
    ("confidence_weighted_entropy", "nats_over_self_confidence"): "H(p) / p(y), H in nats",
    ("confidence_weighted_entropy", "cleanlab_quality"): "log(1 + r) / r, r = H(p) / (log C · p(y))",
}

# The expression each variant is known by in code, to find the lines that depart.
MARKERS: dict[str, str] = {
    "ddof1": r"ddof\s*=\s*1|unbiased|correction\s*=|-\s*1\s*\)|\.std\(\s*\)",
    "include_ci": r"include_ci|\*\*\s*4",
    "fraction_p>0.5": r">=?\s*0?\.5\b",
    "count_p>0.5": r">=?\s*0?\.5\b",
    "count_argmax": r"\.sum\(|\bsum\(|\+=\s*1",
    "never1000_normalised": r"/\s*(n_epochs|num_epochs|epochs|len\(|E\b)",
    "neverE_normalised": r"/\s*(n_epochs|num_epochs|epochs|len\(|E\b)",
    "never0_normalised": r"/\s*(n_epochs|num_epochs|epochs|len\(|E\b)",
    "neverE_count": r"return\s+(n_epochs|len\()",
    "never0_count": r"zeros|=\s*0\s*$",
    "last_squared": r"\*\*\s*2|square|pow\(",
    "mean_norm": r"\.mean\(|/\s*len\(",
}

# What a variant changes for a user, beyond what the run shows (the ranking is measured).
EFFECTS: dict[str, str] = {
    "ddof1": "Every score is the paper's times √(E/(E−1)), so the ranking is the same but values and the "
             "data-map thresholds shift, most when there are few epochs.",
    "include_ci": "Scores are widened by σ⁴/(E−1): the most variable samples gain the most.",
    "fraction_p>0.5": "Epochs where the gold class is the argmax with half the mass or less count as wrong, "
                      "so samples predicted correctly but without a majority score lower.",
    "count_p>0.5": "A count, not a fraction, with the p > 0.5 rule: values grow with the number of epochs, "
                   "and correctly predicted epochs without a majority count as wrong.",
    "count_argmax": "Scores are the paper's times E: the ranking within one run is the same, but values from "
                    "runs of different lengths are not comparable and thresholds on [0, 1] do not apply.",
    "never1000_normalised": "Counts are divided by E, so values from runs of different lengths are not "
                            "comparable; never-learned samples still rank first.",
    "neverE_count": "Never-learned samples score E, tied with or below samples forgotten often, "
                    "not above every learned sample.",
    "neverE_normalised": "Never-learned samples score 1 and counts are divided by E.",
    "never0_count": "Never-learned samples score 0, so the hardest examples rank as the least forgettable.",
    "never0_normalised": "Never-learned samples score 0, so the hardest examples rank as the least "
                         "forgettable; counts are also divided by E.",
    "last_squared": "Squaring keeps the ranking at that epoch, but the last epoch is not when the paper scores: "
                    "samples learned late rank differently from early in training.",
    "prob_raw": "Gradients of the probability vanish where the model is confident, so confidently learned and "
                "confidently wrong samples both score low; without the class normalisation, classes whose "
                "gradients are larger crowd the top of the ranking.",
    "prob_class_normalised": "Gradients of the probability vanish where the model is confident, so confidently "
                             "wrong samples score as low as easy ones.",
    "logit_raw": "Without the class normalisation, classes whose gradients are larger crowd the top of the ranking.",
    "final_all_params": "Scored on the final model, the norm reflects what is still unlearned at the end, not the "
                        "early-training signal the paper prunes by.",
    "in_sample_last_epoch": "In-sample probabilities are inflated on the samples the model memorised, mislabelled "
                            "ones included, so label errors look clean.",
    "cosine_class_mean": "The class mean is pulled towards atypical and mislabelled samples of the class.",
    "mean_norm": "Averaging over epochs smooths the score: samples learned late rank harder than at the last epoch.",
}


def _code_lines(source: str, first_line: int) -> list[tuple[int, str]]:
    """Source lines as file line numbers (`first_line` is the file line of its first), without
    docstrings and comments."""
    skip: set[int] = set()
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                skip.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    out = []
    for offset, text in enumerate(source.splitlines(), start=1):
        code = text.split("#", 1)[0].rstrip()
        if offset not in skip and code.strip():
            out.append((first_line + offset - 1, code))
    return out


def locate(entry: Entry, variant: str) -> tuple[list[int], bool]:
    """The file lines of the expression a variant is known by, or the whole entry when none matches."""
    marker = MARKERS.get(variant)
    hits = [n for n, code in _code_lines(entry.source, entry.lineno) if marker and re.search(marker, code)] if marker else []
    if hits:
        return [hits[0], hits[0]], True
    return [entry.lineno, entry.end_lineno], False


def through_helper(entry: Entry, metric: str, variant: str) -> tuple[int, str, int] | None:
    """Where an entry departs through a helper of its own file (`correctness_[guid] = compute_correctness(…)`,
    whose `return sum(trend)` counts): the line of the call in the entry, the helper's name, and the
    helper's line that carries the variant's expression. Helpers named for the metric are read first.
    The closure keeps the file's line numbers, so its lines are the file's."""
    marker = MARKERS.get(variant)
    try:
        tree = ast.parse(entry.closure)
    except SyntaxError:
        return None
    if marker is None:
        return None
    helpers = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name != entry.name}
    own = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == entry.name and n.lineno <= entry.lineno <= (n.end_lineno or n.lineno)), None)
    if own is None or not helpers:
        return None
    calls = [(n.lineno, n.func.id) for n in ast.walk(own) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id in helpers]
    stem = metric[:5].lower()
    for line, name in sorted(calls, key=lambda c: (stem not in c[1].lower(), c[0])):
        helper = helpers[name]
        text = "\n".join(entry.closure.splitlines()[helper.lineno - 1:helper.end_lineno])
        hits = [n for n, code in _code_lines(text, helper.lineno) if re.search(marker, code)]
        if hits:
            return line, name, hits[0]
    return None


def top_overlap(paper: np.ndarray, code: np.ndarray, high_is_hard: bool, share: float = 0.1) -> float | None:
    """The share of the paper's hardest `share` of samples that the code also ranks among its hardest `share`
    (ties broken by sample order); None with fewer than ten samples, where a tenth is not one sample."""
    k = int(len(paper) * share)
    if k < 1:
        return None
    sign = -1.0 if high_is_hard else 1.0
    hardest = set(np.argsort(sign * paper, kind="stable")[:k].tolist())
    theirs = set(np.argsort(sign * code, kind="stable")[:k].tolist())
    return len(hardest & theirs) / k


def _formula(metric: str, variant: str) -> str | None:
    return FORMULAS.get((metric, variant)) or feature_references.formula(metric, variant)


def _short(values: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.2f}".lstrip("0").replace("-0.", "-.") if abs(v) < 1 else f"{v:.2f}" for v in values) + "]"


def _flags(hits: np.ndarray) -> str:
    return "[" + ", ".join("✓" if h else "✗" for h in hits) + "]"


def _number(value: float) -> str:
    return f"{value:.4g}"


def _worked(finding: Fidelity, case: FixtureCase, i: int, paper: float, code: float) -> tuple[int, str, str]:
    """The gold class, the inputs and the sentence of one worked case."""
    metric, variant = finding.metric, finding.matches
    both = f"the paper scores {_number(paper)}, the code {_number(code)}"
    valued = feature_references.points(case) if metric in feature_references.FEATURE_VARIANTS else None
    if valued is not None and metric == "kdn":  # an instance among its neighbours: their labels, nearest first
        x_train, y_train, _, _ = valued
        gold, k = int(y_train[i]), int(variant.rpartition("_k")[2])
        nearest = [int(y_train[j]) for j in instance_hardness.neighbours(x_train, k)[i]]
        inputs = f"instance {i}, label {gold}, the labels of its {k} nearest other instances {nearest}"
        return gold, inputs, f"{inputs} (case {case.case_id}): {both}"
    if valued is not None:  # a training point's value: its label, and the test set it was valued on
        _, y_train, _, y_test = valued
        gold = int(y_train[i])
        inputs = f"training point {i}, label {gold}, valued on {len(y_test)} test points"
        return gold, inputs, f"{inputs} (case {case.case_id}): {both}"
    logits, labels = case_logits(case, finding.dynamics)
    probs = softmax(logits)[:, i, :]
    gold = int(labels[i])
    hits = probs.argmax(axis=-1) == gold
    head = f"sample {i} of case {case.case_id}, gold class {gold}"
    if metric == "correctness" and "p>0.5" in variant:
        disagree = [e for e in range(len(probs)) if bool(hits[e]) != bool(probs[e, gold] > 0.5)]
        if disagree:
            e = disagree[0]
            inputs = f"epoch {e} probabilities {_short(probs[e])}"
            said = "counts" if hits[e] else "does not count"
            code_said = "does not" if hits[e] else "does"
            return gold, inputs, (f"{head}, {inputs}: the paper {said} this epoch correct (argmax), the code "
                                  f"{code_said} (p > 0.5); {both}")
    if metric in ("correctness", "forgetfulness"):
        inputs = f"correct per epoch {_flags(hits)}"
        extra = " — never learned" if metric == "forgetfulness" and not hits.any() else ""
        return gold, inputs, f"{head}, {inputs}{extra}: {both}"
    if metric in ("confidence", "variability"):
        inputs = f"gold-class probability per epoch {_short(probs[:, gold])}"
        return gold, inputs, f"{head}, {inputs}: {both}"
    inputs = f"last-epoch probabilities {_short(probs[-1])}"
    return gold, inputs, f"{head}, {inputs}: {both}"


def explain(entry: Entry, fixtures: FixtureSet, result: RunResult | None, findings: list[Fidelity]) -> list[Fidelity]:
    """Each finding that departs from the paper, with its `worked` departure filled in."""
    if result is None:
        return findings
    outputs = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    cases = [c for c in fixtures.cases if c.kind in ("typical", "edge") and c.case_id in outputs]
    out = []
    for finding in findings:
        if not finding.departures:
            out.append(finding)
            continue
        best: tuple[float, FixtureCase, int, np.ndarray, np.ndarray] | None = None
        paper_name = finding.metric
        for case in cases:
            channel = next((ch for ch in channels(outputs[case.case_id], case.dims["N"], epochs=case.dims.get("E"))
                            if ch.name == finding.output), None)
            found = paper_reference(case, finding.metric, finding.dynamics, finding.output.endswith(PER_EPOCH),
                                    finding.matches)
            if channel is None or found is None:
                continue
            paper_name, reference = found
            code = np.asarray(channel.values, dtype=np.float64)
            if code.shape != reference.shape:
                continue
            differs = np.isfinite(code) & np.isfinite(reference) & ~np.isclose(code, reference, atol=ATOL, rtol=RTOL)
            gap = np.where(differs, np.abs(code - reference), -1.0)  # agreement within tolerance shows nothing
            if gap.size and (best is None or gap.max() > best[0]):
                best = (float(gap.max()), case, int(gap.argmax()), reference, code)
        if best is None or best[0] <= 0:  # a departure no case of the run can show is not charged
            shown = f"{finding.source}; its departure from the paper's definition shows on no case of this run"
            verdict = "estimator" if finding.estimate else "exact"
            out.append(finding.model_copy(update={"departures": [], "verdict": verdict, "source": shown}))
            continue
        _, case, flat, paper, code = best
        n = case.dims["N"]
        i = flat % n  # an output per epoch and sample is laid out [E, N]: its sample, and its epoch below
        gold, inputs, sentence = _worked(finding, case, i, float(paper[flat]), float(code[flat]))
        if finding.output.endswith(PER_EPOCH):
            sentence = f"at epoch {flat // n}, {sentence}"
        # An estimate's severity is its departure's own: the variant it estimates, exactly, against the paper's
        # (the estimate's sampling error is no departure)
        exact = feature_references.feature_variants(case).get((finding.metric, finding.matches))
        ranked = exact if finding.estimate is not None and exact is not None else code
        finite = np.isfinite(paper) & np.isfinite(ranked)
        same = bool(np.array_equal(midranks(paper[finite]), midranks(ranked[finite])))
        moves = np.abs(midranks(paper[finite]) - midranks(ranked[finite]))
        index = np.flatnonzero(finite)
        moved = list(dict.fromkeys(int(index[j]) % n for j in np.argsort(-moves, kind="stable")[:5] if moves[j] > 0))
        rho = spearman(paper[finite], ranked[finite])
        overlap = top_overlap(paper[finite], ranked[finite], orientation(finding.metric, finding.matches) == "high_is_hard")
        measured = (f"On case {case.case_id} the ranking of the samples is the same."
                    if same else f"On case {case.case_id} the ranking changes (Spearman ρ = {rho:.2f}); "
                    f"the samples that move most: {', '.join(map(str, moved))}." if rho is not None else
                    f"On case {case.case_id} the ranking changes; the samples that move most: {', '.join(map(str, moved))}.")
        lines, located = locate(entry, finding.matches)
        helper = None if located else through_helper(entry, finding.metric, finding.matches)
        if helper is not None:
            lines, located = [helper[0], helper[0]], True
        worked = Departure(
            lines=lines, located=located,
            helper=None if helper is None else helper[1], helper_lines=None if helper is None else [helper[2], helper[2]],
            paper_formula=_formula(finding.metric, paper_name) or finding.metric,
            code_formula=(_formula(finding.metric, finding.matches) or finding.matches if not finding.paper else
                          f"{_formula(finding.metric, paper_name) or finding.metric} on the other cases, not on "
                          f"case {case.case_id}"),
            case_id=case.case_id, sample=i, gold=gold, inputs=inputs,
            paper_value=round(float(paper[flat]), 6), code_value=round(float(code[flat]), 6), worked=sentence,
            same_ranking=same, rank_correlation=None if rho is None else round(rho, 4), moved=moved,
            effect=f"{EFFECTS.get(finding.matches, '') if not finding.paper else ''} {measured}".strip(),
            severity="rescales" if same else "changes_ranking",
            top_overlap=None if overlap is None else round(overlap, 4),
        )
        out.append(finding.model_copy(update={"worked": worked}))
    return out


def with_planted(findings: list[Fidelity], planted: PlantedHardness | None) -> list[Fidelity]:
    """Each worked departure with the planted AUROC (mean over kinds and fractions) of the code's output and of the
    paper's metric on the same planted run: what the departure costs at finding hard samples."""
    if planted is None:
        return findings
    out = []
    for finding in findings:
        score = next((sc for sc in planted.scores if sc.output == finding.output), None)
        if finding.worked is None or score is None or not score.figures:
            out.append(finding)
            continue
        mine = float(np.mean([f.auroc for f in score.figures]))
        refs = [f.reference.auroc for f in score.figures if f.reference is not None]
        worked = finding.worked.model_copy(update={"planted_auroc": round(mine, 4),
                                                   "paper_planted_auroc": round(float(np.mean(refs)), 4) if refs else None})
        out.append(finding.model_copy(update={"worked": worked}))
    return out
