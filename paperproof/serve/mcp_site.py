"""What the MCP server asks of a built site, answered from its JSON twins alone.

It reads the files a build published (`index.json`, `paper/<slug>.json`, `code/<sha256>.json`, the paper list
`api/papers.json` and the status pages `status/<status>.json`), so it needs nothing of the build and works on a
copy of a site made elsewhere. Search reuses those lists: the site's own search index is Pagefind's, which only
its JavaScript reads. What it gathers once (arXiv ids, code hashes, the search entries) is kept until the
site's build marker changes, so a site rebuilt under a running server is read again.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = ".paperproof-build"  # written by every build (`build.manifest.MARKER`)
HEAD_BYTES = 4096  # a paper twin's `arxiv_id` comes after only `about`, `url` and `title`
SEARCH_LIMIT = 100

_SLUG = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+-]*")
_HEX = re.compile(r"[0-9a-f]{16,64}")
_ARXIV = re.compile(r"(?:arxiv:|https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/)?(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})"
                    r"(?:v\d+)?(?:\.pdf)?", re.IGNORECASE)
_ARXIV_FIELD = re.compile(rb',"arxiv_id":(?:null|"((?:[^"\\]|\\.)*)")')


class NotInSite(LookupError):
    """A question the site cannot answer; the message says what was asked and why."""


def arxiv_key(text: str) -> str | None:
    """The arXiv id in `text` (`2403.04551`, `arXiv:2403.04551v2`, its abs or pdf URL), without its version."""
    found = _ARXIV.fullmatch(text.strip())
    return found.group(1).lower() if found else None


@dataclass(frozen=True)
class _Entry:
    """One thing search can find: its words (lower case), the name a phrase is matched against, and the result."""

    kind: int  # 0 paper, 1 sample: papers are listed first
    name: str
    words: str
    result: dict[str, Any]


class SiteReader:
    """A built site at `root`, read for the MCP tools (`serve.mcp_server`)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not (self.root / "index.json").is_file() or not (self.root / MARKER).is_file():
            raise FileNotFoundError(f"{root}: no index.json and {MARKER}: not a site paperproof built "
                                    "(make one with `paperproof build --out DIR`)")
        self._built: str | None = None
        self._base = ""
        self._arxiv: dict[str, list[str]] | None = None
        self._codes: list[str] | None = None
        self._entries: list[_Entry] | None = None

    # --- files ---

    def _fresh(self) -> None:
        """Forget what was gathered when the site was rebuilt since (its marker names another tree)."""
        built = (self.root / MARKER).read_text(encoding="utf-8")
        if built != self._built:
            self._built, self._arxiv, self._codes, self._entries = built, None, None, None
            self._base = str(self._read("index.json")["about"]["site"]).rstrip("/")

    def _read(self, relative: str) -> dict[str, Any]:
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root):
            raise NotInSite(f"{relative}: outside the site")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise NotInSite(f"{relative}: not in the site") from None
        if not isinstance(data, dict):
            raise NotInSite(f"{relative}: not a record of this site")
        return data

    def _file(self, url: str) -> str:
        """The file under the site that serves a twin's URL (site-relative, or under the site's `--base-url`)."""
        if self._base and url.startswith(self._base + "/"):
            url = url[len(self._base):]
        return url.lstrip("/")

    # --- papers ---

    def paper(self, ident: str) -> dict[str, Any]:
        """A paper's twin, by arXiv id (any of its spellings) or by slug."""
        self._fresh()
        key = arxiv_key(ident)
        if key is not None:
            slugs = self._arxiv_index().get(key, [])
            if len(slugs) > 1:
                raise NotInSite(f"arXiv id {key} names {len(slugs)} papers here: give one of their slugs: "
                                + ", ".join(slugs))
            if slugs:
                return self._read(f"paper/{slugs[0]}.json")
        slug = ident.strip()
        if _SLUG.fullmatch(slug):
            try:
                return self._read(f"paper/{slug}.json")
            except NotInSite:
                pass
        elif key is None:
            raise NotInSite(f"{ident!r} is neither an arXiv id (2403.04551) nor a paper slug (letters, digits, "
                            "'-', '_', '.', '+')")
        what = f"arXiv id {key}" if key is not None else f"slug {slug!r}"
        raise NotInSite(f"no paper with {what} in this site; `search` finds papers by title")

    def paper_samples(self, ident: str) -> dict[str, Any]:
        """A paper's samples as its twin lists them (status, what was checked, fidelity, code sha256)."""
        twin = self.paper(ident)
        verification = twin.get("verification") or {}
        return {"title": twin.get("title"), "arxiv_id": twin.get("arxiv_id"), "page_url": verification.get("page_url"),
                "json_url": verification.get("json_url"), "samples": verification.get("samples", [])}

    def _arxiv_index(self) -> dict[str, list[str]]:
        """arXiv id -> paper slugs, from the head of every paper twin (the whole twin where a long title hides it)."""
        if self._arxiv is None:
            index: dict[str, list[str]] = {}
            folder = self.root / "paper"
            names = sorted(p.name for p in folder.iterdir() if p.suffix == ".json") if folder.is_dir() else []
            for name in names:
                with open(folder / name, "rb") as handle:
                    head = handle.read(HEAD_BYTES)
                found = _ARXIV_FIELD.search(head)
                if found is None and len(head) == HEAD_BYTES:
                    value = self._read(f"paper/{name}").get("arxiv_id")
                else:
                    value = json.loads(b'"' + found.group(1) + b'"') if found and found.group(1) is not None else None
                key = arxiv_key(value) if isinstance(value, str) else None
                if key is not None:
                    index.setdefault(key, []).append(name.removesuffix(".json"))
            self._arxiv = index
        return self._arxiv

    # --- code ---

    def code(self, ident: str) -> dict[str, Any]:
        """A code record (`/code/<sha256>.json`) by its sha256, or by a prefix of at least 16 hex digits that one
        code alone begins with."""
        self._fresh()
        text = ident.strip().lower()
        if not _HEX.fullmatch(text):
            raise NotInSite(f"{ident!r} is not a code sha256: give its 64 hex digits, or at least the 16 that pages "
                            "and twins show (`code_sha256_prefix`)")
        if len(text) == 64:
            try:
                return self._read(f"code/{text}.json")
            except NotInSite:
                raise NotInSite(f"no code with sha256 {text} in this site") from None
        names = self._code_names()
        start = bisect_left(names, text)
        matches = []
        for name in names[start:]:
            if not name.startswith(text):
                break
            matches.append(name)
        if not matches:
            raise NotInSite(f"no code whose sha256 begins with {text} in this site")
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
            raise NotInSite(f"sha256 prefix {text} is ambiguous: {len(matches)} codes begin with it ({shown}); "
                            "give more digits")
        return self._read(f"code/{matches[0]}.json")

    def _code_names(self) -> list[str]:
        if self._codes is None:
            folder = self.root / "code"
            self._codes = sorted(p.name.removesuffix(".json") for p in folder.iterdir()
                                 if p.suffix == ".json") if folder.is_dir() else []
        return self._codes

    # --- search ---

    def search(self, query: str, limit: int = 20) -> dict[str, Any]:
        """Papers (title, authors, tasks) and samples (entry, repository, path) matching every word of `query`:
        those whose title or entry holds the whole query first, then papers before samples, then by name."""
        self._fresh()
        words = query.lower().split()
        if not words:
            raise NotInSite("an empty query: give words of a title, an author, a task, an entry or a repository")
        if not 1 <= limit <= SEARCH_LIMIT:
            raise NotInSite(f"limit {limit}: give 1 to {SEARCH_LIMIT}")
        phrase = " ".join(words)
        hits = [e for e in self._search_entries() if all(w in e.words for w in words)]
        hits.sort(key=lambda e: (phrase not in e.name.lower(), e.kind, e.name.lower(), e.result.get("json_url", "")))
        return {"query": query, "total": len(hits), "results": [e.result for e in hits[:limit]]}

    def _search_entries(self) -> list[_Entry]:
        if self._entries is None:
            entries = []
            for listing in self._pages("api/papers.json", "papers"):
                title = str(listing.get("title", ""))
                words = " ".join([title, listing.get("slug", ""), *listing.get("authors", []), *listing.get("tasks", [])])
                entries.append(_Entry(0, title, words.lower(), {"kind": "paper", **listing}))
            for status in self._read("status.json").get("statuses", []):
                for sample in self._pages(self._file(status["json_url"]), "samples"):
                    words = " ".join([sample.get("entry", ""), sample.get("repo", ""), sample.get("path", "")])
                    entries.append(_Entry(1, str(sample.get("entry", "")), words.lower(), {"kind": "sample", **sample}))
            self._entries = entries
        return self._entries

    def _pages(self, first: str, field: str) -> list[dict[str, Any]]:
        """The rows `field` of a paged list, from its first page to its last (`paging.next`)."""
        rows: list[dict[str, Any]] = []
        relative: str | None = first
        seen: set[str] = set()
        while relative is not None and relative not in seen:
            seen.add(relative)
            page = self._read(relative)
            rows.extend(page.get(field, []))
            following = (page.get("paging") or {}).get("next")
            relative = self._file(following) if following else None
        return rows


__all__ = ["NotInSite", "SiteReader", "arxiv_key"]
