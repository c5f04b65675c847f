"""Static search over papers with Pagefind: titles, authors, tasks and abstracts, nothing else.

Memory at archive scale. Pagefind holds an index in memory while it builds it, and the memory grows
with the pages. So:

- only paper pages are indexed, and only four fields of each: the page marks its title, authors, tasks
  and abstract (`data-pagefind-body`), so Pagefind indexes those and nothing else of it;
- the pages are bucketed by the first two characters of their name: as it is written, each is hard-linked
  into a folder of its bucket laid out like the site (`<bucket>/paper/<name>/index.html`, so Pagefind
  gives it its URL), outside the site (a link costs far less than a file). Consecutive buckets (in
  sorted order) are packed into shards of at most `SHARD_SIZE` papers (`plan_counts`; a bucket larger than a shard is cut
  into consecutive slices). Pagefind holds about 95 KB per paper while it indexes (measured on the
  synthetic archive of `bench/`), so a shard of 5,000 papers needs about 0.5 GB. Each shard is indexed
  by its own Pagefind process (two at a time in a build), written to `pagefind/<n>/`, and indexed again
  only when the indexed fields of one of its papers changed;
- the search page loads the first shard with Pagefind's UI and merges the others (`mergeIndex`), so
  one query searches every shard.

The pages go through Pagefind's Python API (`pagefind[bin]`, which runs the bundled binary): one
`add_directory` call per bucket folder of a shard; only the slice of a bucket larger than a shard is
gathered as hard links in a folder of its own. When the
binary is missing or fails, the site is built without search and the build summary says why.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

SHARD_SIZE = 5_000  # Pagefind holds about 95 KB per paper while it indexes: about 0.5 GB per shard
FIELDS = ["title", "authors", "tasks", "abstract"]
SPLIT = ("Only paper pages, and only their title, authors, tasks and abstract. Papers are bucketed by the first "
         f"two characters of their slug; consecutive buckets are packed into shards of at most {SHARD_SIZE:,} "
         "papers (a larger bucket is cut into consecutive slices), each indexed by its own Pagefind process; the "
         "search page merges every shard into one query.")
# Files of Pagefind's bundle that this site does not use (other UIs); removed from every shard.
UNUSED = ("pagefind-component-ui.css", "pagefind-component-ui.js", "pagefind-modular-ui.css",
          "pagefind-modular-ui.js", "pagefind-highlight.js")


@dataclass
class Shard:
    number: int
    buckets: list[str]
    papers: int
    first_slug: str
    last_slug: str


@dataclass
class SearchResult:
    available: bool
    reason: str | None = None
    shards: list[Shard] = field(default_factory=list)


def bucket(slug: str) -> str:
    head = "".join(c if c.isalnum() else "_" for c in slug[:2].lower())
    return head or "_"


def plan_counts(counts: list[tuple[str, int]], size: int = SHARD_SIZE) -> list[tuple[int, int]]:
    """Shards over buckets given as `(bucket, papers)` in bucket order, as `(first, last)` positions (inclusive)
    in the papers sorted by bucket then slug: consecutive buckets packed up to `size` papers; a bucket larger
    than `size` alone is cut into equal consecutive slices, each its own shard. A changed abstract changes
    one shard; papers added or removed move the boundaries after them only when a shard crosses the limit."""
    pieces: list[tuple[int, int]] = []  # (start, papers)
    start = 0
    for _, n in counts:
        if n <= size:
            pieces.append((start, n))
        else:
            step = -(-n // -(-n // size))
            pieces.extend((start + i, min(step, n - i)) for i in range(0, n, step))
        start += n
    shards: list[list[int]] = []
    for begin, n in pieces:
        if shards and shards[-1][1] - shards[-1][0] + 1 + n <= size:
            shards[-1][1] = begin + n - 1
        else:
            shards.append([begin, begin + n - 1])
    return [(first, last) for first, last in shards]


def plan(buckets: list[tuple[str, list[str]]], size: int = SHARD_SIZE) -> list[tuple[Shard, list[str]]]:
    """`plan_counts` over `(bucket, sorted slugs)`: each shard with its slugs."""
    rows = [(name, slug) for name, slugs in buckets for slug in slugs]
    out = []
    for number, (first, last) in enumerate(plan_counts([(name, len(slugs)) for name, slugs in buckets], size), 1):
        members = rows[first:last + 1]
        names = list(dict.fromkeys(name for name, _ in members))
        out.append((Shard(number, names, len(members), members[0][1], members[-1][1]), [slug for _, slug in members]))
    return out


def index_shards(sites: list[tuple[list[Path], Path]], concurrency: int = 1) -> None:
    """Run Pagefind over each `(site folders, output directory)`, `concurrency` processes at a time: the
    folders' pages (URLs relative to their folder) in one index, written to the output directory. Raises
    on failure."""
    from pagefind.index import PagefindIndex

    async def one(folders: list[Path], output: Path, gate: asyncio.Semaphore) -> None:
        async with gate:
            async with PagefindIndex({"force_language": "en", "output_path": str(output.resolve())}) as index:
                for folder in folders:
                    await index.add_directory(str(folder.resolve()))

    async def index_all() -> None:
        gate = asyncio.Semaphore(max(1, concurrency))
        await asyncio.gather(*(one(folders, output, gate) for folders, output in sites))

    asyncio.run(index_all())


def strip_bundle(directory: Path, number: int) -> None:
    """Remove the files of Pagefind's bundle that this site does not use (the UI lives in the first shard)."""
    for name in UNUSED + (("pagefind-ui.js", "pagefind-ui.css") if number > 1 else ()):
        (directory / name).unlink(missing_ok=True)


def binary() -> Path | None:
    """The Pagefind binary the Python API would run, or None when there is none."""
    try:
        from pagefind.service import get_executable
    except ImportError:
        return None
    try:
        return get_executable()
    except (FileNotFoundError, OSError):
        return None
