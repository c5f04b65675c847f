"""What crawlers and citation managers read: `citation_*` and OpenGraph tags, schema.org JSON-LD,
sitemaps and robots.txt.

Sitemaps list every HTML page. The sitemap protocol wants absolute URLs, so they are only fit for
crawlers when the site is built with `--base-url https://…`; without it the files still list every
page, site-relative, and robots.txt names no sitemap. `sitemap.xml` is an index over
`sitemaps/sitemap-<n>.xml`, each of at most `SITEMAP_MAX` URLs. Dates are the build's `read_at`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape

from markupsafe import Markup

from paperproof.build.pages import PaperTwin
from paperproof.build.render import http_url, json_script, plain_text
from paperproof.build.urls import SiteUrls

SITEMAP_MAX = 50_000
SITE_NAME = "paperproof"
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class PageMeta:
    """Head metadata of one page: description, OpenGraph, `citation_*` tags and JSON-LD."""

    description: str = ""
    og_type: str = "website"
    og_url: str | None = None  # absolute URLs only (og:url must be absolute)
    citation: tuple[tuple[str, str], ...] = ()
    jsonld: Markup | None = None


def page_meta(url: str, description: str, urls: SiteUrls) -> PageMeta:
    return PageMeta(description=description, og_url=url if urls.absolute else None)


def paper_meta(twin: PaperTwin, urls: SiteUrls) -> PageMeta:
    description = plain_text(twin.abstract) or f"{twin.title}: the paper, its code and what ran."
    tags: list[tuple[str, str]] = [("citation_title", twin.title)]
    tags += [("citation_author", a) for a in twin.authors]
    match = _DATE.match(twin.date or "")
    if match:
        tags.append(("citation_publication_date", "/".join(match.groups())))
    if twin.proceeding:
        tags.append(("citation_conference_title", twin.proceeding))
    if twin.arxiv_id:
        tags.append(("citation_arxiv_id", twin.arxiv_id))
    if abs_url := http_url(twin.url_abs):
        tags.append(("citation_abstract_html_url", abs_url))
    if pdf_url := http_url(twin.url_pdf):
        tags.append(("citation_pdf_url", pdf_url))
    if twin.tasks:
        tags.append(("citation_keywords", "; ".join(t.task_name for t in twin.tasks)))
    return PageMeta(description=description, og_type="article", og_url=twin.url if urls.absolute else None,
                    citation=tuple(tags), jsonld=json_script(scholarly_article(twin)))


def scholarly_article(twin: PaperTwin) -> dict:
    """schema.org ScholarlyArticle for the paper (keys in a fixed order)."""
    data: dict = {
        "@context": "https://schema.org",
        "@type": "ScholarlyArticle",
        "name": twin.title,
        "headline": twin.title[:110],
        "author": [{"@type": "Person", "name": a} for a in twin.authors],
    }
    match = _DATE.match(twin.date or "")
    if match:
        data["datePublished"] = "-".join(match.groups())
    if twin.abstract:
        data["abstract"] = twin.abstract
    if twin.tasks:
        data["keywords"] = [t.task_name for t in twin.tasks]
    if twin.proceeding:
        data["isPartOf"] = {"@type": "CreativeWork", "name": twin.proceeding}
    same_as = [url for url in map(http_url, (twin.url_abs, twin.url_pdf)) if url]
    if same_as:
        data["sameAs"] = same_as
    if pdf_url := http_url(twin.url_pdf):
        data["encoding"] = {"@type": "MediaObject", "contentUrl": pdf_url, "encodingFormat": "application/pdf"}
    if twin.arxiv_id:
        data["identifier"] = {"@type": "PropertyValue", "propertyID": "arXiv", "value": twin.arxiv_id}
    data["url"] = twin.url
    return data


# --- sitemaps and robots.txt ---


def _note(urls: SiteUrls) -> str:
    # (no "--" inside an XML comment)
    return "" if urls.absolute else ("<!-- Built without a base URL: these URLs are site-relative, and crawlers need "
                                     "absolute ones (paperproof build, option base-url). -->\n")


def sitemap_part(urls: SiteUrls, part: list[str], read_at: str) -> str:
    """One `sitemaps/sitemap-<n>.xml`: the given page URLs (sorted, at most `SITEMAP_MAX`)."""
    lastmod = read_at[:10]
    rows = "".join(f"<url><loc>{escape(u)}</loc><lastmod>{lastmod}</lastmod></url>\n" for u in part)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + _note(urls)
            + '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + rows + "</urlset>\n")


def sitemap_index(urls: SiteUrls, parts: int, read_at: str) -> str:
    """`sitemap.xml`: the index over `parts` sitemap files."""
    lastmod = read_at[:10]
    entries = "".join(f"<sitemap><loc>{escape(urls.sitemap_part(number))}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"
                      for number in range(1, parts + 1))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + _note(urls)
            + '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + entries + "</sitemapindex>\n")


def sitemaps(urls: SiteUrls, pages: list[str], read_at: str, limit: int = SITEMAP_MAX) -> dict[str, str]:
    """URL -> content of `sitemap.xml` (the index) and each `sitemaps/sitemap-<n>.xml` (at most `limit` URLs)."""
    ordered = sorted(set(pages))
    parts = [ordered[i:i + limit] for i in range(0, len(ordered), limit)] or [[]]
    files = {urls.sitemap_part(number): sitemap_part(urls, part, read_at) for number, part in enumerate(parts, start=1)}
    files[urls.sitemap()] = sitemap_index(urls, len(parts), read_at)
    return files


def robots(urls: SiteUrls) -> str:
    lines = ["User-agent: *", "Allow: /"]
    if urls.absolute:
        lines.append(f"Sitemap: {urls.sitemap()}")
    else:
        lines.append(f"# Sitemap index: {urls.sitemap()} (site-relative: build with --base-url to name it here)")
    return "\n".join(lines) + "\n"
