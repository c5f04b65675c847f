"""Alignment as a behaviour: a per-sample score must follow its sample when the samples are reordered, and a
score named for a metric that varies must not give every sample one value."""

from __future__ import annotations

import dataclasses

import numpy as np

from paperproof.fixtures import training
from paperproof.fixtures.values import sample_permutation
from paperproof.verify.checkout import verify_path

# Written for this test in the style of research code.
CODE = '''
import numpy as np
import torch
import torch.nn.functional as F


class LossTracker:
    """Per-example loss recorded from every training batch; higher loss = harder example."""

    def __init__(self, num_epochs):
        self.rows = []
        self.current = []

    def on_batch_end(self, logits, targets):
        self.current += F.cross_entropy(logits.detach(), targets, reduction="none").tolist()

    def on_epoch_end(self):
        self.rows.append(self.current)
        self.current = []

    def compute_scores(self):
        return np.mean(self.rows, axis=0)


def sorted_confidence(logits, labels):
    """Confidence of each example, lower = harder (returned from the hardest up)."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    return np.sort(p.gather(-1, idx).squeeze(-1).mean(dim=0).numpy())


def random_scores(logits, labels):
    """Random baseline: one uniform score per example, higher is harder."""
    return np.random.default_rng(0).uniform(size=len(labels))


def variability_of_last_epoch(logits, labels):
    """Variability of each example (higher = more ambiguous), from a tracker that keeps only the last epoch."""
    p = F.softmax(torch.as_tensor(logits[-1:], dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1)
    return p.gather(-1, idx).squeeze(-1).std(dim=0, unbiased=False).numpy()


def jittered_confidence(logits, labels):
    """Confidence of each example with a little seeded jitter, as a pass in training mode gives (lower = harder)."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    conf = p.gather(-1, idx).squeeze(-1).mean(dim=0).numpy()
    return conf + np.random.default_rng(0).normal(0.0, 0.01, size=conf.shape)


def fold_confidence(logits, labels):
    """Confidence of each example, recalibrated out of fold (folds taken by position; lower = harder)."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    conf = p.gather(-1, idx).squeeze(-1).mean(dim=0).numpy()
    folds = np.arange(len(labels)) % 3
    out = np.empty_like(conf)
    for k in range(3):
        rng = np.random.default_rng(int(conf[folds != k].sum() * 1e6) % 2**32)
        out[folds == k] = conf[folds == k] + rng.normal(0.0, 0.3, size=int((folds == k).sum()))
    return out


def grouped_confidence(logits, labels):
    """Confidence of each example, grouped class by class (lower = harder)."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    conf = p.gather(-1, idx).squeeze(-1).mean(dim=0).numpy()
    return conf[np.argsort(np.asarray(labels), kind="stable")]


def correctness_at_end(logits, labels):
    """Whether each example is learned by the end (lower = harder); every one is, on an easy run."""
    return np.ones(len(labels))
'''


def test_a_reordered_run_trains_batch_for_batch_the_same():
    spec = training.RunSpec()
    with training.single_threaded():
        plain, labels = training.train(spec).dynamics()
        moved, moved_labels = training.train(dataclasses.replace(spec, permute=5)).dynamics()
    order = sample_permutation(5, spec.n)
    assert np.array_equal(moved, plain[:, order]) and np.array_equal(moved_labels, labels[order])


def test_scores_that_follow_the_loader_are_a_departure_with_a_worked_case(tmp_path):
    (tmp_path / "track.py").write_text(CODE)
    sample = verify_path(tmp_path, entries=["LossTracker"])[0]
    (finding,) = [f for f in sample.fidelity if f.found_by == "reordering"]
    assert sample.status == "ran_violates" and sample.checked == "paper"
    assert finding.metric == "loss" and finding.matches == "follows_position"
    assert "do not belong to their samples" in sample.reason
    w = finding.worked
    assert w is not None and w.case_id == "typical~permuted" and w.severity == "changes_ranking"
    assert w.paper_value != w.code_value and f"position {w.sample} of case typical~permuted" in w.worked


def test_sorted_scores_do_not_follow_their_samples_but_a_random_baseline_is_not_charged(tmp_path):
    (tmp_path / "track.py").write_text(CODE)
    found = {s.entry: s for s in verify_path(tmp_path, entries=["sorted_confidence", "random_scores"])}
    moved = [f for f in found["sorted_confidence"].fidelity if f.found_by == "reordering"]
    assert len(moved) == 1 and moved[0].matches == "follows_position"  # sorted: the same values at the same positions
    assert found["sorted_confidence"].status == "ran_violates"
    assert not [f for f in found["random_scores"].fidelity if f.found_by == "reordering"]
    assert found["random_scores"].status == "ran"


def test_a_variability_that_never_varies_is_a_departure(tmp_path):
    (tmp_path / "track.py").write_text(CODE)
    sample = verify_path(tmp_path, entries=["variability_of_last_epoch"])[0]
    (finding,) = [f for f in sample.fidelity if f.found_by == "constancy"]
    assert finding.metric == "variability" and sample.status == "ran_violates"
    assert finding.worked is not None and finding.worked.code_value == 0.0 and finding.worked.paper_value > 0


def test_a_count_or_flag_that_one_run_leaves_equal_is_not_charged(tmp_path):
    (tmp_path / "track.py").write_text(CODE)
    sample = verify_path(tmp_path, entries=["correctness_at_end"])[0]
    assert not [f for f in sample.fidelity if f.found_by == "constancy"] and sample.status == "ran"


def test_a_score_that_moves_with_its_samples_up_to_its_own_noise_is_not_charged(tmp_path):
    (tmp_path / "track.py").write_text(CODE)
    sample = verify_path(tmp_path, entries=["jittered_confidence"])[0]
    assert not [f for f in sample.fidelity if f.found_by == "reordering"]


def test_a_score_whose_noise_is_tied_to_positions_but_follows_its_samples_is_not_charged(tmp_path):
    (tmp_path / "track.py").write_text(CODE)
    found = {s.entry: s for s in verify_path(tmp_path, entries=["fold_confidence", "grouped_confidence"])}
    assert not [f for f in found["fold_confidence"].fidelity if f.found_by == "reordering"]
    moved = [f for f in found["grouped_confidence"].fidelity if f.found_by == "reordering"]
    assert len(moved) == 1 and moved[0].matches == "does_not_follow_sample"  # neither with its samples nor in place
    assert found["grouped_confidence"].status == "ran_violates"
