import numpy as np


def flag_top(vals, budget_k):
    """Indices of the budget_k highest scores."""
    order = np.argsort(vals)
    return np.sort(order[len(order) - budget_k:])
