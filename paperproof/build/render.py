"""Rendering records into pages: Jinja2 with autoescape, Markdown sanitised by nh3, Pygments for code.

Every page is rendered from the same record as its JSON twin, and nothing harvested (abstracts,
READMEs, docstrings) reaches a page except escaped or through the sanitiser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from html import escape as html_escape
from html import unescape as html_unescape
from typing import NamedTuple

import markdown
import nh3
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from paperproof.build.urls import SiteUrls

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td",
    "th", "thead", "tr", "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "th": {"align"}, "td": {"align"},
                      "abbr": {"title"}}


def markdown_html(text: str | None, heading_offset: int = 2, link_base: Callable[[str], str] | None = None,
                  image_url: Callable[[str], str | None] | None = None) -> Markup:
    """Untrusted Markdown to safe HTML: render, then keep only an allowlist of tags and attributes.

    Headings are re-levelled to nest under the page's own: the first becomes `h{heading_offset + 1}`
    and none skips a level, so a README's `#` never competes with the page's `h1`. Relative links (a
    README's `docs/x.md`) are resolved with `link_base` (to the file at the pinned commit); without it they
    are dropped, as is every scheme but http(s) and mailto. An image is shown only when `image_url` gives the
    address of its copy on this site (`readme_images`); any other is a plain link (`sanitise`).
    """
    if not text:
        return Markup("")
    prose = prose_html(text)
    if prose is not None:  # paragraphs and escaped text, which the sanitiser gives back as they are
        return Markup(prose.replace("\xa0", "&nbsp;"))
    return sanitise(_markdown(text, "page"), heading_offset, link_base, image_url)


def sanitise(html: str, heading_offset: int = 2, link_base: Callable[[str], str] | None = None,
             image_url: Callable[[str], str | None] | None = None) -> Markup:
    """HTML from Markdown made safe (see `markdown_html`), loading nothing from another host: an image whose
    source is not a copy on this site becomes a link to where it is (its alt text, or the address, as the
    link's text), or only its alt text inside a link, or where it has no address we link to (`data:`)."""
    kept: set[str] = set()  # the sources of the images shown: copies on this site

    def attribute(tag: str, attr: str, value: str) -> str | None:
        if (tag, attr) not in (("a", "href"), ("img", "src")):
            return value
        stripped = value.strip()
        if _SCHEME.match(stripped) or stripped.startswith("//"):
            return stripped  # the scheme allowlist (url_schemes) judges it; an image of it becomes a link
        if tag == "a" and stripped.startswith("#"):
            return None  # in-document anchors: sanitised headings carry no ids to land on
        path = stripped.lstrip("/").split("#", 1)[0].split("?", 1)[0]
        if tag == "img" and image_url is not None and (copy := image_url(path)):
            kept.add(copy)
            return copy
        if link_base is None or not stripped:
            return None
        return link_base(path) or None

    clean = nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, attribute_filter=attribute,
                      url_schemes={"http", "https", "mailto"}, link_rel=LINK_REL)
    return Markup(relevel_headings(_unloaded(clean, kept), heading_offset + 1))


LINK_REL = "nofollow noopener noreferrer"
# A tag of the sanitiser's output, which quotes every attribute value with `"` and escapes `"` and `>` in it.
_A_OR_IMG = re.compile(r'<(/?)(a|img)((?:\s+[^\s"=>/]+(?:="[^"]*")?)*)\s*/?>')
_ATTRIBUTE = re.compile(r'([^\s"=>/]+)(?:="([^"]*)")?')


def _unloaded(html: str, kept: set[str]) -> str:
    """`html` with every `<img>` whose source is not in `kept` replaced: outside a link, by a link to its source
    (a protocol-relative one made https) with its alt text or the source as text; else by its alt text."""
    depth = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal depth
        closing, tag, attributes = match.groups()
        if tag == "a":
            depth = max(depth + (-1 if closing else 1), 0)
            return match.group()
        values = {name: html_unescape(value or "") for name, value in _ATTRIBUTE.findall(attributes)}
        source = values.get("src", "").strip()
        if source in kept:
            return match.group()
        text = values.get("alt", "").strip()
        target = "https:" + source if source.startswith("//") else source
        if depth or not http_url(target):
            return html_escape(text, quote=False)
        return f'<a href="{html_escape(target)}" rel="{LINK_REL}">{html_escape(text or target, quote=False)}</a>'

    return _A_OR_IMG.sub(replace, html)


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

# Markdown at archive scale. Most abstracts are prose, for which Markdown gives one `<p>` per paragraph,
# with `&`, `<` and `>` escaped, and nothing else. `_is_prose` looks for everything that could make it
# give more: control characters and the characters that always mean something (`*`, `` ` ``, `[`, `]`,
# `|`); a backslash before a character it escapes; `_` not between two word characters (only there is it
# never emphasis); `&` starting an entity; `<` followed by anything but a space, a digit, `=` or `-` (a
# tag, an autolink), or by one of those in a text with an `@` (a mail autolink); and a line starting like
# a block (`#`, `>`, `-`, `+`, `=`, `~`, `<`, a digit and `.` or `)`, or whitespace) or ending in
# whitespace. Each pattern is looked for only when the character it starts with is in the text, so prose
# costs a few scans. Text that passes skips the parser; the result is the parser's own
# (tests/test_scale.py holds them to the same output). The parser, when needed, is built once per
# process and reset between texts, and the last results are kept: a paper's abstract is converted once
# for its page, its description and its feed entry.
_ALWAYS_MARKUP = re.compile(r"[\x00-\x09\x0b-\x1f\x7f*`\[\]|]")
_BY_CHARACTER = (
    ("\\", re.compile(r"\\(?:[\\`*_{}\[\]()>#+\-.!|\n]|$)", re.MULTILINE)),
    ("_", re.compile(r"(?<!\w)_|_(?!\w)")),
    ("&", re.compile(r"&(?:#|\w+;)")),
    ("<", re.compile(r"<(?![ \d=-])")),
)
_MAIL = re.compile(r"<[\d=-]")
_BLOCK_START = frozenset(" \t#>+=~<-")
_NUMBERED = re.compile(r"\d+[.)]")
_CONVERTERS: dict[str, markdown.Markdown] = {}


def _is_prose(text: str) -> bool:
    if _ALWAYS_MARKUP.search(text):
        return False
    for character, pattern in _BY_CHARACTER:
        if character in text and pattern.search(text):
            return False
    if "@" in text and "<" in text and _MAIL.search(text):
        return False
    return not any(line and (line[0] in _BLOCK_START or line[0].isspace() or line[-1].isspace()
                             or _NUMBERED.match(line)) for line in text.split("\n"))


@lru_cache(maxsize=8)
def prose_html(text: str) -> str | None:
    """What Markdown makes of `text` when it is prose (paragraphs of text), else None."""
    if not _is_prose(text):
        return None
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "\n".join(f"<p>{p.strip(chr(10))}</p>" for p in escaped.split("\n\n") if p.strip("\n"))


MARKDOWN_CHARS = 256 * 1024  # of a README or an abstract; the rest is cut, and the page says so
MAX_INDENT = 64  # columns of leading whitespace: lists nested deeper cost Python-Markdown quadratic time
MAX_QUOTE = 8  # nested `>`
MAX_MARKUP = 1000  # markup characters in one paragraph, list item or table row
MARKUP_BUDGET = 2_000_000  # the sum over them of the square of that count (Python-Markdown's cost)
_QUOTES = re.compile(r"[ \t]*(?:>[ \t]?)+")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)]|\|)[ \t]")
_FENCE = re.compile(r"[ \t]*(```|~~~)")
_MARKUP = re.compile(r"[\[\]()<>*_`!&\\|]")


def bounded_markdown(text: str) -> str | None:
    """Markdown that Python-Markdown renders in about linear time, or None: show it as text.

    Python-Markdown rebuilds a paragraph's text for every inline match, and its bracket and HTML
    handling look ahead over the rest of it (`bench/bench_markdown.py`: 5,000 unclosed `[` in one
    paragraph took 7 s, 100 lines of 100 took 22 s and 1,000 such lines did not end in 15 minutes,
    5,000 links never closed 15 s, 100,000 `<div>` 85 s, a list nested 400 deep 1 s). So,
    deterministically: the text is cut at `MARKDOWN_CHARS`, leading whitespace past `MAX_INDENT`
    columns and `>` past `MAX_QUOTE` are dropped, and a paragraph, list item or table row (outside
    fenced code) with more than `MAX_MARKUP` markup characters, or more than `MARKUP_BUDGET` for the
    squares of those counts in all, makes the whole text shown as text."""
    cut = len(text) > MARKDOWN_CHARS
    lines = text[:MARKDOWN_CHARS].split("\n")
    markup, fenced, spent = 0, False, 0
    for index, line in enumerate(lines):
        stripped = line.lstrip(" \t")
        if len(line) - len(stripped) > MAX_INDENT // 4 and len(line[:len(line) - len(stripped)].expandtabs(4)) > MAX_INDENT:
            line = " " * MAX_INDENT + stripped
        quotes = _QUOTES.match(line)
        if quotes and quotes.group().count(">") > MAX_QUOTE:
            line = "> " * MAX_QUOTE + line[quotes.end():]
        lines[index] = line
        if _FENCE.match(line) or (not fenced and (not stripped or _ITEM.match(line))):
            spent, markup = spent + markup * markup, 0  # a paragraph, item or row ended
            fenced ^= bool(_FENCE.match(line))
        if fenced or _FENCE.match(line):
            continue
        markup += len(_MARKUP.findall(line))
        if markup > MAX_MARKUP or spent + markup * markup > MARKUP_BUDGET:
            return None
    return "\n".join(lines) + ("\n\n*(cut: the text is longer than this page shows)*" if cut else "")


def _as_text(text: str) -> str:
    """Text shown as it is, in paragraphs, when it is not Markdown we can render in bounded time."""
    blocks = [b for b in text[:MARKDOWN_CHARS].split("\n\n") if b.strip()]
    body = "\n".join(f"<p>{html_escape(b.strip(chr(10)))}</p>" for b in blocks)
    return f"<p><em>Shown as plain text: too much markup to render.</em></p>\n{body}"


@lru_cache(maxsize=32)
def _markdown(text: str, flavour: str) -> str:
    """`page`: the site's Markdown (fenced code, tables; HTML output); `plain`: Python-Markdown's defaults.
    Repository and archive text is `bounded_markdown` first."""
    fast = prose_html(text)
    if fast is not None:
        return fast
    bounded = bounded_markdown(text)
    if bounded is None:
        return _as_text(text)
    text = bounded
    converter = _CONVERTERS.get(flavour)
    if converter is None:
        converter = _CONVERTERS[flavour] = (
            markdown.Markdown(extensions=["fenced_code", "tables"], output_format="html") if flavour == "page"
            else markdown.Markdown())
    converter.reset()
    return converter.convert(text)
_HEADING = re.compile(r"<(/?)h([1-6])>")


def relevel_headings(html: str, top: int) -> str:
    """Shift sanitised headings (bare `<hN>` tags) so the shallowest is `top` and none skips a level."""
    stack: list[tuple[int, int]] = []  # (original level, new level) of the open headings

    def level(match: re.Match[str]) -> str:
        closing, original = match.group(1), int(match.group(2))
        if closing:
            return f"</h{stack[-1][1] if stack else top}>"
        while stack and stack[-1][0] >= original:
            stack.pop()
        new = min(stack[-1][1] + 1, 6) if stack else top
        stack.append((original, new))
        return f"<h{new}>"

    return _HEADING.sub(level, html)


def plain_text(text: str | None, limit: int = 300) -> str:
    """A one-line plain-text excerpt of Markdown (for descriptions): markup characters dropped, cut at a word."""
    if not text:
        return ""
    flat = _flat(text)
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + "…"


@lru_cache(maxsize=8)
def _flat(text: str) -> str:
    """Markdown as one line of plain text (kept: a paper's description and its feed entry use the same). Prose
    is its own plain text: the paragraphs Markdown would make of it, their tags dropped, are its words."""
    if prose_html(text) is not None:
        return " ".join(text.split())
    return " ".join(html_unescape(nh3.clean(_markdown(text, "plain"), tags=set())).split())


def http_url(value: str | None) -> str | None:
    """The URL when it is an absolute http(s) URL, else None: archive fields never become `javascript:` links."""
    if not value:
        return None
    stripped = value.strip()
    return stripped if re.match(r"^https?://[^\s/]+", stripped, re.IGNORECASE) else None


def json_script(data: object) -> Markup:
    """JSON for inside `<script type="application/ld+json">`: `<`, `>` and `&` escaped, so `</script>` in a
    title cannot end the element, and line separators escaped for old parsers."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return Markup(text)


_FORMATTER = HtmlFormatter(cssclass="code", linenos="inline")


def code_html(source: str, first_line: int) -> Markup:
    formatter = HtmlFormatter(cssclass="code", linenos="inline", linenostart=first_line)
    return Markup(highlight(source, PythonLexer(), formatter))


def stylesheet() -> str:
    from importlib import resources

    own = (resources.files("paperproof") / "templates" / "style.css").read_text(encoding="utf-8")
    return own + "\n" + _FORMATTER.get_style_defs(".code") + "\n" + _CODE_CONTRAST


# Pygments' default style has a few token colours below WCAG AA (4.5:1) on its background; darker ones.
_CODE_CONTRAST = (".code .nd { color: #8a22dd }\n.code .ow { color: #8a22dd; font-weight: bold }\n"
                  ".code .nl { color: #5c5c00 }\n.code .w { color: #6b6b6b }\n")


def static_files() -> dict[str, str]:
    """Files served from `static/` besides the stylesheet: the favicon and the two scripts."""
    from importlib import resources

    folder = resources.files("paperproof") / "templates"
    return {name: (folder / name).read_text(encoding="utf-8") for name in ("favicon.svg", "search.js", "site.js")}


class Layout(NamedTuple):
    """The links the layout (`base.html`) puts on every page. They are the same for the whole build, so they
    are made once here, not by fourteen template calls a page (a few percent of rendering a paper)."""

    home: str
    papers: str
    repos: str
    tasks: str
    statuses: str
    attribution: str
    search: str
    favicon: str
    stylesheet: str
    script: str
    feed: str
    sitemap: str
    api_papers: str


def layout(urls: SiteUrls) -> Layout:
    return Layout(home=urls.home(), papers=urls.papers(), repos=urls.repos(), tasks=urls.tasks(),
                  statuses=urls.statuses(), attribution=urls.attribution(), search=urls.search(),
                  favicon=urls.static("favicon.svg"), stylesheet=urls.static("style.css"),
                  script=urls.static("site.js"), feed=urls.feed(), sitemap=urls.sitemap(),
                  api_papers=urls.api_papers())


def environment(urls: SiteUrls) -> Environment:
    env = Environment(
        loader=PackageLoader("paperproof", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # templates are package files: no up-to-date check per page rendered
    )
    env.globals["urls"] = urls
    env.globals["layout"] = layout(urls)
    env.filters["http_url"] = http_url
    _explain(env)
    return env


def _explain(env: Environment) -> None:
    """What the sample tables link their headings and badges to (`build.glossary`)."""
    from paperproof.build import glossary, paper_verdict

    env.globals.update(anchor=glossary.anchor, partial_ran=glossary.partial_ran, terms=glossary.TERMS,
                       sample_grade=paper_verdict.sample_grade, finding_grade=paper_verdict.finding_grade,
                       grade_labels=paper_verdict.GRADE_LABELS)


def bibtex(key: str, title: str, authors: list[str], year: str | None, url: str | None) -> str:
    """A BibTeX entry; braces in fields are dropped so a title cannot break out of its field."""
    def clean(text: str) -> str:
        return text.replace("{", "").replace("}", "").replace("\\", "")

    fields = [f"  title = {{{clean(title)}}}", f"  author = {{{clean(' and '.join(authors))}}}"]
    if year:
        fields.append(f"  year = {{{clean(year)}}}")
    if url:
        fields.append(f"  url = {{{clean(url)}}}")
    return "@misc{" + clean(key).replace(",", "") + ",\n" + ",\n".join(fields) + "\n}"
