"""Recognition by behaviour: a renamed metric is known by what it returned, in its link basis and why line."""

from __future__ import annotations

from paperproof.verify.checkout import verify_path

# Written for this test in the style of research code: variability under a name that says nothing, a
# score that orders the samples as confidence does without being equal to it, and the spread of one
# sample's trend with Bessel's correction.
CODE = '''
import numpy as np
import torch
import torch.nn.functional as F


def f1(logits, labels):
    """Statistic of each example over the run."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    return p.gather(-1, idx).squeeze(-1).std(dim=0, unbiased=False).numpy()


def f2(logits, labels):
    """Another statistic of each example."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    return np.exp(-3.0 * p.gather(-1, idx).squeeze(-1).mean(dim=0).numpy())


def f3(conf_trend):
    """Spread of one example's trend."""
    return float(np.std(conf_trend, ddof=1))
'''


def test_a_renamed_metric_is_recognised_by_its_output(tmp_path):
    (tmp_path / "stats.py").write_text(CODE)
    samples = {s.entry: s for s in verify_path(tmp_path)}
    f1, f2 = samples["f1"], samples["f2"]
    assert f1.link_basis == "behaviour"
    assert "matches variability (ddof0)" in f1.why_chosen and "rank correlation 1.00" in f1.why_chosen
    assert "takes predictions and labels" in f1.why_chosen  # the code evidence stays in the line
    assert [(f.metric, f.matches, f.paper) for f in f1.fidelity] == [("variability", "ddof0", True)]
    assert f1.status == "ran"
    assert f2.link_basis == "behaviour"
    assert "ranks samples in the reverse order of confidence" in f2.why_chosen
    assert not f2.fidelity  # ranked like confidence, equal to no variant


def test_a_function_of_one_samples_trend_is_called_per_sample_and_known_as_bessel_variability(tmp_path):
    (tmp_path / "stats.py").write_text(CODE)
    f3 = verify_path(tmp_path, entries=["f3"])[0]
    assert any("once per sample" in note for note in f3.notes)
    assert f3.link_basis == "behaviour" and "matches variability (ddof1)" in f3.why_chosen
    assert [(f.metric, f.matches, f.paper) for f in f3.fidelity] == [("variability", "ddof1", False)]
    assert f3.status == "ran_violates" and "E−1" in f3.reason


