"""What the tracer costs a driver (issue 45): a training-style loop of a repository (an entry called per batch, a
hook per epoch, torch operations in between, and many calls of library code the tracer does not record), run bare
and under `runner.tracer.Tracer`, side by side in one process. Prints CPU seconds and the ratio.

    .venv/bin/python bench/bench_tracer.py [--batches 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paperproof.runner.tracer import Tracer  # noqa: E402

LIBRARY = '''
import torch
import torch.nn.functional as F


def per_sample_loss(logits, labels):
    return F.cross_entropy(logits, labels, reduction="none")


class Tracker:
    def __init__(self, n):
        self.sums = torch.zeros(n)

    def update(self, index, losses):
        self.sums[index] += losses.detach()
'''

DRIVER = '''
import torch
from lib.scores import Tracker, per_sample_loss


def run(batches):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(batches * 8, 16), torch.randint(0, 4, (batches * 8,))
    tracker = Tracker(len(x))
    for b in range(batches):
        index = torch.arange(b * 8, b * 8 + 8)
        losses = per_sample_loss(model(x[index]), y[index])
        tracker.update(index, losses)
        opt.zero_grad()
        losses.mean().backward()
        opt.step()
    return tracker.sums
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "lib").mkdir()
        (root / "lib/__init__.py").write_text("")
        (root / "lib/scores.py").write_text(textwrap.dedent(LIBRARY))
        (root / "drive.py").write_text(textwrap.dedent(DRIVER))
        sys.path.insert(0, folder)
        import drive  # type: ignore[import-not-found]

        drive.run(50)  # warm up torch's kernels
        bare, traced, calls, codes = [], [], 0, 0
        for _ in range(args.rounds):  # alternated, the least of each kept: other work on the machine only adds
            start = time.process_time()
            drive.run(args.batches)
            bare.append(time.process_time() - start)
            with Tracer(folder, {"lib/scores.py"}) as tracer:
                start = time.process_time()
                drive.run(args.batches)
                traced.append(time.process_time() - start)
            calls, codes = sum(o.count for o in tracer.observed.values()), len(tracer.observed)
        print(f"{args.batches} batches, least of {args.rounds} rounds: bare {min(bare):.2f} CPU s, traced "
              f"{min(traced):.2f} CPU s ({min(traced) / min(bare):.2f}x); {calls} calls recorded in {codes} code "
              "objects")

if __name__ == "__main__":
    main()
