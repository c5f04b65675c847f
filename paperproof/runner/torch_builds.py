"""Packages built against one torch release (torchvision, torchaudio): which of theirs matches the runner's
torch, and what of an installed one cannot load beside it.

The registry's torchvision for Linux is the CUDA build: its compiled ops (`torchvision/_C.so`) link a
CUDA torch's libraries (`libtorch_cuda.so`, `libc10_cuda.so`), which a CPU torch lacks, so they do
not load beside the runner's. Its Python parts do (`fixtures.stubs.declare_unloadable_ops` lets its
import complete); the environment's note names the ops that are missing. Nothing here runs the
package's code: its libraries are read as ELF files, its Python as text.
"""

from __future__ import annotations

import importlib.util
import re
import struct
from pathlib import Path

from paperproof.fixtures.stubs import TORCH_EXTENSIONS


def matching(dist: str, torch_version: str) -> str | None:
    """The version specifier of `dist` built for `torch_version` (the runner's, `2.13.0+cpu`); None when
    there is no rule for it. torchvision 0.(X+15) goes with torch 2.X (0.(X+1) with torch 1.X);
    torchaudio's version is torch's."""
    found = re.match(r"^(\d+)\.(\d+)", torch_version)
    if not found:
        return None
    major, minor = int(found.group(1)), int(found.group(2))
    if dist == "torchvision":
        return f"==0.{minor + 15}.*" if major == 2 else f"==0.{minor + 1}.*" if major == 1 else None
    if dist == "torchaudio":
        return f"=={major}.{minor}.*" if major == 2 else None
    return None


def elf_needed(path: Path) -> list[str] | None:
    """The shared libraries an ELF file (64-bit, little-endian) names as needed; None when it is not one
    we can read."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1 or len(data) < 64:
        return None
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        needed = []
        for _, kind, _, _, offset, size, link, _, _, _ in sections:
            if kind != 6:  # SHT_DYNAMIC
                continue
            strings = sections[link][4]
            for at in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == 0:  # DT_NULL
                    break
                if tag == 1:  # DT_NEEDED
                    needed.append(data[strings + value:data.index(b"\0", strings + value)].decode("utf-8", "replace"))
        return needed
    except (struct.error, IndexError, ValueError):
        return None


def runner_torch_libraries() -> Path | None:
    """The folder of the runner's torch libraries (`torch/lib`), found without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "lib"


def unloadable(package: Path, torch_lib: Path | None) -> tuple[list[str], list[str]]:
    """(its compiled libraries that cannot load beside the runner's torch, the torch libraries they need
    that it lacks), for the installed extension package folder `package`."""
    libraries = TORCH_EXTENSIONS[package.name][1] if package.name in TORCH_EXTENSIONS else ()
    broken, lacking = [], set()
    for file in sorted(package.glob("*.so")):
        needed = elf_needed(file)
        if needed is None or torch_lib is None:
            continue
        absent = {n for n in needed if n.startswith(("libtorch", "libc10")) and not (torch_lib / n).is_file()}
        if absent:
            broken.append(file.name)
            lacking |= absent
    broken.sort(key=lambda f: (f.split(".")[0] not in libraries, f))
    return broken, sorted(lacking)


def package_ops(package: Path, namespace: str) -> list[str]:
    """The public operators of `namespace` the package's Python calls (`torch.ops.torchvision.nms`)."""
    found: set[str] = set()
    pattern = re.compile(rf"torch\.ops\.{re.escape(namespace)}\.([A-Za-z]\w*)")
    for file in sorted(package.rglob("*.py"))[:400]:
        try:
            found.update(pattern.findall(file.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return sorted(found)


def note(folder: Path, pin: str, torch_version: str, torch_lib: Path | None) -> str | None:
    """The line for an installed extension `pin` (name==version) in the environment `folder` whose compiled
    libraries do not load beside the runner's torch; None when they do (or it is no extension)."""
    name, _, version = pin.partition("==")
    package = folder / name.replace("-", "_")
    if not package.is_dir():
        return None
    broken, lacking = unloadable(package, torch_lib)
    if not broken:
        return None
    namespace = TORCH_EXTENSIONS[name][0] if name in TORCH_EXTENSIONS else name
    ops = package_ops(package, namespace)
    missing = f"its compiled ops missing: {', '.join(ops)}" if ops else "its compiled ops missing"
    return (f"{name} {version} with {missing} ({', '.join(broken)} need {', '.join(lacking)}, from a CUDA torch; "
            f"the runner's torch is {torch_version}): its Python parts (datasets, transforms, models) work, "
            f"and a call to one of those ops reports {name}._C missing.")
