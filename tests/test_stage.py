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
    assert kept.cases[0].args["scores"] == "scores(container=torch, dtype=float32)"
    assert any("the code accepted `scores` as float32, which was kept" in n for n in kept.notes)
    refused = samples["counts"]
    assert (refused.status, refused.contract_check) == ("ran_fixture", "RAISES"), refused.reason
    assert "our choice of `scores` = scores(container=torch) failed" in refused.reason
    assert any(n == "Also tried `scores` as float32: it raised on every case with each." for n in refused.notes)
