"""Selection rounds: which end of the data map to keep, and a folder for each round's outputs."""
import os


def keep_high_end(metric: str) -> bool:
    """Whether the examples worth another round are those scoring highest on `metric`."""
    if metric in ("variability", "forgetfulness"):
        return True
    elif metric == "confidence":
        return False
    raise NotImplementedError(f"No selection rule for {metric} yet")


def start_rounds(rounds: str) -> int:
    """Make an output folder for each selection round that has none; returns how many were made."""
    made = 0
    for name in rounds:
        if not os.path.isdir(name):
            os.makedirs(name)
            made += 1
    return made
