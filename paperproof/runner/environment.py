"""A cached environment per repository: the packages its code imports that the runner lacks, from wheels.

Real repositories import what the sandbox does not have (`augly`, `cleanlab`, `torchvision`). Before
the sandbox, and outside it, we read what the repository declares (`requirements*.txt`, `setup.cfg`,
`pyproject.toml`, `environment.yml`; never `setup.py`, which would run its code) and what its files
import (`fixtures.stubs.missing_imports`), resolve those against the runner's own packages with `uv`
(wheels only: no build script of any package runs), and install the packages the runner lacks into
a folder keyed by the resolved set, compiled to bytecode there (the compiler reads the wheels' sources and runs
none of them). The sandbox sees that folder read-only, after the runner's own packages, so numpy, pandas and
torch stay the runner's, and no case compiles a package's sources again: it cannot write bytecode, and without it
TensorFlow's import costs a case 11 s of CPU instead of 4 to 5 s. A framework we do not install (too large
for the machine) or that does not resolve is left to a stand-in module, and the sample says so.

Some frameworks are tied to the runner rather than to the repository's pins. torchvision and
torchaudio are built against one torch: the release matching the runner's torch is installed
(`torch_builds.matching`), never torch itself; where the registry's build links a CUDA torch, its
compiled ops cannot load beside the runner's CPU one and the environment's `notes` name them (its
Python parts still import: `fixtures.stubs.declare_unloadable_ops`). TensorFlow, Keras, JAX and Flax run on
the CPU from the registry's CPU wheels (`tensorflow-cpu`, never the CUDA `tensorflow` build, which no
resolution may pull in; `jax[cpu]`), in the newest release that resolves beside the runner's numpy (an old
pinned TensorFlow or jaxlib is built against a numpy the runner does not have).

An import whose name is no distribution's (`yaml`, `bs4`, `cv2`) is resolved from the repository's own
declarations: the declared requirements the runner lacks are installed (their wheels only, in a scratch
folder) and their `.dist-info` says which import names each provides (`runner.import_names`). The table
`DISTRIBUTIONS` is the last resort, for an import no declared requirement provides; the notes say which way
each import was resolved.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from paperproof.catalogue import checkout
from paperproof.fixtures.stubs import ENVIRONMENT_MARK, missing_imports
from paperproof.plumbing import host_process
from paperproof.plumbing.files import write_atomic
from paperproof.runner import import_names, torch_builds
from paperproof.runner.import_names import normalise

ENV_VERSION = "3"  # 3: bytecode compiled at install
# Never installed per repository: the size of the machine, or the runner's own (torch).
TOO_LARGE = frozenset({"mxnet", "paddlepaddle", "cupy", "torch", "pytorch", "deepspeed", "vllm", "apex", "flash-attn",
                       "detectron2"})
# Built against one torch release: the one matching the runner's torch is installed where there is a rule
# for it (`torch_builds.matching`); the others are not.
TORCH_BUILT = frozenset({"torchvision", "torchaudio", "torchtext", "torchdata", "torch-scatter", "torch-sparse"})
# Frameworks by import name: the CPU wheels installed for a repository that imports one, as (distribution, extras),
# in the newest release that resolves beside the runner's numpy, whatever the repository pins. Keras 3 runs on
# TensorFlow here (tensorflow-cpu brings it); jax[cpu] adds the CPU jaxlib.
CPU_WHEELS: dict[str, tuple[tuple[str, str], ...]] = {
    "tensorflow": (("tensorflow-cpu", ""),), "keras": (("tensorflow-cpu", ""),),
    "jax": (("jax", "[cpu]"),), "jaxlib": (("jax", "[cpu]"),), "flax": (("flax", ""), ("jax", "[cpu]")),
}
FRAMEWORK_DISTRIBUTIONS = frozenset({"tensorflow-cpu", "keras", "tf-keras", "jax", "jaxlib", "flax"})
# Builds no resolution may bring in (a package that depends on `tensorflow` gets tensorflow-cpu's, when the code
# imports tensorflow, else a stand-in): the CUDA TensorFlow and its variants, each hundreds of MB more.
CUDA_BUILDS = ("tensorflow", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos", "tf-nightly", "tf-nightly-gpu")
# The last resort for an import name no declared requirement provides (`import_names` reads the declared ones'
# wheels): the distributions such imports usually come from.
DISTRIBUTIONS = {
    "cv2": "opencv-python-headless", "PIL": "pillow", "sklearn": "scikit-learn", "skimage": "scikit-image",
    "yaml": "pyyaml", "bs4": "beautifulsoup4", "_jsonnet": "jsonnet", "Bio": "biopython", "attr": "attrs",
    "dateutil": "python-dateutil", "google": "protobuf", "faiss": "faiss-cpu", "Levenshtein": "levenshtein",
    "paddle": "paddlepaddle",
}
# A requirement line (stripped, at most MAX_LINE long): each part is told from the next by a character the part before
# cannot hold, so no match backtracks; a version is version characters only (`==1.0@file:///x` keeps `==1.0`).
REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*((?:===|[<>=!~]=?)\s*[\w.*+!-]+(?:\s*,\s*(?:===|[<>=!~]=?)\s*[\w.*+!-]+)*)?")
CONDA_ENTRY = re.compile(r"-\s+([A-Za-z0-9][A-Za-z0-9._-]*)(?:\s*(==?\s*[\w.*]+))?")
MAX_LINE = 1024  # characters of a requirement line: a longer one is no requirement, and is not looked at
MAX_DECLARATION_BYTES = 256 * 1024  # of one declaration file
MAX_DECLARATION_ENTRIES = 20_000  # entries of the root and its folders looked at for declarations


def declared(root: Path) -> dict[str, str]:
    """Requirement name -> version specifier ('' when unpinned), from the repository's declarations, each read
    through the checkout's guard (inside it, regular files, capped) and parsed without interpolation."""
    lines: list[str] = []
    walked = checkout.Walk(skipped=[])
    files = list(checkout.walk(root, walked, max_depth=1, max_entries=MAX_DECLARATION_ENTRIES))
    for rel in files:
        folder, _, name = rel.rpartition("/")
        if name.startswith("requirements") and name.endswith(".txt") and "doc" not in folder.lower():
            lines.extend(_lines(root, rel))
    if "setup.cfg" in files:
        parser = configparser.RawConfigParser(strict=False)  # no interpolation: `%(x)s` is text, never expanded
        try:
            parser.read_string(_read(root, "setup.cfg"))
            lines.extend(parser.get("options", "install_requires", fallback="").splitlines())
        except configparser.Error:
            pass
    if "pyproject.toml" in files:
        try:
            data = tomllib.loads(_read(root, "pyproject.toml"))
        except (tomllib.TOMLDecodeError, RecursionError, MemoryError):  # arrays nested 100,000 deep recurse
            data = {}
        project, tool = data.get("project"), data.get("tool")
        dependencies = project.get("dependencies", []) if isinstance(project, dict) else []
        poetry = tool.get("poetry", {}).get("dependencies", {}) if isinstance(tool, dict) else {}
        lines.extend(str(d) for d in dependencies if isinstance(d, str))
        lines.extend(name for name in (poetry if isinstance(poetry, dict) else {}) if name.lower() != "python")
    for name in ("environment.yml", "environment.yaml"):
        if name in files:  # conda and pip entries alike: `- name=1.2` or `- name==1.2`
            lines.extend(filter(None, map(_conda_entry, _lines(root, name))))
    out: dict[str, str] = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or len(line) > MAX_LINE or line.startswith(("-", "git+", "http", ".", "/")):
            continue
        match = REQUIREMENT.match(line)
        if match:
            out[normalise(match.group(1))] = (match.group(3) or "").replace(" ", "")
    return out


def _conda_entry(line: str) -> str | None:
    """`- name=1.2` (conda) or `- name==1.2` (pip) as a requirement line; None for anything else."""
    line = line.strip()
    match = CONDA_ENTRY.fullmatch(line) if len(line) <= MAX_LINE else None
    if not match or match.group(1).lower() in ("pip", "python"):
        return None
    spec = (match.group(2) or "").replace(" ", "")
    return match.group(1) + ("=" + spec if spec.startswith("=") and not spec.startswith("==") else spec)


def _read(root: Path, rel: str) -> str:
    """A declaration file's text: read inside the checkout only (no link out, no fifo, no device), capped."""
    try:
        return checkout.read_text(root, rel, MAX_DECLARATION_BYTES)
    except checkout.Refused:
        return ""


def _lines(root: Path, rel: str) -> list[str]:
    return _read(root, rel).splitlines()


@dataclass
class Environment:
    """What a repository's runs get besides the runner: `path` (None when nothing was installed), the
    packages in it as name==version, the imports left to stand-ins with why, and `notes` on what was
    installed otherwise than asked (a torchvision whose compiled ops are missing, a pin not followed)."""

    path: str | None = None
    installed: list[str] = field(default_factory=list)
    not_installed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what of the installed packages works partly, and why
    provides: dict[str, str] = field(default_factory=dict)  # import name -> the installed distribution providing it

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,) if self.path else ()

    def describe(self) -> list[str]:
        notes = []
        if self.installed:
            notes.append("Ran with packages installed for this repository from wheels: " + ", ".join(self.installed) + ".")
        notes.extend(self.notes)
        for name, why in sorted(self.not_installed.items()):
            notes.append(f"needs {name}, not installed: {why}.")
        return notes


def uv_binary() -> str | None:
    """uv beside this interpreter, else on the absolute entries of PATH (a relative entry may be the checkout)."""
    here = Path(sys.executable).parent / "uv"
    return str(here) if here.is_file() else shutil.which("uv", path=host_process.environment()["PATH"])


# Every uv command: no configuration file of any folder or user, the runner's interpreter named, no interpreter
# downloaded, and (through `host_process`) a scratch working folder and no capability.
UV_ISOLATED = ("--no-config", "--python", sys.executable, "--no-python-downloads")


def _uv(uv: str, command: list[str], folder: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return host_process.run([uv, "pip", *command[:1], *UV_ISOLATED, *command[1:]], folder, timeout=timeout,
                            extra={"UV_NO_CONFIG": "1", "UV_PYTHON_DOWNLOADS": "never"})


def _runner_packages(uv: str) -> dict[str, str]:
    with host_process.scratch() as folder:
        done = _uv(uv, ["freeze"], folder, timeout=60)
    found = {}
    for line in done.stdout.splitlines():
        if "==" in line:
            name, version = line.split("==", 1)
            found[normalise(name)] = version.strip()
    return found


# How the sandbox names an installed package whose import failed (`fixtures.stubs._broken`).
# Over a sample's record (its text is the sample's to choose): a name is at most 200 characters, so a failed match
# scans at most that far from each start.
BROKEN = re.compile(r"\b([A-Za-z_][\w.]{0,200}) is installed for this repository, but importing it raised")


def broken_imports(text: str, env: Environment | None = None) -> frozenset[str]:
    """The distributions a run's record says are installed for the repository but fail to import there."""
    return frozenset(_distribution(m, env) for m in BROKEN.findall(text))


def _distribution(module: str, env: Environment | None = None) -> str:
    """The distribution a module named in an error comes from (`sklearn.utils` → scikit-learn): the one installed
    for the repository that provides it, by its wheel's metadata, else the fallback table, else its own name."""
    top = module.split(".")[0]
    if env is not None and top in env.provides:
        return env.provides[top]
    return normalise(DISTRIBUTIONS.get(top, top))


# `from transformers import ViTFeatureExtractor` where the release installed no longer has it.
LACKING = re.compile(r"cannot import name '(\w{1,200})' from '([\w.]{1,200})' \(([^)]{0,4096})\)")


def lacking_names(text: str, env: Environment) -> dict[str, str]:
    """distribution -> the specifier of its releases before the one installed for the repository, for each package
    installed unpinned there whose release lacks a name the code imports (code older than the newest release)."""
    if env.path is None:
        return {}
    versions = {normalise(pin.split("==")[0]): pin.split("==")[1] for pin in env.installed if "==" in pin}
    out = {}
    for _name, module, path in LACKING.findall(text):
        dist = _distribution(module, env)
        version = versions.get(dist, "")
        release = [int(p) for p in re.findall(r"\d+", version)[:2]]
        if not path.startswith(env.path + os.sep) or not release or (release[0] == 0 and len(release) < 2):
            continue
        out[dist] = f"<{release[0]}" if release[0] else f"<0.{release[1]}"  # the releases before this major one
    return out


def undeclared(root: Path, runner: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """(the missing imports that neither a framework rule nor a declared requirement of the same name covers, the
    declared requirements the runner lacks that may provide them: distribution -> specifier). Frameworks, builds
    tied to torch and CUDA builds are never among the latter: they are installed only where the code imports them."""
    pins = declared(root)
    never = TOO_LARGE | TORCH_BUILT | FRAMEWORK_DISTRIBUTIONS | frozenset(CUDA_BUILDS)
    named = {normalise(m) for m in missing_imports(str(root))}
    missing = [m for m in missing_imports(str(root)) if m not in CPU_WHEELS and normalise(m) not in pins and normalise(m) not in never]
    candidates = {d: s for d, s in pins.items() if d not in runner and d not in never and d not in named}
    return missing, candidates


def wanted(root: Path, runner: dict[str, str], notes: list[str] | None = None,
           unpinned: frozenset[str] = frozenset(), older: dict[str, str] | None = None,
           provided: dict[str, list[tuple[str, str]]] | None = None,
           ways: dict[str, tuple[str, str]] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """(distribution -> specifier to install, import -> why not) for the imports the runner lacks.
    An import is a framework's (`CPU_WHEELS`), a declared requirement's of the same name, one a declared requirement
    provides (`provided`: import -> [(distribution, the metadata file that says so)], read from its wheel), else the
    fallback table's, else its own name; `ways` gets, per import, its distribution and which of these it was.
    A repository's pin not followed (a framework tied to the runner; a pinned release that was installed and did
    not import beside the runner's packages, named in `unpinned`) gets a line in `notes`, as does a package held
    to the releases before the one that lacked a name the code imports (`older`: distribution -> specifier)."""
    pins = declared(root)
    want, refuse = {}, {}
    ways = {} if ways is None else ways
    torch = runner.get("torch", "")
    for module in missing_imports(str(root)):
        if module in CPU_WHEELS:
            added = {dist: extras for dist, extras in CPU_WHEELS[module] if dist not in runner}
            want.update(added)
            main = CPU_WHEELS[module][0][0]
            names = (normalise(module), main, *(CUDA_BUILDS if main == "tensorflow-cpu" else ()))
            asked = next((f"{n}{pins[n]}" for n in names if pins.get(n)), "")
            if notes is not None and asked and main in added:
                line = (f"{normalise(module)}: the repository asks for {asked}; installed the newest {main} that runs "
                        f"beside the runner's numpy {runner.get('numpy', '')}".rstrip() + " instead.")
                if line not in notes:
                    notes.append(line)
            continue
        for dist, way in _providers(module, pins, provided or {}):
            ways.setdefault(module, (dist, way))
            if dist in TOO_LARGE:
                refuse[module] = "a framework too large to install per repository"
            elif dist in runner:
                continue
            elif dist in TORCH_BUILT:
                spec = torch_builds.matching(dist, torch) if torch else None
                if spec is None:
                    refuse[module] = (f"built against one torch release, and none is known to match the runner's torch "
                                      f"{torch}" if torch else "built against torch, which the runner lacks")
                else:
                    want[dist] = spec
                    _not_followed(notes, dist, pins, spec, f"the release built for the runner's torch {torch}")
            elif older and dist in older and not pins.get(dist):
                want[dist] = older[dist]  # `prepare` says whether one resolved
            elif dist in unpinned:
                want[dist] = ""
                _not_followed(notes, dist, pins, "", "the newest release that resolves beside the runner's packages (the "
                              "one asked for was installed, but did not import beside them)")
            else:
                want[dist] = pins.get(dist, "")
    return want, refuse


def _providers(module: str, pins: dict[str, str], provided: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """[(distribution, how it was found)] for a missing import: the declared requirement of its name, else the
    declared requirements whose wheels provide it, else the fallback table's, else its own name."""
    own = normalise(module)
    if own in pins:
        return [(own, "declared")]
    if module in provided:
        return [(dist, f"declared, by its wheel's {source}") for dist, source in provided[module]]
    if module in DISTRIBUTIONS:
        return [(normalise(DISTRIBUTIONS[module]), "the fallback table: no declared requirement provides it")]
    return [(own, "its own name: no declared requirement provides it")]


def _not_followed(notes: list[str] | None, dist: str, pins: dict[str, str], spec: str, why: str) -> None:
    if notes is not None and pins.get(dist) and pins[dist] != spec:
        notes.append(f"{dist}: the repository asks for {pins[dist]}; installed {why} instead.")


def _compile(uv: str, requirements: list[str], constraints: list[str], scratch: Path, extra: list[str]) -> list[tuple[str, list[str]]] | None:
    """Resolve with uv; (name==version, the packages that pulled it in) per line, or None when it does not resolve."""
    (scratch / "in.txt").write_text("\n".join(requirements) + "\n")
    (scratch / "constraints.txt").write_text("\n".join(constraints) + "\n")
    (scratch / "excludes.txt").write_text("\n".join(CUDA_BUILDS) + "\n")
    done = _uv(uv, ["compile", str(scratch / "in.txt"), "-c", str(scratch / "constraints.txt"), "--excludes",
                    str(scratch / "excludes.txt"), "--only-binary", ":all:",
                    "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}", "--annotation-style",
                    "line", "--no-header", "-q", *extra], scratch, timeout=300)
    if done.returncode != 0:
        return None
    out = []
    for line in done.stdout.splitlines():
        if "==" not in line or line.startswith("#"):
            continue
        pin, _, via = line.partition("# via")
        parents = [normalise(p.strip()) for p in via.split(",") if p.strip()]
        out.append((pin.strip(), parents))
    return out


def _keep(resolved: list[tuple[str, list[str]]], runner: dict[str, str], roots: set[str]) -> list[str]:
    """The resolved packages the runner lacks that the wanted ones pull in (not those only a runner package
    pulls in, such as a CUDA build's libraries that torch would bring)."""
    parents = {normalise(pin.split("==")[0]): (pin, via) for pin, via in resolved}
    kept: set[str] = {n for n in roots if n in parents}
    changed = True
    while changed:
        changed = False
        for name, (_, via) in parents.items():
            if name in kept or name in runner:
                continue
            if any(p in kept or p.startswith("-r ") or p.endswith("in.txt") for p in via):
                kept.add(name)
                changed = True
    return sorted(parents[n][0] for n in kept if n not in runner)


def _resolve(uv: str, want: dict[str, str], constraints: list[str], scratch: Path, extra: list[str],
             env: Environment, why: dict[str, str] | None = None,
             held: frozenset[str] = frozenset()) -> list[tuple[str, list[str]]]:
    """All wanted packages as declared, if they resolve together; else one at a time, each as declared,
    then unpinned (a package built for the runner's torch only as asked), kept when it still resolves
    with those kept before it; `why` says why one that does not was not installed, where known. Those `held` to
    older releases go first, and only as asked: the rest resolve around them."""
    everything = _compile(uv, sorted(f"{n}{s}" for n, s in want.items()), constraints, scratch, extra)
    if everything is not None:
        return everything
    chosen: list[str] = []
    resolved: list[tuple[str, list[str]]] = []
    for name in sorted(want, key=lambda n: (n not in held, n)):
        tied = name in TORCH_BUILT or name in held
        for requirement in ([f"{name}{want[name]}"] if want[name] else []) + ([] if tied and want[name] else [name]):
            found = _compile(uv, [*chosen, requirement], constraints, scratch, extra)
            if found is not None:
                chosen.append(requirement)
                resolved = found
                break
        else:
            env.not_installed[name] = (why or {}).get(name, "no wheel resolves beside the runner's packages")
    return resolved


def prepare(root: Path, cache: Path, extra: list[str] | None = None,
            unpinned: frozenset[str] = frozenset(), older: dict[str, str] | None = None) -> Environment:
    """The repository's environment, built once per resolved set under `cache` and reused after; the
    distributions in `unpinned` in their newest release that resolves, whatever the repository pins, and those in
    `older` held to the specifier given."""
    uv = uv_binary()
    if uv is None:
        return Environment(not_installed={m: "uv is not installed, so nothing is installed per repository"
                                          for m in missing_imports(str(root))})
    runner = _runner_packages(uv)
    env = Environment()
    missing, candidates = undeclared(root, runner)
    provided = _provided_by(uv, candidates, cache, extra or []) if missing and candidates else {}
    ways: dict[str, tuple[str, str]] = {}
    want, env.not_installed = wanted(root, runner, env.notes, unpinned, older, provided, ways)
    torch = runner.get("torch", "")
    why = {n: f"the registry has no {n}{s} for the runner's torch {torch}" for n, s in want.items() if n in TORCH_BUILT}
    if not want:
        return env
    cache.mkdir(parents=True, exist_ok=True)
    constraints = [f"{n}=={v.split('+', 1)[0]}" for n, v in sorted(runner.items()) if n != "paperproof"]
    with host_process.scratch() as scratch:  # uv's working folder and its inputs: outside the checkout
        asked = json.dumps([ENV_VERSION, sys.version, sorted(want.items()), constraints, extra or []])
        memo = cache / f"resolved-{hashlib.sha256(asked.encode()).hexdigest()[:16]}.json"
        try:  # the resolution of this request before: the registry is asked once per requirement set
            resolved, refused = json.loads(memo.read_text())
            env.not_installed.update(refused)
        except (OSError, ValueError):
            resolved = _resolve(uv, want, constraints, scratch, extra or [], env, why, frozenset(older or ()))
            tmp = memo.with_suffix(f".{os.getpid()}")
            tmp.write_text(json.dumps([resolved, {k: v for k, v in env.not_installed.items() if k in want}]))
            os.replace(tmp, memo)
        pins = _keep(resolved, runner, set(want) - set(env.not_installed))
        for dist, spec in sorted((older or {}).items()):
            held = next((p for p in pins if normalise(p.split("==")[0]) == dist), None)
            env.notes.append(f"{dist}: its newest release lacks a name the code imports; " + (
                f"installed {held}, the newest {dist}{spec}: the code is older than the newest release." if held and
                dist not in env.not_installed else f"no {dist}{spec} resolves beside the runner's packages."))
        if not pins:
            return env
        key = hashlib.sha256("\n".join([ENV_VERSION, sys.version, *pins]).encode()).hexdigest()[:16]
        target = cache / key
        if not (target / ENVIRONMENT_MARK).is_file():
            building = cache / f".{key}-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            done = _uv(uv, ["install", "--target", str(building), "--no-deps", "--only-binary", ":all:", "--compile-bytecode", "-q",
                            *(extra or []), *pins], scratch, timeout=600)
            if done.returncode != 0:
                shutil.rmtree(building, ignore_errors=True)
                env.not_installed.update({n: "its wheels did not install" for n in want if n not in env.not_installed})
                return env
            (building / ENVIRONMENT_MARK).write_text(json.dumps(pins))  # the child knows the folder by it
            try:
                os.rename(building, target)  # atomic: a half-built environment is never used
            except OSError:  # another build made it first
                shutil.rmtree(building, ignore_errors=True)
        env.path, env.installed = str(target), pins
        env.provides = {name: found[0][0] for name, found in import_names.providers(target).items()}
        env.notes.extend(_framework_notes(pins))
        env.notes.extend(_resolution_notes(ways, want, env))
        env.notes.extend(_extension_notes(target, pins, torch))
        return env


def _provided_by(uv: str, candidates: dict[str, str], cache: Path, extra: list[str]) -> dict[str, list[tuple[str, str]]]:
    """import name -> [(declared distribution, the metadata file that says so)]: the declared requirements in
    `candidates` installed alone (no dependency) in a scratch folder and their `.dist-info` read, once per
    requirement set (kept under `cache`). One that installs neither as declared nor unpinned provides nothing."""
    asked = json.dumps([ENV_VERSION, sys.version, sorted(candidates.items()), extra])
    memo = cache / f"provides-{hashlib.sha256(asked.encode()).hexdigest()[:16]}.json"
    try:
        return {name: [(dist, source) for dist, source in found] for name, found in json.loads(memo.read_text()).items()}
    except (OSError, ValueError, AttributeError, TypeError):
        pass  # not asked before, or written by another version: ask again
    with host_process.scratch() as scratch:
        target = scratch / "declared"
        install = ["install", "--target", str(target), "--no-deps", "--only-binary", ":all:", "-q", *extra]
        if _uv(uv, [*install, *(f"{n}{s}" for n, s in sorted(candidates.items()))], scratch, timeout=600).returncode:
            for name, spec in sorted(candidates.items()):  # one at a time: as declared, then its newest release
                for requirement in dict.fromkeys([f"{name}{spec}", name]):
                    if _uv(uv, [*install, requirement], scratch, timeout=600).returncode == 0:
                        break
        out: dict[str, list[tuple[str, str]]] = {}
        for name, found_in in import_names.providers(target).items():
            declared_here = [(dist, source) for dist, source in found_in if dist in candidates]
            if declared_here:
                out[name] = declared_here
    cache.mkdir(parents=True, exist_ok=True)
    write_atomic(memo, json.dumps(out, sort_keys=True))
    return out


def _framework_notes(pins: list[str]) -> list[str]:
    """Which framework wheel the repository's code runs on, as installed."""
    installed = {normalise(p.split("==")[0]): p for p in pins}
    lines = []
    if "tensorflow-cpu" in installed:
        keras = f" with {installed['keras']}" if "keras" in installed else ""
        lines.append(f"TensorFlow runs for real: {installed['tensorflow-cpu']}{keras} (the CPU build; never the CUDA "
                     "tensorflow).")
    if "jax" in installed:
        lib = f", {installed['jaxlib']}" if "jaxlib" in installed else ""
        lines.append(f"JAX runs for real: {installed['jax']}{lib} (jax[cpu], on the CPU).")
    return lines


def _resolution_notes(ways: dict[str, tuple[str, str]], want: dict[str, str], env: Environment) -> list[str]:
    """One line saying, for each import installed for the repository, which distribution gave it and how that was
    found; and one for each distribution installed for an import that its wheel does not provide after all."""
    said, wrong = [], []
    for module, (asked, how) in sorted(ways.items()):
        dist = env.provides.get(module)
        if dist is not None:
            said.append(f"{module} from {dist} ({how})")
        elif asked in want and asked not in env.not_installed:
            wrong.append(f"{module}: {asked} was installed for it ({how.split(':')[0]}), but its wheel provides no "
                         f"module {module}.")
    return ([f"Imports resolved: {'; '.join(said)}."] if said else []) + wrong


def _extension_notes(target: Path, pins: list[str], torch: str) -> list[str]:
    """A line for each torch extension installed whose compiled libraries cannot load beside the runner's torch."""
    extensions = [p for p in pins if normalise(p.split("==")[0]) in TORCH_BUILT]
    if not extensions:
        return []
    torch_lib = torch_builds.runner_torch_libraries()
    return [line for pin in extensions if (line := torch_builds.note(target, pin, torch, torch_lib))]


def for_record(record, cache: Path | None, unpinned: frozenset[str] = frozenset(),
               older: dict[str, str] | None = None) -> Environment | None:
    """The environment of a repository record's checkout; None for bundled specimens (they run in the
    runner's own) or when no cache was given (environments are not built)."""
    if cache is None or record.specimen or not record.snapshot:
        return None
    # absolute, so that what the sandbox reports (`cannot import name … (/…/envs/…)`) is known for this environment's
    return prepare(Path(record.snapshot), cache.resolve(), unpinned=unpinned, older=older)
