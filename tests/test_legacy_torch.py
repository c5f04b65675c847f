"""A checkpoint pickled as research code pickled them before PyTorch 2.6 loads as it did, in a real process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

PROGRAM = textwrap.dedent("""
    import argparse, io, sys
    import torch
    from paperproof.runner import legacy_torch

    buffer = io.BytesIO()
    torch.save({"epoch": 3, "args": argparse.Namespace(lr=0.5), "weights": torch.ones(2)}, buffer)
    try:
        buffer.seek(0)
        torch.load(buffer)  # PyTorch's own default refuses the saved options
        refused = False
    except Exception as exc:
        refused = type(exc).__name__
    assert legacy_torch.install()
    buffer.seek(0)
    state = torch.load(buffer)
    buffer.seek(0)
    try:
        torch.load(buffer, weights_only=True)  # what the code says is kept
        kept = False
    except Exception:
        kept = True
    print(refused, state["args"].lr, kept)
""")


def test_a_pickled_checkpoint_loads_as_before_and_an_explicit_choice_is_kept() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["UnpicklingError", "0.5", "True"]
