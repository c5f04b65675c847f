"""Confidence stage by stage: which boosting round (or epoch) each gold-label probability was read at."""

import numpy as np


class StagedConfidence:
    def __init__(self, X, y):
        self.X, self.y = X, np.asarray(y)
        self.rounds, self.gold = [], []

    def on_round_end(self, net, iteration=1):
        self.rounds.append(iteration)
        out = net(self.X).softmax(-1).detach().numpy()
        self.gold.append(out[np.arange(len(self.y)), self.y])

    def rounds_seen(self):
        return np.asarray(self.rounds)
