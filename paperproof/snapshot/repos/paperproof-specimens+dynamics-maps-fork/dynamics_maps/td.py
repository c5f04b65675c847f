"""Data-map statistics from per-example training-dynamics records.

A record per example id: {"gold": label, "logits": [logits of epoch 0, logits of epoch 1, ...]}.
"""
import argparse

import numpy as np
import pandas as pd

from .metrics import _softmax


def compute_train_dy_metrics(training_dynamics, include_ci=False):
    """Confidence, variability and correctness of every example.

    Args:
        training_dynamics: dict mapping guid -> {"gold": int, "logits": list of per-epoch logit lists}
        include_ci: widen variability by the sampling error of the mean

    Returns:
        pd.DataFrame with columns guid, confidence, variability, correctness
    """
    rows = []
    for guid, record in training_dynamics.items():
        probs = _softmax(np.array(record["logits"], dtype=np.float64))
        gold = probs[:, record["gold"]]
        n_epochs = len(gold)
        variability = gold.std()
        if include_ci:
            variability = np.sqrt(variability ** 2 + variability ** 4 / max(n_epochs - 1, 1))
        correct = probs.argmax(axis=-1) == record["gold"]
        rows.append({"guid": guid, "confidence": gold.mean(), "variability": variability,
                     "correctness": correct.mean()})
    frame = pd.DataFrame(rows, columns=["guid", "confidence", "variability", "correctness"])
    summary = {"n": len(frame), "mean_confidence": float(frame["confidence"].mean())}
    return frame, summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dynamics", required=True)
    print(parser.parse_args())
