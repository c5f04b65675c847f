"""Per-repository environments: declared requirements read without running code, wheels installed by uv.

The registry here is a folder of wheels we build in the test (uv offline, `--find-links`), so the
test asks no index for anything and installs only what it made.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest

from paperproof.runner import environment, torch_builds
from paperproof.runner.environment import declared, prepare, uv_binary, wanted
from paperproof.verify.checkout import verify_path

pytestmark = pytest.mark.skipif(uv_binary() is None, reason="uv is not installed")


def make_wheel(folder: Path, name: str, version: str, code: str, module: str | None = None,
               top_level: str | None = None, requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel of one package (`module`, by default the distribution's name), with a RECORD that checks,
    a `top_level.txt` where one is given, and the requirements named."""
    dist = name.replace("-", "_")
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{module or dist}/__init__.py": code.encode(),
             f"{dist}-{version}.dist-info/METADATA": metadata.encode(),
             f"{dist}-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: paperproof-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    if top_level is not None:
        files[f"{dist}-{version}.dist-info/top_level.txt"] = top_level.encode()
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


def test_hostile_declarations_are_read_inside_the_checkout_bounded_and_never_expanded(tmp_path):
    """A requirements file linked to a credentials file, a fifo, a 1 TiB sparse file, a `setup.cfg` whose
    interpolation would expand to gigabytes, a `pyproject.toml` of the wrong shapes or nested past the parser's
    recursion: each is refused or read as text, at once, and nothing of the host comes back."""
    outside = tmp_path / "credentials"
    outside.write_text("aws-secret-paperproof==1.0\n")
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "requirements.txt").symlink_to(outside)
    (repo / "sub" / "requirements.txt").symlink_to("../../credentials")
    os.mkfifo(repo / "requirements-dev.txt")
    with open(repo / "requirements-big.txt", "wb") as sparse:
        sparse.truncate(1 << 40)
    bomb = ["[options]", "a0 = " + "x" * 64] + [f"a{i} = " + f"%(a{i - 1})s" * 8 for i in range(1, 12)]
    (repo / "setup.cfg").write_text("\n".join([*bomb, "install_requires =", "    tqdm>=4 %(a11)s"]) + "\n")
    (repo / "pyproject.toml").write_text('project = "not a table"\ntool = 3\n')
    (repo / "environment.yml").write_text("dependencies:\n  - " + "a" * 100_000 + " " * 100_000 + "!\n  - scipy=1.9\n")
    assert declared(repo) == {"tqdm": ">=4", "scipy": "==1.9"}
    (repo / "pyproject.toml").write_text("project = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert declared(repo) == {"tqdm": ">=4", "scipy": "==1.9"}


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
    # compiled at install: the sandbox cannot write bytecode, so no case compiles the package's sources again
    assert list((Path(env.path) / "paperproof_probe_pkg" / "__pycache__").glob("__init__.cpython-*.pyc"))
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


def _scaled(tmp_path: Path, import_line: str, scale: str, requirements: str | None = None, envs: Path | None = None):
    """The sample of a repository of one function that scales scores by a package's constant, verified with the
    environment made for it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    if requirements:
        (repo / "requirements.txt").write_text(requirements)
    (repo / "scores.py").write_text(f"import numpy as np\n{import_line}\n\n\ndef scaled_scores(scores):\n"
                                    f"    \"\"\"Scores times the package's scale.\"\"\"\n    return {scale} * np.asarray(scores)\n")
    samples = verify_path(repo, everything=True, workers=1, environments=envs or tmp_path / "envs")
    return {s.qualname: s for s in samples}["scaled_scores"]


def test_a_package_installed_for_the_repository_whose_import_raises_is_named_with_its_error(tmp_path, offline_index):
    make_wheel(offline_index, "paperproof-probe-broken", "1.0", "raise RuntimeError('operator probe::nms does not exist')\n")
    sample = _scaled(tmp_path, "import paperproof_probe_broken", "paperproof_probe_broken.SCALE")
    assert sample.status == "unverified"
    assert ("could not be defined: ImportError: paperproof_probe_broken is installed for this repository, but importing "
            "it raised RuntimeError: operator probe::nms does not exist") in sample.reason, sample.reason
    assert "not installed" not in sample.reason


def test_a_pinned_release_that_does_not_import_is_replaced_by_the_newest_that_does(tmp_path, offline_index):
    make_wheel(offline_index, "paperproof-probe-old", "1.0", "raise ImportError(\"cannot import name 'ComplexWarning'\")\n")
    make_wheel(offline_index, "paperproof-probe-old", "2.0", "SCALE = 2\n")
    sample = _scaled(tmp_path, "import paperproof_probe_old", "paperproof_probe_old.SCALE", "paperproof-probe-old==1.0\n")
    assert sample.status == "ran", sample.reason
    assert any("paperproof-probe-old==2.0" in n for n in sample.notes)
    assert ("paperproof-probe-old: the repository asks for ==1.0; installed the newest release that resolves beside "
            "the runner's packages (the one asked for was installed, but did not import beside them) instead.") in sample.notes


@pytest.mark.parametrize("relative", [False, True])  # `--environments` as the default gives it: relative to here
def test_an_unpinned_package_whose_newest_release_lacks_a_name_the_code_imports_is_held_to_the_release_before(
        tmp_path, offline_index, monkeypatch, relative):
    make_wheel(offline_index, "paperproof-probe-moved", "1.4", "class OldExtractor:\n    SCALE = 3\n")
    make_wheel(offline_index, "paperproof-probe-moved", "2.0", "class NewProcessor:\n    SCALE = 3\n")
    monkeypatch.chdir(tmp_path)
    sample = _scaled(tmp_path, "from paperproof_probe_moved import OldExtractor", "OldExtractor.SCALE",
                     envs=Path("envs") if relative else None)
    assert sample.status == "ran", sample.reason
    assert ("paperproof-probe-moved: its newest release lacks a name the code imports; installed "
            "paperproof-probe-moved==1.4, the newest paperproof-probe-moved<2: the code is older than the newest "
            "release.") in sample.notes


def test_an_import_named_otherwise_is_resolved_from_the_declared_requirements_own_wheels(tmp_path, offline_index):
    """`import probe_renamed` whose distribution is paperproof-probe-named (as `import yaml` is PyYAML's): the
    declared requirements are installed alone, their RECORD or top_level.txt read, and only those that provide an
    import go into the environment; no table holds these names."""
    make_wheel(offline_index, "paperproof-probe-named", "1.0", "SCALE = 5\n", module="probe_renamed")
    make_wheel(offline_index, "paperproof-probe-listed", "1.0", "SCALE = 7\n", module="probe_listed", top_level="probe_listed\n")
    make_wheel(offline_index, "paperproof-probe-unused", "1.0", "SCALE = 9\n", module="probe_unused")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("paperproof-probe-named==1.0\npaperproof_probe_listed\npaperproof-probe-unused\n")
    (repo / "scores.py").write_text(textwrap.dedent('''
        import numpy as np
        import probe_listed
        from probe_renamed import SCALE


        def scaled_scores(scores):
            """Scores times both packages' scales."""
            return SCALE * probe_listed.SCALE * np.asarray(scores)
    '''))
    assert not {"probe_renamed", "probe_listed"} & set(environment.DISTRIBUTIONS)
    env = prepare(repo, tmp_path / "envs")
    assert env.installed == ["paperproof-probe-listed==1.0", "paperproof-probe-named==1.0"], env.not_installed
    assert env.provides == {"probe_listed": "paperproof-probe-listed", "probe_renamed": "paperproof-probe-named"}
    assert ("Imports resolved: probe_listed from paperproof-probe-listed (declared, by its wheel's top_level.txt); "
            "probe_renamed from paperproof-probe-named (declared, by its wheel's RECORD).") in env.notes
    sample = {s.qualname: s for s in verify_path(repo, everything=True, workers=1, environments=tmp_path / "envs")}["scaled_scores"]
    assert sample.status == "ran", sample.reason
    assert any("from wheels: paperproof-probe-listed==1.0, paperproof-probe-named==1.0." in n for n in sample.notes)
    assert not any("stand-in" in n for n in sample.notes), sample.notes


def test_an_import_no_declaration_provides_falls_back_to_the_table_then_its_own_name_and_a_wrong_guess_is_said(
        tmp_path, offline_index, monkeypatch):
    make_wheel(offline_index, "paperproof-probe-tabled", "1.0", "SCALE = 2\n", module="probe_tabled")
    make_wheel(offline_index, "probe-guessed", "1.0", "SCALE = 3\n", module="something_else")  # a name squatter
    make_wheel(offline_index, "paperproof-probe-other", "1.0", "SCALE = 4\n", module="probe_other")
    monkeypatch.setattr(environment, "DISTRIBUTIONS", {"probe_tabled": "paperproof-probe-tabled"})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("paperproof-probe-other\n")  # declared, and provides neither import
    (repo / "scores.py").write_text("import probe_tabled\nimport probe_guessed\n")
    env = prepare(repo, tmp_path / "envs")
    assert env.installed == ["paperproof-probe-tabled==1.0", "probe-guessed==1.0"]
    assert env.notes == [
        "Imports resolved: probe_tabled from paperproof-probe-tabled (the fallback table: no declared requirement "
        "provides it).",
        "probe_guessed: probe-guessed was installed for it (its own name), but its wheel provides no module probe_guessed."]


def test_a_package_that_depends_on_the_cuda_tensorflow_never_brings_it_in(tmp_path, offline_index):
    """The index here has no tensorflow at all: resolving the package with its dependency would fail, and does not."""
    make_wheel(offline_index, "paperproof-probe-keraslike", "1.0", "SCALE = 2\n", requires=("tensorflow>=2", "tensorflow-gpu"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "scores.py").write_text("import paperproof_probe_keraslike\n")
    env = prepare(repo, tmp_path / "envs")
    assert env.installed == ["paperproof-probe-keraslike==1.0"] and env.not_installed == {}


def test_a_failed_import_names_the_distribution_to_install_again():
    from paperproof.runner.environment import broken_imports

    said = ("ImportError: sklearn is installed for this repository, but importing it raised ImportError: x; "
            "seaborn.cm is installed for this repository, but importing it raised AttributeError: y")
    assert broken_imports(said) == {"scikit-learn", "seaborn"}
    assert broken_imports("sklearn is installed in the runner, but importing it raised ImportError") == frozenset()


# --- frameworks tied to the runner: torchvision and torchaudio to its torch, jax to its numpy ---------------


def test_the_torch_extension_release_is_the_one_built_for_the_runners_torch():
    assert torch_builds.matching("torchvision", "2.13.0+cpu") == "==0.28.*"
    assert torch_builds.matching("torchvision", "2.4.1") == "==0.19.*"
    assert torch_builds.matching("torchvision", "1.13.1") == "==0.14.*"
    assert torch_builds.matching("torchaudio", "2.13.0+cpu") == "==2.13.*"
    assert torch_builds.matching("torchtext", "2.13.0") is None and torch_builds.matching("torchvision", "") is None


def test_frameworks_tied_to_the_runner_are_wanted_as_it_needs_not_as_pinned(tmp_path):
    (tmp_path / "requirements.txt").write_text("torchvision==0.8.2\njax==0.2.17\nflax\n")
    (tmp_path / "model.py").write_text("import torchvision\nimport torchaudio\nimport jax\nimport flax\nimport torchtext\n"
                                       "import tensorflow\nimport keras\nimport mxnet\n")
    notes: list[str] = []
    want, refuse = wanted(tmp_path, {"torch": "2.13.0+cpu", "numpy": "2.4.6"}, notes)
    assert want == {"torchvision": "==0.28.*", "torchaudio": "==2.13.*", "jax": "[cpu]", "flax": "",
                    "tensorflow-cpu": ""}
    assert refuse == {"torchtext": "built against one torch release, and none is known to match the runner's torch 2.13.0+cpu",
                      "mxnet": "a framework too large to install per repository"}
    assert notes == ["jax: the repository asks for jax==0.2.17; installed the newest jax that runs beside the runner's "
                     "numpy 2.4.6 instead.",
                     "torchvision: the repository asks for ==0.8.2; installed the release built for the runner's torch "
                     "2.13.0+cpu instead."]
    (tmp_path / "requirements.txt").write_text("tensorflow-gpu==1.15\nkeras==2.3.1\n")
    notes = []
    assert wanted(tmp_path, {"torch": "2.13.0+cpu", "numpy": "2.4.6"}, notes)[0]["tensorflow-cpu"] == ""
    assert notes == ["keras: the repository asks for keras==2.3.1; installed the newest tensorflow-cpu that runs beside "
                     "the runner's numpy 2.4.6 instead.",
                     "tensorflow: the repository asks for tensorflow-gpu==1.15; installed the newest tensorflow-cpu that "
                     "runs beside the runner's numpy 2.4.6 instead."]
    notes = []
    assert "tensorflow-cpu" not in wanted(tmp_path, {"torch": "2.13.0+cpu", "numpy": "2.4.6", "tensorflow-cpu": "2.21.0"},
                                          notes)[0] and notes == []  # a runner with the `tensorflow` extra has its own
    assert wanted(tmp_path, {"numpy": "2.4.6"})[1]["torchvision"] == "built against torch, which the runner lacks"


def test_an_extensions_compiled_library_that_needs_a_cuda_torch_is_found_unloadable_from_its_elf(tmp_path):
    torch_lib = torch_builds.runner_torch_libraries()
    assert torch_lib is not None and torch_builds.elf_needed(torch_lib / "libtorch.so") == ["libtorch_cpu.so"]
    assert torch_builds.elf_needed(tmp_path / "absent.so") is None
    package = tmp_path / "env" / "torchvision"
    (package / "ops").mkdir(parents=True)
    (package / "ops" / "boxes.py").write_text("import torch\ndef nms(b, s, t):\n    return torch.ops.torchvision.nms(b, s, t)\n"
                                              "def _grad(x):\n    return torch.ops.torchvision._nms_backward(x)\n")
    os.symlink(torch_lib / "libtorch.so", package / "_C.so")  # an ELF that needs libtorch_cpu.so
    assert torch_builds.unloadable(package, torch_lib) == ([], [])
    lacking = tmp_path / "cpu-lib"  # a torch without the library it needs, as a CPU torch lacks libtorch_cuda.so
    lacking.mkdir()
    assert torch_builds.unloadable(package, lacking) == (["_C.so"], ["libtorch_cpu.so"])
    line = torch_builds.note(tmp_path / "env", "torchvision==0.28.0", "2.13.0+cpu", lacking)
    assert line is not None and line.startswith("torchvision 0.28.0 with its compiled ops missing: nms (_C.so need "
                                                "libtorch_cpu.so, from a CUDA torch; the runner's torch is 2.13.0+cpu)")
    assert torch_builds.note(tmp_path / "env", "torchvision==0.28.0", "2.13.0+cpu", torch_lib) is None


@lru_cache(maxsize=1)
def _registry_reachable() -> bool:
    uv = uv_binary()
    try:
        done = subprocess.run([uv, "pip", "compile", "-", "--no-header", "-q", "--python-version", "3.11"], input="pillow\n",
                              capture_output=True, text=True, timeout=60) if uv else None
    except subprocess.TimeoutExpired:
        return False
    return done is not None and done.returncode == 0


needs_registry = pytest.mark.skipif("not _registry_reachable()", reason="the package registry is not reachable")

CHILD_IMPORT = textwrap.dedent("""
    import json, sys
    sys.path.append(sys.argv[1])  # as the sandbox child does (runner.child._define)
    from paperproof.fixtures import stubs
    stubs.install([])
    exec(sys.argv[2])
""")


@needs_registry
def test_torchvision_from_the_registry_imports_beside_the_runners_torch_with_its_missing_ops_noted(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("torchvision==0.8.2\n")
    (repo / "model.py").write_text("import torchvision\nimport torchvision.transforms as T\n")
    env = prepare(repo, Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs")))
    assert env.path is not None and any(p.startswith("torchvision==0.28.") for p in env.installed), env.not_installed
    assert any(n.startswith("torchvision 0.28.") and "compiled ops missing: " in n and "nms" in n for n in env.notes), env.notes
    code = textwrap.dedent("""
        import torch, torchvision, torchvision.transforms as T, torchvision.datasets
        model = torchvision.models.resnet18().eval()
        out = {"shape": list(model(torch.zeros(1, 3, 64, 64)).shape),
               "flip": list(T.RandomHorizontalFlip(1.0)(torch.arange(4.0).view(1, 1, 4)).flatten().tolist())}
        try:
            torchvision.ops.nms(torch.rand(3, 4), torch.rand(3), 0.5)
        except ModuleNotFoundError as exc:
            out["nms"] = exc.name
        print(json.dumps(out))
    """)
    done = subprocess.run([sys.executable, "-c", CHILD_IMPORT, env.path, code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"shape": [1, 1000], "flip": [3.0, 2.0, 1.0, 0.0], "nms": "torchvision._C"}


@needs_registry
def test_jax_and_flax_from_the_registry_run_on_the_cpu_beside_the_runners_numpy(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "model.py").write_text("import jax\nimport jax.numpy as jnp\nimport flax.linen as nn\n")
    env = prepare(repo, Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs")))
    names = {p.split("==")[0] for p in env.installed}
    assert {"jax", "jaxlib", "flax"} <= names and "numpy" not in names, (env.installed, env.not_installed)
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp, numpy, flax.linen as nn
        layer = nn.Dense(2)
        params = layer.init(jax.random.PRNGKey(0), jnp.ones((1, 3)))
        print(json.dumps({"ones": jnp.ones(3).tolist(), "device": jax.devices()[0].platform,
                          "dense": list(layer.apply(params, jnp.ones((1, 3))).shape), "numpy": numpy.__file__}))
    """)
    done = subprocess.run([sys.executable, "-c", CHILD_IMPORT, env.path, code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["ones"] == [1.0, 1.0, 1.0] and out["device"] == "cpu" and out["dense"] == [1, 2]
    assert not out["numpy"].startswith(env.path)  # the runner's numpy
    assert any(n.startswith("JAX runs for real: jax==") and "jaxlib==" in n and "(jax[cpu]" in n for n in env.notes)


@needs_registry
def test_imports_named_otherwise_come_from_the_declared_requirements_wheels_on_the_registry(tmp_path):
    """`dotenv` is python-dotenv's and `slugify` python-slugify's: neither name is in a table, and both are
    found in the wheels of what the repository declares; `bs4`, which it does not declare, comes from the fallback
    table; termcolor, declared and never imported, is not installed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("python-dotenv>=1.0\npython-slugify\ntermcolor\n")
    (repo / "tool.py").write_text("import dotenv\nfrom slugify import slugify\nimport bs4\n")
    assert not {"dotenv", "slugify"} & set(environment.DISTRIBUTIONS)
    env = prepare(repo, Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs")))
    names = {p.split("==")[0] for p in env.installed}
    assert {"python-dotenv", "python-slugify", "text-unidecode", "beautifulsoup4", "soupsieve"} <= names, env.not_installed
    assert "termcolor" not in names
    (line,) = [n for n in env.notes if n.startswith("Imports resolved: ")]
    assert line.startswith("Imports resolved: bs4 from beautifulsoup4 (the fallback table: no declared requirement "
                           "provides it); dotenv from python-dotenv (declared, by its wheel's "), line
    assert "; slugify from python-slugify (declared, by its wheel's " in line
    code = textwrap.dedent("""
        import bs4, dotenv, slugify
        print(json.dumps([slugify.slugify("Data Maps!"), bs4.BeautifulSoup("<b>x</b>", "html.parser").b.text,
                          dotenv.__file__.startswith(sys.argv[1])]))
    """)
    done = subprocess.run([sys.executable, "-c", CHILD_IMPORT, env.path, code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["data-maps", "x", True]


@pytest.mark.slow  # tensorflow-cpu is 261 MB to fetch the first time; each case imports it afresh in the sandbox
@needs_registry
def test_a_checkout_importing_tensorflow_runs_its_entry_for_real_in_the_sandbox_on_tensorflow_cpu(tmp_path):
    envs = Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs"))
    sample = _scaled(tmp_path, "import tensorflow as tf", "float(tf.reduce_sum(tf.ones([2])).numpy())",
                     "tensorflow==1.15.0\n", envs=envs)
    assert sample.status == "ran", sample.reason
    assert any(n.startswith("TensorFlow runs for real: tensorflow-cpu==") and "with keras==" in n for n in sample.notes), \
        sample.notes
    assert ("tensorflow: the repository asks for tensorflow==1.15.0; installed the newest tensorflow-cpu that runs beside "
            "the runner's numpy") in " ".join(sample.notes)
    assert not any("stand-in" in n for n in sample.notes), sample.notes
    assert not any(n.split("==")[0] in environment.CUDA_BUILDS for n in prepare(tmp_path / "repo", envs).installed)
