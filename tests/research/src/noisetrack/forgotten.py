"""When each sample was first got wrong: a row of zeros closes every column, so the never-forgotten get E."""

import torch


def epochs_until_forgotten(flags):
    padded = torch.vstack([flags, torch.zeros(1, flags.shape[1])])
    return padded.int().argmin(dim=0)
