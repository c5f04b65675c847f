"""The recipe kinds, declared once: every table that asks whether a kind is an array, takes a container, holds
floats or is laid out over epochs reads the same answer."""

from __future__ import annotations

import numpy as np
import torch

from paperproof.catalogue.extract import extract_module
from paperproof.fixtures import kinds
from paperproof.fixtures.synth import synthesize
from paperproof.fixtures.values import materialize

CASE = {"case_id": "typical", "seed": 11, "dims": {"E": 4, "N": 12, "C": 3, "D": 5, "H": 8, "CH": 3}}


def test_every_array_kind_is_made_and_takes_the_torch_container_it_is_asked_for():
    for name in sorted(kinds.ARRAY_KINDS - {"trend"}):  # a trend is one sample's epochs, a plain list
        made = materialize({"kind": name, "params": {"container": "torch"}}, CASE)
        assert isinstance(made, torch.Tensor), name
        assert isinstance(materialize({"kind": name}, CASE), np.ndarray), name


def test_the_derived_tables_agree_with_the_registry():
    assert kinds.DEFAULT_RANK == {"logits": 3, "probs": 3, "gold_probs": 2, "correct": 2}
    assert kinds.FLOAT_KINDS <= kinds.ARRAY_KINDS <= kinds.CONTAINER_KINDS
    assert {"logits", "labels", "td_dict"} <= kinds.DYNAMICS_KINDS and "scores" not in kinds.DYNAMICS_KINDS
    assert kinds.family("mask") == "array" and kinds.family("td_dict") == "mapping" and kinds.family("nothing") is None


def test_a_torch_annotation_gives_a_mask_a_tensor_as_it_gives_scores():
    source = "import torch\n\ndef reweight(scores: torch.Tensor, mask: torch.Tensor):\n    return scores * mask\n"
    (entry,) = extract_module(source, repo="o/r", path="m.py")
    args = {a.name: a.spec for a in synthesize(entry).cases[0].args}
    assert args["scores"].params.get("container") == args["mask"].params.get("container") == "torch"
