"""Fidelity's silences: identifiers are never scores, a case where the paper's metric is undefined is never
charged, and the epoch a function is handed is its caller's choice."""

from __future__ import annotations

from paperproof.catalogue.run_result import EncodedValue
from paperproof.verify.checkout import verify_path
from paperproof.verify.fidelity import channels, identifies

# Written for this test in the style of research code.
CODE = '''
import numpy as np
import pandas as pd
import torch


def margin_area(logits, labels):
    """Area under the margin per example (lower = more likely mislabelled)."""
    z = torch.as_tensor(logits, dtype=torch.float64)
    y = torch.as_tensor(labels).long()
    gold = z.gather(-1, y.view(1, -1, 1).expand(z.shape[0], -1, 1)).squeeze(-1)
    rest = z.scatter(-1, y.view(1, -1, 1).expand(z.shape[0], -1, 1), float("-inf")).amax(-1)
    return (gold - rest).mean(0).numpy()


def confidence_table(logits, labels):
    """Per-example confidence in a table with the example's id; lower confidence = harder."""
    z = torch.as_tensor(logits, dtype=torch.float64).softmax(-1)
    y = torch.as_tensor(labels).long()
    conf = z.gather(-1, y.view(1, -1, 1).expand(z.shape[0], -1, 1)).squeeze(-1).mean(0).numpy()
    return pd.DataFrame({"sample_id": np.arange(len(conf)), "confidence": conf})
'''


def _encoded(values):
    return EncodedValue(type="ndarray", repr="", digest="", shape=[len(values)], dtype="float64", data=list(values))


def test_positions_passed_through_are_identifiers_and_a_permuted_rank_is_not():
    assert identifies((0.0, 1.0, 2.0, 3.0))
    assert not identifies((2.0, 0.0, 3.0, 1.0))
    assert not identifies((0.1, 1.0, 2.0, 3.0))
    assert [c.name for c in channels(_encoded([0, 1, 2, 3]), 4)] == []
    assert [c.name for c in channels(_encoded([3, 1, 2, 0]), 4)] == ["return value"]


def test_a_correct_aum_is_not_charged_on_the_one_class_case_where_aum_is_undefined(tmp_path):
    (tmp_path / "aum.py").write_text(CODE)
    sample = verify_path(tmp_path, entries=["margin_area"])[0]
    assert [(f.metric, f.matches, f.departures) for f in sample.fidelity] == [("aum", "mean_logit_margin", [])]
    assert sample.status == "ran" and sample.checked == "paper"


def test_an_id_column_is_never_scored(tmp_path):
    (tmp_path / "table.py").write_text(CODE)
    sample = verify_path(tmp_path, entries=["confidence_table"])[0]
    assert [f.output for f in sample.fidelity] == ["column confidence"]
    assert sample.planted is not None
    assert [s.output for s in sample.planted.scores] == ["column confidence"]
    assert "sample_id" not in (sample.planted.note or "")


VOG = '''
import torch


class GradVariance:
    """Variance of gradients of every example over training (higher = harder example)."""

    def __init__(self, dataloader, total_samples):
        self.loader = dataloader
        self.snapshots = []

    def updates(self, net):
        net.eval()
        grads = []
        for x, y in self.loader:
            x = x.clone().requires_grad_(True)
            prob = torch.softmax(net(x), dim=1).gather(1, y.view(-1, 1)).sum()
            (g,) = torch.autograd.grad(prob, x)
            grads.append(g.reshape(len(x), -1))
        self.snapshots.append(torch.cat(grads))

    def compute_scores(self):
        return torch.stack(self.snapshots).std(0, unbiased=False).mean(-1).detach().numpy()
'''


def test_a_vog_of_probability_gradients_without_class_normalisation_departs_from_the_paper(tmp_path):
    (tmp_path / "vog.py").write_text(VOG)
    sample = verify_path(tmp_path, entries=["GradVariance"])[0]
    (finding,) = sample.fidelity
    assert (finding.metric, finding.matches, finding.paper) == ("vog", "prob_raw", False)
    assert "softmax probability" in finding.departures[0] and sample.status == "ran_violates"
    assert finding.worked is not None and finding.worked.paper_value != finding.worked.code_value


def test_every_variant_reads_one_way_its_paper_or_its_own() -> None:
    from paperproof.verify import feature_references, run_references
    from paperproof.verify.fidelity import orientation
    from paperproof.verify.metrics import VARIANTS

    tables = (VARIANTS, run_references.MODEL_VARIANTS, feature_references.FEATURE_VARIANTS)
    for table in tables:
        for metric, variants in table.items():
            for v in variants:
                assert orientation(metric, v.name) in ("high_is_hard", "low_is_hard"), (metric, v.name)
    # H-CAT's cosine similarity reads the other way from the paper's distance; a valuation's low end is harmful
    assert orientation("prototypicality", "kmeans_distance") == "high_is_hard"
    assert orientation("prototypicality", "cosine_class_mean") == "low_is_hard"
    assert orientation("knn_shapley", "sum_k3") == orientation("knn_shapley") == "low_is_hard"
    assert orientation("normalized_margin") == "low_is_hard"
