"""Code written for a GPU runs where there is none: its moves to CUDA leave tensors on the CPU, in a real process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from paperproof.runner import cuda_on_cpu

torch = pytest.importorskip("torch")

PROGRAM = textwrap.dedent("""
    import torch
    from paperproof.runner import cuda_on_cpu

    assert cuda_on_cpu.install()
    x = torch.arange(6.0).reshape(2, 3)
    assert x.cuda() is x
    assert torch.zeros(2, device="cuda").device.type == "cpu"
    assert torch.ones(2, device=torch.device("cuda:0")).device.type == "cpu"
    moved = x.to(torch.device("cuda"), torch.float64)
    assert moved.device.type == "cpu" and moved.dtype == torch.float64
    assert x.to(0).device.type == "cpu" and x.to("cuda:1", non_blocking=True).device.type == "cpu"
    assert x.to(torch.float16).dtype == torch.float16
    layer = torch.nn.Linear(3, 2).cuda()
    layer = layer.to("cuda")
    assert layer.weight.device.type == "cpu" and layer(x).shape == (2, 2)
    torch.cuda.synchronize()
    assert not torch.cuda.is_available()
    print("ok")
""")


@pytest.mark.skipif(torch.cuda.is_available(), reason="with a GPU, CUDA moves are real")
def test_cuda_moves_stay_on_the_cpu_in_a_process_without_a_gpu() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_without_torch_loaded_nothing_is_installed() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom paperproof.runner import cuda_on_cpu\n"
                           "print(cuda_on_cpu.install(), 'torch' in sys.modules)"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "False"], done.stderr


@pytest.mark.parametrize(("source", "asks"), [
    ("x = x.cuda()", True), ("torch.zeros(3, device='cuda')", True), ('t.to("cuda:1")', True),
    ("dev = 'cuda' if torch.cuda.is_available() else 'cpu'", False), ("x = x.cpu()", False),
    ("use_cuda = False", False),
])
def test_what_counts_as_asking_for_a_gpu(source: str, asks: bool) -> None:
    assert cuda_on_cpu.mentions_cuda(source) is asks


LOADING = textwrap.dedent("""
    import torch
    from paperproof.runner import cuda_on_cpu

    asked = []
    torch.load = lambda *args, **kwargs: asked.append(kwargs.get("map_location")) or "state"  # stands for torch's
    assert cuda_on_cpu.install()
    assert torch.load("detector.pth.tar") == "state"  # saved on a GPU: read onto the CPU
    torch.load("detector.pth.tar", map_location="cuda:0")  # the code's own choice is left as it is
    torch.load("detector.pth.tar", "cuda:0")
    print(asked)
""")


@pytest.mark.skipif(torch.cuda.is_available(), reason="with a GPU, checkpoints load where they were saved")
def test_a_checkpoint_saved_on_a_gpu_is_loaded_onto_the_cpu() -> None:
    done = subprocess.run([sys.executable, "-c", LOADING], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[device(type='cpu'), 'cuda:0', None]"
