import matplotlib.pyplot as plt
import numpy as np


def plot_data_map(confidence, variability, correctness, out="data_map.png"):
    """Scatter confidence against variability, coloured by correctness."""
    fig, ax = plt.subplots(figsize=(6, 5))
    sc = ax.scatter(variability, confidence, c=correctness, cmap="coolwarm", s=8)
    fig.colorbar(sc, ax=ax, label="correctness")
    ax.set_xlabel("variability")
    ax.set_ylabel("confidence")
    fig.savefig(out, dpi=150)
    return np.stack([variability, confidence], axis=1)
