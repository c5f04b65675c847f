"""The Atom feed of verified papers (`feed.xml`).

"Verified" means: at least one of the paper's samples ran (status `ran`, `ran_violates`, `ran_fixture`
or `ran_draft_wrong`). Entries are ordered by the paper's date, newest first, then by slug; papers
without a date come last. No clock is read: an entry's and the feed's `updated` is the build's
`read_at` (the archive snapshot's date, or SOURCE_DATE_EPOCH), i.e. the date of the inputs in which
this build found the paper verified, and `published` is the paper's own date. Identical inputs give
an identical feed. Links are absolute only when the site is built with `--base-url https://…`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr as _quoteattr

from paperproof.build.urls import SiteUrls

FEED_ENTRIES = 200
TAG_AUTHORITY = "tag:paperproof,2025:"
UPDATED_MEANS = ("Papers with at least one sample that ran, newest paper first. 'updated' is the date of the inputs "
                 "this build read (archive snapshot or SOURCE_DATE_EPOCH), not when a sample ran; 'published' is "
                 "the paper's date.")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def escape(text: str) -> str:
    """XML-escaped, with the characters XML 1.0 cannot hold (control characters) dropped."""
    return _escape(_NOT_XML.sub("", text))


def quoteattr(text: str) -> str:
    return _quoteattr(_NOT_XML.sub("", text))


@dataclass(frozen=True)
class FeedPaper:
    slug: str
    title: str
    authors: tuple[str, ...]
    date: str | None
    url: str
    summary: str
    samples: int
    ran: int


def verified_order(papers: list[FeedPaper]) -> list[FeedPaper]:
    """Newest paper date first, then slug; undated papers last."""
    by_slug = sorted(papers, key=lambda p: p.slug)
    dated = sorted((p for p in by_slug if p.date), key=lambda p: p.date or "", reverse=True)
    return dated + [p for p in by_slug if not p.date]


def _id(urls: SiteUrls, url: str, local: str) -> str:
    return url if urls.absolute else TAG_AUTHORITY + local


def atom(urls: SiteUrls, read_at: str, papers: list[FeedPaper], limit: int = FEED_ENTRIES) -> str:
    chosen = verified_order([p for p in papers if p.ran > 0])[:limit]
    updated = read_at
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        f"<id>{escape(_id(urls, urls.feed(), 'feed'))}</id>",
        "<title>paperproof: verified papers</title>",
        f"<subtitle>{escape(UPDATED_MEANS)}</subtitle>",
        f"<updated>{escape(updated)}</updated>",
        f"<link rel=\"self\" type=\"application/atom+xml\" href={quoteattr(urls.feed())}/>",
        f"<link rel=\"alternate\" type=\"text/html\" href={quoteattr(urls.home())}/>",
        "<author><name>paperproof</name></author>",
        "<generator>paperproof</generator>",
        "<rights>Archive material from Papers with Code (pwc-archive), CC BY-SA 4.0, modified by paperproof</rights>",
    ]
    for p in chosen:
        out.append("<entry>")
        out.append(f"<id>{escape(_id(urls, p.url, 'paper/' + p.slug))}</id>")
        out.append(f"<title type=\"text\">{escape(p.title)}</title>")
        out.append(f"<link rel=\"alternate\" type=\"text/html\" href={quoteattr(p.url)}/>")
        out.append(f"<updated>{escape(updated)}</updated>")
        if p.date and _DATE.match(p.date):
            out.append(f"<published>{p.date}T00:00:00+00:00</published>")
        for author in p.authors:
            out.append(f"<author><name>{escape(author)}</name></author>")
        summary = f"{p.ran} of {p.samples} samples ran. {p.summary}".strip()
        out.append(f"<summary type=\"text\">{escape(summary)}</summary>")
        out.append("</entry>")
    out.append("</feed>")
    return "\n".join(out) + "\n"
