"""Checks of a built site that need no browser: every page parses and is accessible, every internal
link resolves, every twin validates against its schema, and every JSON file is valid JSON.

Shared by tests/test_site.py (bundled site) and tests/test_browser.py (the XSS corpus).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from jsonschema import Draft202012Validator

EXTERNAL_SCHEMES = ("http:", "https:", "mailto:")


@dataclass
class Page:
    path: Path
    lang: str | None = None
    mains: int = 0
    ids: set[str] = field(default_factory=set)
    headings: list[int] = field(default_factory=list)
    navs: list[str | None] = field(default_factory=list)
    first_link: str | None = None
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, value)
    alternates: list[str] = field(default_factory=list)
    describedby: list[str] = field(default_factory=list)
    scripts: list[dict[str, str | None]] = field(default_factory=list)
    handlers: list[str] = field(default_factory=list)  # on* attributes anywhere


class PageParser(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        page = self.page
        for name, _ in attrs:
            if name.startswith("on"):
                page.handlers.append(f"<{tag} {name}>")
        if a.get("id"):
            page.ids.add(a["id"] or "")
        if tag == "html":
            page.lang = a.get("lang")
        elif tag == "main":
            page.mains += 1
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            page.headings.append(int(tag[1]))
        elif tag == "nav":
            page.navs.append(a.get("aria-label"))
        elif tag == "script":
            page.scripts.append(a)
        if tag == "a" and page.first_link is None and a.get("href"):
            page.first_link = a["href"]
        if tag == "link":
            rel = (a.get("rel") or "").split()
            if "alternate" in rel and a.get("type") == "application/json":
                page.alternates.append(a.get("href") or "")
            if "describedby" in rel:
                page.describedby.append(a.get("href") or "")
        for attribute in ("href", "src"):
            if a.get(attribute) is not None and tag in ("a", "link", "img", "script", "iframe", "source", "form"):
                page.links.append((tag, attribute, a[attribute] or ""))
        if tag == "form" and a.get("action"):
            page.links.append((tag, "action", a["action"] or ""))


def parse(path: Path) -> Page:
    page = Page(path)
    parser = PageParser(page)
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return page


def resolve(site: Path, page_path: Path, url: str) -> Path | None:
    """The file an internal URL points at (None for external and fragment-only URLs)."""
    if url.startswith(EXTERNAL_SCHEMES) or url.startswith("#"):
        return None
    parts = urlsplit(url)
    assert not parts.scheme and not parts.netloc, f"unexpected URL {url!r} in {page_path}"
    path = unquote(parts.path)
    base = site if path.startswith("/") else page_path.parent
    target = base / path.lstrip("/")
    if path.endswith("/"):
        target = target / "index.html"
    return target


def no_constants(value: str) -> None:
    raise ValueError(f"non-standard JSON constant {value}")


def load_json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constants)


def check_site(site: Path) -> tuple[list[str], int]:
    """Every problem found, and how many HTML pages were checked."""
    problems: list[str] = []
    validators: dict[Path, Draft202012Validator] = {}
    twins: set[Path] = set()
    pages = sorted(site.rglob("*.html"))
    pages = [p for p in pages if "pagefind" not in p.relative_to(site).parts]
    for path in pages:
        rel = path.relative_to(site)
        try:
            page = parse(path)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{rel}: does not parse: {exc}")
            continue
        if page.lang != "en":
            problems.append(f"{rel}: html lang is {page.lang!r}")
        if page.mains != 1:
            problems.append(f"{rel}: {page.mains} main elements")
        if page.first_link != "#main" or "main" not in page.ids:
            problems.append(f"{rel}: no skip link to #main as the first link")
        if not page.headings or page.headings[0] != 1 or page.headings.count(1) != 1:
            problems.append(f"{rel}: headings {page.headings} do not start with one h1")
        for before, after in zip(page.headings, page.headings[1:]):
            if after > before + 1:
                problems.append(f"{rel}: heading h{before} is followed by h{after}")
        if not page.navs or any(not label for label in page.navs):
            problems.append(f"{rel}: a nav without aria-label ({page.navs})")
        if page.handlers:
            problems.append(f"{rel}: event handler attributes {page.handlers}")
        for script in page.scripts:
            if script.get("type") != "application/ld+json" and not script.get("src"):
                problems.append(f"{rel}: an inline script")
        for tag, attribute, url in page.links:
            if url.strip().lower().startswith(("javascript:", "data:text", "vbscript:")):
                problems.append(f"{rel}: <{tag} {attribute}={url!r}>")
                continue
            if tag == "link" and "schema.org" in url:
                continue
            target = resolve(site, path, url)
            if target is not None and not target.is_file():
                problems.append(f"{rel}: broken internal link <{tag} {attribute}={url!r}>")
        if len(page.alternates) != 1 or len(page.describedby) != 1:
            problems.append(f"{rel}: {len(page.alternates)} JSON twins and {len(page.describedby)} schemas linked")
            continue
        twin = resolve(site, path, page.alternates[0])
        schema = resolve(site, path, page.describedby[0])
        if twin is None or not twin.is_file() or schema is None or not schema.is_file():
            problems.append(f"{rel}: twin or schema missing")
            continue
        twins.add(twin)
        if schema not in validators:
            schema_data = load_json(schema)
            Draft202012Validator.check_schema(schema_data)
            validators[schema] = Draft202012Validator(schema_data)
        try:
            data = load_json(twin)
        except ValueError as exc:
            problems.append(f"{twin.relative_to(site)}: invalid JSON: {exc}")
            continue
        errors = sorted(validators[schema].iter_errors(data), key=lambda e: [str(p) for p in e.path])
        for error in errors[:3]:
            problems.append(f"{twin.relative_to(site)} against {schema.relative_to(site)}: "
                            f"{'/'.join(map(str, error.path))}: {error.message[:200]}")
    for path in sorted(site.rglob("*.json")):
        rel = path.relative_to(site)
        if rel.parts[0] == "pagefind":
            continue
        try:
            load_json(path)
        except ValueError as exc:
            problems.append(f"{rel}: invalid JSON: {exc}")
        if rel.parts[0] != "schema" and path not in twins:
            problems.append(f"{rel}: JSON that no page links as its twin")
    return problems, len(pages)
