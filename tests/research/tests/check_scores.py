import numpy as np

from noisetrack.distances import error_norm


def check_error_norm_is_zero_on_one_hot():
    probs = np.eye(3)[[0, 1, 2, 1]]
    assert np.allclose(error_norm(probs, np.array([0, 1, 2, 1])), 0.0)
