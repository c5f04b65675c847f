"""The GitHub Actions workflow that regenerates the catalogue: its commands are ones paperproof accepts,
and its build step, run as written by bash, builds a site with the Pages base URL.

GitHub itself cannot be reached from here; the steps that only GitHub runs (checkout, cache, Pages
upload and deploy) are checked for the paths and ordering the build step relies on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from paperproof.cli import parser

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "catalogue.yml"


def steps() -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]["steps"]


def step(name: str) -> dict:
    return next(s for s in steps() if s.get("name", "").startswith(name))


def test_every_paperproof_command_in_the_workflow_parses(capsys):
    commands = [line.strip() for s in steps() for line in s.get("run", "").replace("\\\n", " ").splitlines()
                if "paperproof " in line and not line.strip().startswith(("#", "python"))]
    assert len(commands) == 2  # harvest and build
    for command in commands:
        words = command.split("paperproof ", 1)[1]
        words = re.sub(r"\$\{ARCHIVE:\+[^}]*\}", "--archive pwc-archive", words)
        words = re.sub(r'"\$\{store\[@\]\}"', "--store .paperproof-store", words)
        words = re.sub(r"\$\{\{[^}]*\}\}", "https://example.org/catalogue", words)
        words = words.split("||")[0].replace('"', "").split()
        try:
            parser().parse_args(words)
        except SystemExit:
            raise AssertionError(f"{command}: {capsys.readouterr().err}") from None


def test_the_build_step_builds_the_site_with_the_pages_base_url(tmp_path):
    script = step("Build the site")["run"].replace("${{ steps.pages.outputs.base_url }}", "https://example.org/cat")
    env = {**os.environ, "ARCHIVE": "", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="https://example.org/cat/paper/' in index
    assert (tmp_path / ".paperproof-cache").is_dir()  # the build cache the workflow saves
    assert "sitemaps and feed: site-relative URLs" not in result.stdout


def test_the_cached_paths_are_those_the_build_uses():
    restore = step("Restore")["with"]["path"].split()
    save = step("Save")["with"]["path"].split()
    assert restore == save == [".paperproof-store", ".paperproof-cache", "site", ".site.staging", ".site.previous"]
    names = [s.get("name") or s.get("uses") for s in steps()]
    assert names.index(step("Restore").get("name")) < names.index("Build the site") < names.index(step("Save")["name"])
    assert step("Save")["if"] == "always()"  # a failed build's staging tree is saved for the next run to resume
    upload = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site"
