"""`torch.load` as research code written before PyTorch 2.6 calls it: a whole pickled checkpoint, not weights only.

PyTorch 2.6 changed `torch.load`'s default to `weights_only=True`, so a checkpoint that pickles a model object, an
optimizer or a class of the repository (most research checkpoints of earlier years) now raises `UnpicklingError`
where the code loads it, and the code computes nothing, through no fault of its author. In the sandbox child, where
the repository's own code already runs (so its pickles may too), a call that does not say `weights_only` gets the
default the code was written against. Imported by the child only.
"""

from __future__ import annotations

import functools
import sys


def install() -> bool:
    """Give `torch.load` its old default in this process when torch is loaded; True when installed."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    load = torch.load

    @functools.wraps(load)
    def load_as_written(*args, **kwargs):
        kwargs.setdefault("weights_only", False)
        return load(*args, **kwargs)

    setattr(torch, "load", load_as_written)  # noqa: B010 - a module found in sys.modules, typed as any module
    return True
