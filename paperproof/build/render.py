"""Rendering records into pages: Jinja2 with autoescape, Markdown sanitised by nh3, Pygments for code.

Every page is rendered from the same record as its JSON twin, and nothing harvested (abstracts,
READMEs, docstrings) reaches a page except escaped or through the sanitiser.
"""

from __future__ import annotations

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


def markdown_html(text: str | None, heading_offset: int = 2) -> Markup:
    """Untrusted Markdown to safe HTML: render, then keep only an allowlist of tags and attributes.

    Headings are shifted down so a README's `#` never competes with the page's own `h1`.
    """
    if not text:
        return Markup("")
    html = markdown.markdown(text, extensions=["fenced_code", "tables"], output_format="html")
    for level in range(6, 0, -1):
        target = min(level + heading_offset, 6)
        html = html.replace(f"<h{level}>", f"<h{target}>").replace(f"</h{level}>", f"</h{target}>")
    clean = nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                      url_schemes={"http", "https", "mailto"}, link_rel="nofollow noopener noreferrer")
    return Markup(clean)


_FORMATTER = HtmlFormatter(cssclass="code", linenos="inline")


def code_html(source: str, first_line: int) -> Markup:
    formatter = HtmlFormatter(cssclass="code", linenos="inline", linenostart=first_line)
    return Markup(highlight(source, PythonLexer(), formatter))


def stylesheet() -> str:
    from importlib import resources

    own = (resources.files("paperproof") / "templates" / "style.css").read_text(encoding="utf-8")
    return own + "\n" + _FORMATTER.get_style_defs(".code")


def environment(urls: SiteUrls) -> Environment:
    env = Environment(
        loader=PackageLoader("paperproof", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["urls"] = urls
    return env


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
