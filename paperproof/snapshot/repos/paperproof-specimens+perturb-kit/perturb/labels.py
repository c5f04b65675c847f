"""Label noise."""
import numpy as np


def flip_labels_uniform(labels: np.ndarray, noise_rate: float, num_classes: int, seed: int = 0) -> np.ndarray:
    """Replace a fraction `noise_rate` of labels by a label drawn uniformly from all classes.

    About 1/num_classes of the flipped labels keep their value, as in the paper.
    """
    rng = np.random.RandomState(seed)
    labels = np.array(labels, copy=True)
    flip = rng.rand(len(labels)) < noise_rate
    labels[flip] = rng.randint(0, num_classes, size=flip.sum())
    return labels


def flip_labels_adjacent(labels: np.ndarray, noise_rate: float, num_classes: int, seed: int = 0) -> np.ndarray:
    """Move a fraction `noise_rate` of labels to a neighbouring class, (y + 1) or (y - 1) mod C."""
    rng = np.random.RandomState(seed)
    labels = np.array(labels, copy=True)
    flip = rng.rand(len(labels)) < noise_rate
    step = np.where(rng.rand(len(labels)) < 0.5, 1, -1)
    labels[flip] = (labels[flip] + step[flip]) % num_classes
    return labels
