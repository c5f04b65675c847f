"""Per-repository environments: declared requirements read without running code, wheels installed by uv.

The registry here is a folder of wheels we build in the test (uv offline, `--find-links`), so the
test asks no index for anything and installs only what it made.
"""

from __future__ import annotations

import base64
import hashlib
import textwrap
import zipfile
from pathlib import Path

import pytest

from paperproof.runner.environment import declared, prepare, uv_binary
from paperproof.verify.checkout import verify_path

pytestmark = pytest.mark.skipif(uv_binary() is None, reason="uv is not installed")


def make_wheel(folder: Path, name: str, version: str, code: str) -> Path:
    """A pure-Python wheel of one module, with a RECORD that checks."""
    dist = name.replace("-", "_")
    files = {f"{dist}/__init__.py": code.encode(),
             f"{dist}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{dist}-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: paperproof-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
              for path, data in files.items()]
    record.append(f"{dist}-{version}.dist-info/RECORD,,")
    files[f"{dist}-{version}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, data in files.items():
            wheel.writestr(member, data)
    return path


def test_declared_requirements_are_read_from_every_declaration_and_never_from_setup_py(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy==1.19.1\n# a comment\nscikit_learn>=0.24, <1.0\n-e .\ngit+https://x/y\n")
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    tqdm>=4\n")
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["Augly[image]==1.0.0"]\n')
    (tmp_path / "environment.yml").write_text("dependencies:\n  - python=3.8\n  - cleanlab=2.0\n  - pip:\n    - aum==1.0.2\n")
    (tmp_path / "setup.py").write_text("raise SystemExit('setup.py must never run')\ninstall_requires=['evil']\n")
    assert declared(tmp_path) == {"numpy": "==1.19.1", "scikit-learn": ">=0.24,<1.0", "tqdm": ">=4",
                                  "augly": "==1.0.0", "cleanlab": "==2.0", "aum": "==1.0.2"}


@pytest.fixture()
def offline_index(tmp_path, monkeypatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "paperproof-probe-pkg", "1.0", "VALUE = 42\n\ndef triple(x):\n    return 3 * x\n")
    make_wheel(wheels, "paperproof-probe-pkg", "2.0", "VALUE = 84\n\ndef triple(x):\n    return 3 * x\n")
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_FIND_LINKS", str(wheels))
    monkeypatch.setenv("UV_NO_INDEX", "1")
    return wheels


def test_missing_imports_are_installed_as_declared_cached_and_the_rest_left_to_stand_ins(tmp_path, offline_index):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("paperproof-probe-pkg==1.0\n")
    (repo / "scores.py").write_text(textwrap.dedent("""
        import numpy as np
        import paperproof_probe_pkg
        import paperproof_absent_nowhere
    """))
    cache = tmp_path / "envs"
    env = prepare(repo, cache)
    assert env.installed == ["paperproof-probe-pkg==1.0"]
    assert (Path(env.path) / "paperproof_probe_pkg" / "__init__.py").read_text().startswith("VALUE = 42")
    assert env.not_installed == {"paperproof-absent-nowhere": "no wheel resolves beside the runner's packages"}
    assert not any(p.name.startswith(".") for p in cache.iterdir())  # nothing half-built is left
    again = prepare(repo, cache)
    assert (again.path, again.installed) == (env.path, env.installed)


def test_a_verified_checkout_runs_with_its_environment_and_its_page_says_which(tmp_path, offline_index):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "scores.py").write_text(textwrap.dedent('''
        import numpy as np
        import paperproof_probe_pkg
        import paperproof_absent_nowhere


        def tripled_scores(scores):
            """Scores times three, by the installed package."""
            return paperproof_probe_pkg.triple(np.asarray(scores))


        def absent_scores(scores):
            return paperproof_absent_nowhere.score(scores)
    '''))
    samples = {s.qualname: s for s in verify_path(repo, everything=True, workers=1, environments=tmp_path / "envs")}
    assert samples["tripled_scores"].status == "ran", samples["tripled_scores"].reason
    assert "needs module paperproof_absent_nowhere" in samples["absent_scores"].reason
    notes = samples["tripled_scores"].notes
    assert any("installed for this repository from wheels: paperproof-probe-pkg==2.0" in n for n in notes)
    assert any("stand-in modules: paperproof_absent_nowhere" in n for n in notes)
