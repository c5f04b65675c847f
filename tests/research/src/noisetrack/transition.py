"""Undo a label-noise channel: the clean class prior from the observed one and the channel's transition matrix."""

import numpy as np


def clean_prior(observed_prior, transition):
    """Solve the observed prior back through the noise channel.

    Parameters
    ----------
    observed_prior : np.ndarray
        Vector of shape ``(K, )``: how often each class is observed among the noisy labels.
    transition : np.ndarray
        Column-stochastic matrix of shape ``(K, K)``, entry ``(i, j)`` being P(noisy = i | clean = j);
        its columns sum to 1.

    Returns
    -------
    np.ndarray
        The clean prior, shape ``(K, )``, clipped to be a distribution.
    """
    prior = np.linalg.solve(transition, observed_prior)
    prior = np.clip(prior, 1e-6, None)
    return prior / prior.sum()


def sharpened(logits, temperature):
    """Softmax at a temperature, the way pseudo-labels are sharpened."""
    z = logits / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
