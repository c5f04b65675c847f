"""The README's screenshots are as new as the templates they show (`docs/screenshots.py` makes both)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("screenshots", ROOT / "docs" / "screenshots.py")
assert _spec is not None and _spec.loader is not None
screenshots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(screenshots)


def test_the_screenshots_were_made_from_the_templates_as_they_are():
    written = screenshots.HASHES.read_text()
    now = screenshots.digest_lines(screenshots.made_from())
    assert written == now, ("the templates changed since docs/img was made: run .venv/bin/python docs/screenshots.py "
                            "and commit docs/img")
    for name in ("paper-page.png", "sample-page.png"):
        image = screenshots.IMAGES / name
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"docs/img/{name}" in (ROOT / "README.md").read_text()


def test_a_changed_template_makes_the_hashes_stale(tmp_path, monkeypatch):
    """What the test above compares: a byte changed in a template the pages are made from changes its line."""
    copy = tmp_path / "paperproof" / "templates"
    copy.mkdir(parents=True)
    for path in screenshots.TEMPLATES.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(screenshots, "ROOT", tmp_path)
    monkeypatch.setattr(screenshots, "TEMPLATES", copy)
    made = screenshots.made_from()
    names = {p.name for p in made}
    assert {"paper.html", "sample.html", "base.html", "macros.html", "style.css"} <= names
    before = screenshots.digest_lines(made)
    macros = copy / "macros.html"
    macros.write_text(macros.read_text() + " ")
    after = screenshots.digest_lines(made)
    changed = [a for a, b in zip(after.splitlines(), before.splitlines()) if a != b]
    assert len(changed) == 1 and changed[0].endswith("  paperproof/templates/macros.html")
