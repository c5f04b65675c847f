"""Regenerate the README's screenshots from a build of the bundled catalogue, in headless Chromium.

    .venv/bin/python docs/screenshots.py [--site SITE]

Without `--site` it first builds the bundled catalogue into a temporary folder (a few minutes: every specimen
runs in the sandbox). It serves the site on loopback, opens it in Debian's headless Chromium (the `test` extra
gives selenium) and writes, in `docs/img/`:

- `paper-page.png`: the first 1280 × 1000 px of the H-CAT paper page (its verdict, facts and code links);
- `sample-page.png`: the same of a specimen sample page that departs from the paper;
- `templates.sha256`: the sha256 of each template the two pages are rendered from (`made_from`), in
  `sha256sum` form. `tests/test_screenshots.py` fails when a template no longer has the hash written here:
  the screenshots are older than the templates, so run this script again.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import shutil
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, meta

from paperproof.plumbing.files import write_atomic

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "paperproof" / "templates"
IMAGES = ROOT / "docs" / "img"
HASHES = IMAGES / "templates.sha256"
PAGES = ("paper.html", "sample.html")  # the templates of the two pages shown
STATIC = ("style.css", "site.js")  # what every page loads beside its HTML
PAPER = "/paper/dissecting-sample-hardness-a-fine-grained/"
SAMPLE = ("paperproof-specimens/dynamics-maps-fork", "forgetting_events")  # departs, with its code shown
SIZE = (1280, 1000)


def made_from() -> list[Path]:
    """The templates the two pages are rendered from: each page's, every template it extends, includes or
    imports, and the static files it loads."""
    env = Environment(loader=FileSystemLoader(TEMPLATES))
    found: set[str] = set()
    todo = list(PAGES)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        assert env.loader is not None
        source = env.loader.get_source(env, name)[0]
        todo.extend(n for n in meta.find_referenced_templates(env.parse(source)) if n is not None)
    return sorted(TEMPLATES / name for name in found | set(STATIC))


def digest_lines(paths: list[Path]) -> str:
    """`sha256sum` lines for `paths`, relative to the repository."""
    return "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(ROOT).as_posix()}\n" for p in paths)


def _quiet_handler(directory: Path) -> type[SimpleHTTPRequestHandler]:
    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(directory), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Quiet


def sample_path(site: Path) -> str:
    for path in sorted((site / "sample").glob("*.json")):
        record = json.loads(path.read_text())
        if (record["repo"], record["entry"]) == SAMPLE:
            return f"/sample/{path.stem}/"
    raise SystemExit(f"{SAMPLE[1]} of {SAMPLE[0]} is not in {site}: build the bundled catalogue")


def shoot(site: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_quiet_handler(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="screenshots-chromium-")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     f"--user-data-dir={profile}"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                               options=options)
    try:
        width, height = SIZE
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        for path, name in ((PAPER, "paper-page.png"), (sample_path(site), "sample-page.png")):
            browser.get(base + path)
            browser.execute_script("return document.fonts.ready")
            write_atomic(IMAGES / name, browser.get_screenshot_as_png())
            print(f"{IMAGES / name}: {base}{path}")
    finally:
        browser.quit()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a built bundled site (default: build one into a temporary folder)")
    args = parser.parse_args(argv)
    import paperproof

    if Path(paperproof.__file__).resolve().parent != ROOT / "paperproof":
        raise SystemExit(f"paperproof is imported from {paperproof.__file__}, not this checkout: pip install -e .")
    before = digest_lines(made_from())
    with tempfile.TemporaryDirectory(prefix="screenshots-") as scratch:
        site = args.site
        if site is None:
            from paperproof.build.pipeline import BuildConfig, build

            site = Path(scratch) / "site"
            build(BuildConfig(out=site, cache=Path(scratch) / "cache"))
        shoot(site)
    if digest_lines(made_from()) != before:
        print("the templates changed while the screenshots were taken: run it again", file=sys.stderr)
        return 1
    write_atomic(HASHES, before)
    print(f"{HASHES}: {len(before.splitlines())} templates")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
