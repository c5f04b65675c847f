import os

import numpy as np


def save_checkpoint(logits):
    """Saves a checkpoint next to its own source, as many training scripts do."""
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoint.npy")
    np.save(target, np.asarray(logits))
    return target
