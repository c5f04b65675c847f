"""Out-of-distribution scores and calibration for the perturbed evaluation sets."""
import os

import numpy as np
import torch


def process_ood_logits(logits):
    """Margin between the in-distribution class and the best other class, per example.

    Takes the logits of one evaluation pass; class 0 is the in-distribution class.
    """
    logits = np.asarray(logits, dtype=np.float64)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = probs / probs.sum(axis=1, keepdims=True)
    return probs[:, 0] - probs[:, 1:].max(axis=1)


def _calibration_head():
    torch.manual_seed(0)
    head = torch.nn.Linear(1, 1)
    head.eval()
    return head


def calibrate_scores(scores: torch.Tensor) -> torch.Tensor:
    """Squash raw hardness scores into (0, 1) with the calibration head."""
    head = _calibration_head()
    with torch.no_grad():
        return torch.sigmoid(head(scores.reshape(-1, 1))).squeeze(1)


def check_folder_exist(folder_name: str) -> bool:
    """Create the output folder unless it exists; True when it was created."""
    if os.path.isdir(folder_name):
        return False
    os.makedirs(folder_name)
    return True
