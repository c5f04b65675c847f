"""Stand-in modules for imports the runner lacks: found from the checkout with ast, given only to those."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from paperproof.fixtures.stubs import ENVIRONMENT_MARK, missing_imports


def test_missing_imports_are_those_neither_installed_nor_the_repositorys_own(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "helpers.py").write_text("import numpy\n")
    (tmp_path / "src" / "metrics.py").write_text(textwrap.dedent("""
        import os, json
        import numpy as np
        import paperproof_absent_augment.image as aug
        from paperproof_absent_plots import pyplot
        from helpers import thing
        from . import helpers
        from src.helpers import thing
    """))
    (tmp_path / "broken.py").write_text("def (:\n")
    assert missing_imports(str(tmp_path)) == ("paperproof_absent_augment", "paperproof_absent_plots")
    installed = tmp_path / "env"
    (installed / "paperproof_absent_plots").mkdir(parents=True)
    (installed / "paperproof_absent_plots" / "__init__.py").write_text("")
    assert missing_imports(str(tmp_path), (str(installed),)) == ("paperproof_absent_augment",)


STAND_IN_USE = textwrap.dedent("""
    import json, sys
    from paperproof.fixtures import stubs
    stubs.install(["absent_fw"])
    import absent_fw.image as aug
    from absent_fw.callbacks import Callback
    import absent_fw as fw
    out = {}

    class Logger(Callback):
        def __init__(self, n):
            super().__init__()
            self.n = n

    out["subclass"] = Logger(3).n
    try:
        aug.Zoom(2)
    except ModuleNotFoundError as exc:
        out["call"] = [exc.name, str(exc)]
    try:
        fw.keras.layers.Dense(4)
    except ModuleNotFoundError as exc:
        out["chain"] = exc.name
    try:
        import other_absent
    except ModuleNotFoundError as exc:
        out["unlisted"] = exc.name
    print(json.dumps(out))
""")


def test_a_stand_in_can_be_subclassed_and_raises_needs_x_when_used():
    done = subprocess.run([sys.executable, "-c", STAND_IN_USE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["subclass"] == 3
    assert out["call"][0] == "absent_fw" and out["call"][1].startswith("needs absent_fw, which is not installed")
    assert out["chain"] == "absent_fw" and out["unlisted"] == "other_absent"


def _environment(folder, packages: dict[str, str]):
    """A folder as `runner.environment` leaves one (its mark last), with the packages' __init__ code."""
    folder.mkdir()
    for name, code in packages.items():
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(textwrap.dedent(code))
    (folder / ENVIRONMENT_MARK).write_text("[]")
    return folder


BROKEN_USE = textwrap.dedent("""
    import json, sys
    sys.path.append(sys.argv[1])
    from paperproof.fixtures import stubs
    stubs.install(["absent_fw"])
    out = {}
    for name in ("pp_raises", "pp_lacks", "pp_fine", "absent_fw", "pp_blocked"):
        try:
            module = __import__(name)
            out[name] = ["ok", type(module.__spec__.loader).__name__]
        except (ImportError, OSError) as exc:
            out[name] = [type(exc).__name__, getattr(exc, "name", None), str(exc)]
    try:
        import pp_raises
    except ImportError as exc:
        out["again"] = str(exc)
    print(json.dumps(out))
""")


def test_an_installed_package_whose_import_raises_is_named_with_its_real_error_not_as_missing(tmp_path):
    env = _environment(tmp_path / "env", {
        "pp_raises": "raise RuntimeError('operator pp::nms does not exist')\n",
        "pp_lacks": "import pp_nowhere_at_all\n",
        "pp_fine": "VALUE = 1\n",
        "pp_blocked": "raise PermissionError(13, 'Permission denied', '/etc/secret')\n",
    })
    done = subprocess.run([sys.executable, "-c", BROKEN_USE, str(env)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["pp_raises"] == ["ImportError", "pp_raises", "pp_raises is installed for this repository, but importing "
                                "it raised RuntimeError: operator pp::nms does not exist"]
    assert out["again"] == out["pp_raises"][2]
    # what it lacks is another module: that one is the missing module, and the package is named
    assert out["pp_lacks"][:2] == ["ModuleNotFoundError", "pp_nowhere_at_all"]
    assert out["pp_lacks"][2].startswith("pp_lacks is installed for this repository, but importing it raised "
                                         "ModuleNotFoundError: No module named 'pp_nowhere_at_all'")
    assert out["pp_fine"] == ["ok", "SourceFileLoader"]  # a package that imports looks imported plainly
    assert out["absent_fw"][0] == "ok"  # a stand-in still stands in
    assert out["pp_blocked"][0] == "PermissionError"  # left for the run to classify (what the sandbox blocked)


FAKE_EXTENSION = {
    "__init__": """
        import torch
        from . import extension
        from . import _meta_registrations, ops
    """,
    "extension": """
        import os
        import torch

        def _has_ops():
            return False

        try:
            torch.ops.load_library(os.path.join(os.path.dirname(__file__), "_C.so"))

            def _has_ops():
                return True
        except OSError:
            pass

        def _assert_has_ops():
            if not _has_ops():
                raise RuntimeError("Couldn't load custom C++ ops.")
    """,
    "_meta_registrations": """
        import torch

        @torch.library.register_fake("torchvision::nms")
        def meta_nms(dets, scores, iou_threshold):
            return dets.new_empty(0, dtype=torch.long)
    """,
    "ops": """
        import torch
        from .extension import _assert_has_ops

        def nms(boxes, scores, iou):
            _assert_has_ops()
            return torch.ops.torchvision.nms(boxes, scores, iou)

        def box_area(boxes):
            return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    """,
}

EXTENSION_USE = textwrap.dedent("""
    import json, sys
    sys.path.append(sys.argv[1])
    from paperproof.fixtures import stubs
    stubs.install([])
    import torch
    import torchvision
    out = {"declared": stubs._DECLARED.get("torchvision"),
           "area": torchvision.ops.box_area(torch.tensor([[0.0, 0.0, 2.0, 3.0]])).tolist()}
    try:
        torchvision.ops.nms(torch.rand(3, 4), torch.rand(3), 0.5)
    except ModuleNotFoundError as exc:
        out["nms"] = [exc.name, str(exc)]
    print(json.dumps(out))
""")


def test_a_torch_extension_whose_compiled_ops_cannot_load_imports_and_its_ops_report_them_missing(tmp_path):
    """torchvision from the registry beside a CPU torch: its `_C.so` does not load, and its import registers
    a fake kernel for `torchvision::nms` unconditionally; here a package of that shape, with a `_C.so` that
    is no library at all."""
    env = tmp_path / "env"
    (env / "torchvision").mkdir(parents=True)
    for name, code in FAKE_EXTENSION.items():
        (env / "torchvision" / f"{name}.py").write_text(textwrap.dedent(code))
    (env / "torchvision" / "_C.so").write_bytes(b"not a shared library")
    (env / ENVIRONMENT_MARK).write_text("[]")
    plain = subprocess.run([sys.executable, "-c", f"import sys; sys.path.append({str(env)!r}); import torchvision"],
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode != 0 and "torchvision::nms" in plain.stderr  # what happens without the guard
    done = subprocess.run([sys.executable, "-c", EXTENSION_USE, str(env)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["declared"] == ["nms"] and out["area"] == [6.0]
    assert out["nms"][0] == "torchvision._C" and out["nms"][1].startswith("needs torchvision's compiled ops")


def test_an_import_the_code_makes_only_as_an_option_gets_no_stand_in(tmp_path):
    """`try: import cupy` with a fallback, `if TYPE_CHECKING: import jax`: a stand-in would make the import succeed
    and send the code down the path it cannot run. An installed package's imports count only where they run when it
    is imported, not inside its functions."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sqrtm.py").write_text(textwrap.dedent("""
        from typing import TYPE_CHECKING
        try:
            import paperproof_absent_gpu as cp
        except:
            import numpy as cp
        try:
            import paperproof_absent_fast
        except (ModuleNotFoundError, OSError):
            paperproof_absent_fast = None
        if TYPE_CHECKING:
            import paperproof_absent_types
        try:
            import paperproof_absent_needed
        except KeyError:
            pass
    """))
    assert missing_imports(str(repo)) == ("paperproof_absent_needed",)
    installed = tmp_path / "env"
    (installed / "transportlib").mkdir(parents=True)
    (installed / "transportlib" / "__init__.py").write_text(
        "try:\n    import jax\nexcept ImportError:\n    jax = False\n\n\ndef solve():\n    import tensorflow\n")
    (installed / "transportlib" / "graphs.py").write_text("import torchtext\n")
    (repo / "uses.py").write_text("import transportlib\n")
    missing_imports.cache_clear()
    assert missing_imports(str(repo), (str(installed),)) == ("paperproof_absent_needed", "torchtext")
