"""Accumulate head gradient norms over the last epochs of training."""

from noisetrack.gradnorm import HeadGradNorm


def train_with_norms(net, loader, opt, epochs=5):
    scorer = HeadGradNorm(net, len(loader.dataset))
    for epoch in range(epochs):
        for xb, yb, idx in loader:
            opt.zero_grad()
            net(xb).sum().backward()
            opt.step()
            scorer.update(batch_inputs={"features": xb, "labels": yb}, sample_ids=idx)
    return scorer.compute_scores()
