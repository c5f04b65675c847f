"""Checks of a built site that need no browser: every page parses and is accessible, every internal
link resolves, every twin validates against its schema, every JSON file is valid JSON, and no page, style
sheet or SVG loads anything from a host other than the site's own.

Shared by tests/test_site.py (bundled site), tests/test_browser.py (the XSS corpus) and
tests/test_remote_resources.py (hostile READMEs).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from jsonschema import Draft202012Validator

EXTERNAL_SCHEMES = ("http:", "https:", "mailto:")

# What a browser loads by itself, without a click: (tag or "*", attribute). A `<link>` loads unless every one
# of its rel tokens only names another document (`_NAMING_RELS`); `style` attributes, `<style>` elements, style
# sheets and SVG files are read for `url(...)` and `@import`.
LOADED = {("img", "src"), ("img", "srcset"), ("script", "src"), ("iframe", "src"), ("frame", "src"),
          ("embed", "src"), ("object", "data"), ("source", "src"), ("source", "srcset"), ("video", "src"),
          ("video", "poster"), ("audio", "src"), ("track", "src"), ("input", "src"), ("image", "href"),
          ("image", "xlink:href"), ("use", "href"), ("use", "xlink:href"), ("feimage", "href"),
          ("feimage", "xlink:href"), ("*", "background"), ("base", "href")}
_NAMING_RELS = {"alternate", "canonical", "describedby", "author", "license", "help", "next", "prev", "search",
                "bookmark", "external", "nofollow", "noopener", "noreferrer", "me", "tag"}
_CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_SVG_HREF = re.compile(r"""(?:xlink:)?href\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def css_urls(text: str) -> list[str]:
    """The addresses a piece of CSS loads (`url(...)`, `@import "..."`)."""
    return [next(g for g in match.groups() if g is not None) for match in _CSS_URL.finditer(text)]


def srcset_urls(value: str) -> list[str]:
    return [candidate.split()[0] for candidate in value.split(",") if candidate.split()]


def foreign(url: str, hosts: set[str]) -> bool:
    """Whether loading `url` reaches a host other than `hosts` (relative and `data:` addresses reach none)."""
    url = url.strip()
    if not url or url.startswith("#") or url.lower().startswith("data:"):
        return False
    parts = urlsplit(url)
    if url.startswith("//") or parts.scheme:
        return parts.scheme not in ("", "http", "https") or parts.netloc.lower() not in hosts
    return False


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
    loaded: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, URL) a browser loads


class PageParser(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.in_style = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self.in_style = False

    def handle_data(self, data: str) -> None:
        if self.in_style:
            self.page.loaded.extend(("style", "url()", url) for url in css_urls(data))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        page = self.page
        self.in_style = self.in_style or tag == "style"
        for name, value in attrs:
            if value is None:
                continue
            if (tag, name) in LOADED or ("*", name) in LOADED:
                urls = srcset_urls(value) if name == "srcset" else [value]
                page.loaded.extend((tag, name, url) for url in urls)
            elif name == "style":
                page.loaded.extend((tag, "style url()", url) for url in css_urls(value))
        if tag == "link" and a.get("href") and set((a.get("rel") or "").lower().split()) - _NAMING_RELS:
            page.loaded.append((tag, f"href (rel={a.get('rel')})", a["href"] or ""))
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
    if url.startswith("//"):
        return None  # another host's: `foreign` judges what loads it
    assert not parts.scheme and not parts.netloc, f"unexpected URL {url!r} in {page_path}"
    path = unquote(parts.path)
    base = site if path.startswith("/") else page_path.parent
    target = base / path.lstrip("/")
    if path.endswith("/"):
        target = target / "index.html"
    return target


def foreign_resources(site: Path, hosts: set[str]) -> list[str]:
    """What the style sheets and SVG files of the site (Pagefind's included) load from another host."""
    problems = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".css", ".svg") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        urls = css_urls(text)
        if path.suffix == ".svg":
            urls += [next(g for g in m.groups() if g is not None) for m in _SVG_HREF.finditer(text)]
        problems.extend(f"{path.relative_to(site)}: loads {url!r} from another host" for url in urls if foreign(url, hosts))
    return problems


def no_constants(value: str) -> None:
    raise ValueError(f"non-standard JSON constant {value}")


def load_json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constants)


def _code_record(site: Path, rel: Path, validators: dict[Path, Draft202012Validator]) -> list[str]:
    """A `code/<sha256>.json` record: named for its hash, valid against `schema/code.json`."""
    schema = site / "schema" / "code.json"
    if not schema.is_file():
        return [f"{rel}: a code record, and no schema/code.json"]
    if schema not in validators:
        validators[schema] = Draft202012Validator(load_json(schema))
    try:
        data = load_json(site / rel)
    except ValueError:
        return []  # said below, as for every JSON file
    problems = [f"{rel} against schema/code.json: {'/'.join(map(str, e.path))}: {e.message[:200]}"
                for e in validators[schema].iter_errors(data)][:3]
    if not re.fullmatch(r"[0-9a-f]{64}\.json", rel.name) or not isinstance(data, dict) or data.get(
            "code_sha256") != rel.stem:
        problems.append(f"{rel}: not named for the sha256 it holds")
    return problems


def check_site(site: Path, hosts: set[str] | None = None) -> tuple[list[str], int]:
    """Every problem found, and how many HTML pages were checked. `hosts`: the site's own (the host of its
    `--base-url`); a page, style sheet or SVG file that loads anything from another is a problem."""
    problems = foreign_resources(site, hosts or set())
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
        for tag, attribute, url in page.loaded:
            if foreign(url, hosts or set()):
                problems.append(f"{rel}: loads <{tag} {attribute}={url!r}> from another host")
        for script in page.scripts:
            if script.get("type") != "application/ld+json" and not script.get("src"):
                problems.append(f"{rel}: an inline script")
        for tag, attribute, url in page.links:
            if url.strip().lower().startswith(("javascript:", "data:text", "vbscript:")):
                problems.append(f"{rel}: <{tag} {attribute}={url!r}>")
                continue
            if tag == "link" and "schema.org" in url:
                continue
            scheme = urlsplit(url.strip()).scheme.lower()
            if scheme == "data" or (scheme and f"{scheme}:" not in EXTERNAL_SCHEMES):
                if scheme != "data":
                    problems.append(f"{rel}: a URL of another scheme <{tag} {attribute}={url!r}>")
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
        if rel.parts[0] == "code" and len(rel.parts) == 2:  # code for programs (`build.code_pages`): no page
            problems.extend(_code_record(site, rel, validators))
        elif rel.parts[0] != "schema" and path not in twins:
            problems.append(f"{rel}: JSON that no page links as its twin")
    return problems, len(pages)
