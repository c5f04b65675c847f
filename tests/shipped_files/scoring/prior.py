"""Scores reweighted by what the repository ships: a class prior beside this module, a temperature at its root."""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PRIOR_FILE = os.path.join(HERE, "prior.npy")


def prior_weighted(logits):
    """Logits scaled by the total mass of the shipped class prior (prior.npy, saved beside this module)."""
    prior = np.load(PRIOR_FILE)
    return np.asarray(logits, dtype=np.float64) * float(prior.sum())


def calibrated(logits):
    """Logits divided by the temperature in calibration.csv, read from the repository's root as train.sh runs it."""
    with open("calibration.csv") as handle:
        rows = dict(line.strip().split(",") for line in handle if line.strip())
    return np.asarray(logits, dtype=np.float64) / float(rows["temperature"])


def prior_from_here(logits):
    """Reads prior.npy by a name relative to this folder: it expects to be run from scoring/."""
    prior = np.load("prior.npy")
    return np.asarray(logits, dtype=np.float64) * float(prior.sum())


def resume_from_checkpoint(logits):
    """Loads the checkpoint of epoch 3, which a training run writes and the repository does not ship."""
    state = np.load(os.path.join("checkpoints", "epoch_3.npy"))
    return np.asarray(logits, dtype=np.float64) + state


def refit_prior(logits):
    """Refits the class prior from these logits and saves it over the shipped one."""
    counts = np.bincount(np.asarray(logits).reshape(len(logits), -1).argmax(1), minlength=4)
    np.save(PRIOR_FILE, counts / counts.sum())
    return counts


def recalibrate(logits):
    """Writes a new temperature over calibration.csv at the repository's root."""
    with open("calibration.csv", "w") as handle:
        handle.write("name,value\ntemperature,1.0\n")
    return np.asarray(logits, dtype=np.float64)


def read_linked(logits):
    """Reads the file at scoring/linked.txt, which the test makes a link to a file of the host."""
    with open(os.path.join(HERE, "linked.txt")) as handle:
        return handle.read()


def read_settings(logits):
    """Reads scoring/settings.toml, which the test makes a link to a file of the builder's own installation."""
    with open(os.path.join(HERE, "settings.toml")) as handle:
        return handle.read()
