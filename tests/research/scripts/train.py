import argparse
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from noisetrack.calibrate import temper  # noqa: E402
from noisetrack.tracker import LossTracker  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--temperature", type=float, default=2.0)
parser.add_argument("--warm-start", action="store_true")
args = parser.parse_args()


def main():
    x, y = torch.randn(256, 8), torch.randint(0, 3, (256,))
    loader = DataLoader(TensorDataset(x, y, torch.arange(256)), batch_size=32, shuffle=True)
    model = torch.nn.Linear(8, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tracker = LossTracker(len(y))
    for epoch in range(args.epochs):
        for xb, yb, ib in loader:
            out = model(xb)
            loss = torch.nn.functional.cross_entropy(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tracker.record(out.detach(), yb, ib)
        tracker.close_epoch()
    scores = tracker.hardness()
    probs = temper(model(x).detach().numpy(), args)
    return scores, probs


if __name__ == "__main__":
    main()
