import copy

import numpy as np


def oof_confidence(X, labels, model, n_folds=3):
    """Out-of-fold self-confidence: each sample's given-label probability from a copy of `model` fit without it."""
    labels = np.asarray(labels)
    folds = np.arange(len(labels)) % n_folds
    conf = np.zeros(len(labels))
    for k in range(n_folds):
        held = folds == k
        m = copy.deepcopy(model)
        m.fit(X[~held], labels[~held])
        p = m.predict_proba(X[held])
        conf[held] = p[np.arange(held.sum()), np.searchsorted(m.classes_, labels[held])]
    return conf
