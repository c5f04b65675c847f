"""Stand-in modules for imports the runner lacks: found from the checkout with ast, given only to those."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from paperproof.fixtures.stubs import missing_imports


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
    out = __import__("json").loads(done.stdout)
    assert out["subclass"] == 3
    assert out["call"][0] == "absent_fw" and out["call"][1].startswith("needs absent_fw, which is not installed")
    assert out["chain"] == "absent_fw" and out["unlisted"] == "other_absent"
