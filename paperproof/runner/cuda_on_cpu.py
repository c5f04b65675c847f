"""Research code written for a GPU, run where there is none: its moves to CUDA stay on the CPU.

Much research code calls `.cuda()` or builds tensors with `device="cuda"` unconditionally, so on a
machine without a GPU it raises before computing anything, and nothing is learnt about it. Moving a
tensor between devices does not change its values, so where CUDA is unavailable the sandbox child
wraps torch's moves so that they stay on the CPU: `Tensor.cuda()` is the tensor,
a CUDA device handed to `.to()` or to a factory (`device="cuda:0"`, `torch.device("cuda")`, a device
index) is the CPU, a checkpoint saved on a GPU is loaded onto the CPU (`torch.load` without a `map_location`), and
`torch.cuda.synchronize` / `set_device` do nothing. Code that asks
`torch.cuda.is_available()` still hears False and takes its own CPU path. Imported by the child only.
"""

from __future__ import annotations

import re

CUDA_USE = re.compile(r"\.cuda\(|['\"]cuda(:\d+)?['\"]|\.to\(\s*0\s*\)")  # what the page note looks for


def mentions_cuda(source: str) -> bool:
    """Whether code asks for a GPU without asking whether there is one (`.cuda()`, `"cuda"` on a line that does not
    test `is_available()`): the page says its moves stayed on the CPU."""
    return any(CUDA_USE.search(line) and "is_available" not in line for line in source.splitlines())


# The torch functions that build a tensor on a `device=` they are given.
FACTORIES = ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "eye", "arange", "linspace", "logspace", "rand",
             "randn", "randint", "randperm", "normal", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
             "randn_like", "randint_like")


def install() -> bool:
    """Keep CUDA moves on the CPU in this process when torch is loaded and has no GPU; True when installed. Only the
    moves are wrapped (not every torch call, as a function mode would be), so training loops keep their speed."""
    import functools
    import sys

    torch = sys.modules.get("torch")
    if torch is None or torch.cuda.is_available():
        return False
    device_type, cpu = torch.device, torch.device("cpu")

    def on_gpu(value) -> bool:
        if isinstance(value, str):
            return value.startswith("cuda")
        return (isinstance(value, device_type) and value.type == "cuda") or type(value) is int

    move = torch.Tensor.to

    def to(self, *args, **kwargs):
        if args and on_gpu(args[0]):
            args = (cpu, *args[1:])
        if on_gpu(kwargs.get("device")):
            kwargs["device"] = cpu
        return move(self, *args, **kwargs)

    def build(factory):
        @functools.wraps(factory)
        def on_cpu(*args, **kwargs):
            if on_gpu(kwargs.get("device")):
                kwargs["device"] = cpu
            return factory(*args, **kwargs)
        return on_cpu

    load = torch.load

    @functools.wraps(load)
    def load_on_cpu(*args, **kwargs):
        if kwargs.get("map_location") is None and len(args) < 2:  # a checkpoint saved on a GPU, read on the CPU
            kwargs["map_location"] = cpu
        return load(*args, **kwargs)

    setattr(torch, "load", load_on_cpu)  # noqa: B010 - a module found in sys.modules, typed as any module
    torch.Tensor.to = to  # `Module.to` and `Module.cuda` move each tensor through these two
    torch.Tensor.cuda = lambda self, *args, **kwargs: self
    for name in FACTORIES:
        setattr(torch, name, build(getattr(torch, name)))
    torch.cuda.synchronize = lambda device=None: None
    torch.cuda.set_device = lambda device: None
    torch.cuda.current_device = lambda: 0
    return True
