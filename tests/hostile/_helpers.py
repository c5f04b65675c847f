import numpy as np


def _standardise(values):
    values = np.asarray(values, dtype=float)
    return (values - values.mean()) / (values.std() + 1e-12)
