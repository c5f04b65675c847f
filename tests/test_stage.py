"""The verify stage on a checkout written here: an entry our first layout fails is retried on the others."""

from __future__ import annotations

from paperproof.verify.checkout import verify_path

CODE = '''import torch


def _head():
    torch.manual_seed(0)
    return torch.nn.Linear(1, 1)


def squash(scores: torch.Tensor) -> torch.Tensor:
    """Calibrated scores in (0, 1)."""
    with torch.no_grad():
        return torch.sigmoid(_head()(scores.reshape(-1, 1))).squeeze(1)


def counts(scores: torch.Tensor) -> torch.Tensor:
    """Integer scores only."""
    return torch.mm(scores.reshape(-1, 1), torch.ones(1, 1, dtype=torch.int64))
'''


def test_the_layout_the_code_accepts_is_kept_and_a_layout_none_accepts_is_said(tmp_path):
    (tmp_path / "heads.py").write_text(CODE)
    samples = {s.entry: s for s in verify_path(tmp_path, entries=["squash", "counts"], workers=1)}
    kept = samples["squash"]
    assert (kept.status, kept.contract_check) == ("ran", "PASSES"), kept.reason
    assert kept.cases[0].args["scores"].startswith("scores [24 samples], float32 tensor")
    assert any("the code accepted `scores` as float32, which was kept" in n for n in kept.notes)
    refused = samples["counts"]
    assert (refused.status, refused.contract_check) == ("ran_fixture", "RAISES"), refused.reason
    assert "our choice of `scores` = scores(container=torch) failed" in refused.reason
    assert any(n == "Also tried `scores` as float32: it raised on every case with each." for n in refused.notes)


OPTIONS = '''def blend(cfg, losses):
    """A weighted mix of per-sample losses."""
    return losses * cfg.w_alpha + cfg.w_beta - cfg.w_gamma * cfg.w_delta + cfg.w_eps + cfg.w_zeta * cfg.w_eta \
        + cfg.w_theta
'''


def test_probe_runs_follow_the_codes_own_exceptions_until_their_budget_is_spent(tmp_path):
    (tmp_path / "mix.py").write_text(OPTIONS)
    (sample,) = verify_path(tmp_path, entries=["blend"], workers=1, planted=False)
    # each probe finds one more option the code reads; eight are asked for, six probes are allowed
    assert sample.status == "unverified", sample.reason
    assert sample.reason.startswith("probe budget spent: 6 probe runs refined its arguments from its own exceptions")
    assert "'Namespace' object has no attribute 'w_eta'" in sample.reason
