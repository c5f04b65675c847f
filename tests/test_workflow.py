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

from paperproof.build.site_paths import SitePaths
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
    site = [p.name for p in SitePaths(Path("site")).cached()]  # as the build names them
    assert restore == save == [".paperproof-store", ".paperproof-cache", *site]
    names = [s.get("name") or s.get("uses") for s in steps()]
    assert names.index(step("Restore").get("name")) < names.index("Build the site") < names.index(step("Save")["name"])
    assert step("Save")["if"] == "always()"  # a failed build's staging tree is saved for the next run to resume
    upload = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site"


def test_a_site_larger_than_pages_publishes_fails_the_run_before_the_upload(tmp_path):
    check = step("Check the site fits GitHub Pages")
    names = [s.get("name") or s.get("uses") for s in steps()]
    upload = names.index("actions/upload-pages-artifact@v3")
    assert names.index(step("Save")["name"]) < names.index(check["name"]) < upload
    assert check["env"]["LIMIT_MB"] == 1024  # GitHub's documented limit for a published site

    (tmp_path / "site" / "paper").mkdir(parents=True)
    for n in range(3):
        (tmp_path / "site" / "paper" / f"{n}.html").write_bytes(b"x" * 1_000_000)

    def run(limit_mb: int) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", check["run"]], cwd=tmp_path, capture_output=True,
                              text=True, env={**os.environ, "LIMIT_MB": str(limit_mb)}, timeout=60)

    over = run(2)
    assert over.returncode == 1
    assert over.stdout.startswith("::error::The site is 3 MB; GitHub Pages publishes at most 2 MB.")
    assert "PAPERPROOF_ARCHIVE" in over.stdout  # it says what to do
    fits = run(1024)
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert "3 MB of the 1024 MB" in fits.stdout
