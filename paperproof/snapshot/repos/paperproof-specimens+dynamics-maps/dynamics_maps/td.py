"""Data-map statistics from per-example training-dynamics records.

A record per example id: {"gold": label, "logits": [logits of epoch 0, logits of epoch 1, ...]}.
"""
import argparse
import json
import os

import numpy as np
import pandas as pd

from .metrics import _softmax


def compute_train_dy_metrics(training_dynamics, args):
    """Confidence, variability, correctness, forgetfulness and threshold closeness of every example.

    Args:
        training_dynamics: dict mapping guid -> {"gold": int, "logits": list of per-epoch logit lists}
        args: command-line arguments; `burn_out` keeps the first epochs only, `include_ci` widens
            variability by the sampling error of the mean

    Returns:
        pd.DataFrame with columns guid, confidence, variability, correctness, forgetfulness, threshold_closeness
    """
    rows = []
    for guid, record in training_dynamics.items():
        logits = record["logits"][: args.burn_out] if args.burn_out else record["logits"]
        probs = _softmax(np.array(logits, dtype=np.float64))
        gold = probs[:, record["gold"]]
        n_epochs = len(gold)
        variability = gold.std()
        if args.include_ci:
            variability = np.sqrt(variability ** 2 + variability ** 4 / max(n_epochs - 1, 1))
        correct = probs.argmax(axis=-1) == record["gold"]
        forgotten = int(np.sum(correct[:-1] & ~correct[1:])) if correct.any() else 1000
        confidence = gold.mean()
        rows.append({"guid": guid, "confidence": confidence, "variability": variability,
                     "correctness": correct.mean(), "forgetfulness": forgotten,
                     "threshold_closeness": confidence * (1 - confidence)})
    return pd.DataFrame(rows, columns=["guid", "confidence", "variability", "correctness", "forgetfulness",
                                       "threshold_closeness"])


def save_run_config(args):
    """Keep the run's options beside its data map, so that a map can be traced to the run that made it."""
    with open(os.path.join(args.output_dir, "td_config.json"), "w") as f:
        json.dump(vars(args), f, indent=2, sort_keys=True, default=str)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dynamics", required=True)
    parser.add_argument("--burn_out", type=int, default=100)
    parser.add_argument("--include_ci", action="store_true")
    compute_train_dy_metrics({}, parser.parse_args())
