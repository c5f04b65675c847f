"""Margins computed where the lab ran them: on the GPU, every tensor moved there first."""

import torch


def gpu_margin(logit_mat, target_vec):
    """Gold logit minus the largest other logit, per sample, from one pass's [N, C] logits."""
    logit_mat = logit_mat.float().cuda()
    target_vec = target_vec.long().cuda()
    rows = torch.arange(logit_mat.size(0), device="cuda")
    gold = logit_mat[rows, target_vec]
    rivals = logit_mat.clone()
    rivals[rows, target_vec] = float("-inf")
    return (gold - rivals.max(dim=1).values).cpu()
