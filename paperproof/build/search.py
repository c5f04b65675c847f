"""Static search over papers with Pagefind: titles, authors, tasks and abstracts, nothing else.

Memory and disk at archive scale. Pagefind holds an index in memory while it builds it, and the memory
grows with the pages. So:

- only papers are indexed, and only four fields of each. The render process that writes a paper's page
  also makes its search record (`record`: the URL of the page, the four fields as plain text and as
  Pagefind metadata); the record is kept with the paper in the build's manifest, so an unchanged paper's
  record is at hand in the next build without reading its page;
- papers are bucketed by the first two characters of their slug, and consecutive buckets (in sorted
  order) are packed into shards of at most `SHARD_SIZE` papers (`plan_counts`; a bucket larger than a
  shard is cut into consecutive slices). Pagefind holds about 95 KB per paper while it indexes (measured
  on the synthetic archive of `bench/`), so a shard of 5,000 papers needs about 0.5 GB. Each shard is
  indexed by its own Pagefind process (two at a time in a build), written to `pagefind/<n>/`, and indexed
  again only when the record of one of its papers changed. What a shard is made from is its records, this
  module and the Pagefind binary (`version`), not the rest of paperproof: a release that changes the
  templates renders every page again but keeps the search index;
- the search page loads the first shard with Pagefind's UI and merges the others (`mergeIndex`), so
  one query searches every shard.

The records reach Pagefind through its service protocol (`pagefind --service`, the binary that
`pagefind[bin]` bundles): each message is base64 of a JSON object, ended by a comma, answered the same way.
`Indexer` speaks it directly, because Pagefind's Python wrapper reads one answer per 0.1 s poll (ten records
a second), and its directory indexing would read every paper page back from disk, which at archive scale
no longer sits in the page cache (the full build waited on the disk for most of its search stage). When
the binary is missing or fails, the site is built without search and the build summary says why.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import tempfile
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperproof.build.manifest import digest
from paperproof.plumbing import host_process
from paperproof.plumbing.files import update_tree

SHARD_SIZE = 5_000  # Pagefind holds about 95 KB per paper while it indexes: about 0.5 GB per shard
FIELDS = ["title", "authors", "tasks", "abstract"]
SPLIT = ("Only paper pages, and only their title, authors, tasks and abstract. Papers are bucketed by the first "
         f"two characters of their slug; consecutive buckets are packed into shards of at most {SHARD_SIZE:,} "
         "papers (a larger bucket is cut into consecutive slices), each indexed by its own Pagefind process; the "
         "search page merges every shard into one query.")
# Files of Pagefind's bundle that this site does not use (other UIs): never written (`unused`).
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


def record(url: str, title: str, authors: list[str], tasks: list[str], abstract: str, date: str | None) -> str:
    """A paper's search record (JSON, one line): Pagefind's URL, content and metadata for its page at `url`
    (site-relative). The content is the four indexed fields as plain text, each ended as a sentence, so that a
    result's excerpt does not run one field into the next ("… Generalization. Large datasets …")."""
    meta = {"title": title}
    if authors:
        meta["authors"] = ", ".join(authors)
    if tasks:
        meta["tasks"] = ", ".join(tasks)
    if date:
        meta["date"] = date
    parts = [part.strip() for part in (title, meta.get("authors"), meta.get("tasks"), abstract) if part and part.strip()]
    content = "\n".join(part if part.endswith((".", "!", "?")) else part + "." for part in parts)
    return json.dumps({"url": url, "content": content, "meta": meta}, ensure_ascii=False, separators=(",", ":"))


_RECORD_URL = re.compile(r'\{"url":\s*("(?:[^"\\]|\\.)*")')  # a record's start: its URL, as JSON


class PagefindError(Exception):
    """Pagefind answered with an error, or exited before it answered."""


class Indexer:
    """One `pagefind --service` process building one index: records in, the index's files out.

    Records are pipelined: up to two windows of `window` messages are in flight, each window written in one
    go, so Pagefind never waits for paperproof to read an answer and send the next record (one at a time,
    each Pagefind process sat idle a quarter of the time, waiting on the round trip). The order is still
    fixed: Pagefind's service reads its input in order and handles one message at a time, so it numbers
    the pages in the order sent and the same records give the same index. Each answer names the page it
    indexed and is checked against the record sent in its place; a Pagefind that answered out of order
    (one that handled messages concurrently) fails the index rather than making one that differs between
    builds."""

    def __init__(self, executable: Path, window: int = 64) -> None:
        # One worker thread: Pagefind handles one message at a time, so more threads only wake each other.
        # In an empty folder of its own, with the host tools' environment: Pagefind reads `pagefind.yml` where it starts.
        self.folder = Path(tempfile.mkdtemp(prefix="paperproof-pagefind-"))
        self.process = host_process.start([str(executable.resolve()), "--service"], self.folder,
                                          extra={"TOKIO_WORKER_THREADS": "1"}, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.window = window
        self._answers: deque[bytes] = deque()  # answers read, not yet looked at
        self._partial = b""  # the start of an answer not yet read to its end
        self._sent = 0

    def _answer(self) -> dict[str, Any]:
        """The next answer's payload; raises on an error or when Pagefind exits."""
        stdout = self.process.stdout
        if not isinstance(stdout, io.BufferedIOBase):  # Popen(stdout=PIPE), default bufsize: a BufferedReader
            raise PagefindError(f"Pagefind's output is not a buffered pipe but {type(stdout).__name__}")
        parts = [self._partial]
        while not self._answers:  # an answer of many megabytes comes in many reads: each is looked at once
            chunk = stdout.read1(1 << 20)
            if not chunk:
                raise PagefindError(f"Pagefind exited (status {self.process.wait()}) before it answered")
            parts.append(chunk)
            if b"," in chunk:
                *complete, rest = b"".join(parts).split(b",")
                self._answers.extend(complete)
                parts = [rest]
        self._partial = b"".join(parts)
        payload = json.loads(base64.b64decode(self._answers.popleft()))["payload"]
        if payload.get("type") == "Error":
            raise PagefindError(str(payload.get("message", "an error without a message")).splitlines()[0][:200])
        return payload

    def _send(self, bodies: list[str]) -> None:
        """Send messages (their payloads as JSON) in one write."""
        assert self.process.stdin is not None
        out = []
        for body in bodies:
            self._sent += 1
            out.append(base64.b64encode(f'{{"message_id":{self._sent},"payload":{body}}}'.encode()))
            out.append(b",")
        self.process.stdin.write(b"".join(out))
        self.process.stdin.flush()

    def _ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one message and wait for its answer (nothing else in flight)."""
        self._send([json.dumps(payload, ensure_ascii=False)])
        return self._answer()

    def _indexed(self, url: str) -> None:
        page = self._answer().get("page_url")
        if page != url:
            raise PagefindError(f"Pagefind answered for {page!r} where {url!r} was sent: it did not index the "
                                "records in the order sent, so the index would differ between builds")

    def index(self, records: list[str], output: Path, leave_out: tuple[str, ...] = ()) -> list[str]:
        """Index the records (from `record`) and write the index to `output`, but for the files named in
        `leave_out`; returns the names of the files `output` then holds, sorted. A record is already the
        JSON of the message's url, content and meta: it is sent as it is."""
        try:
            index_id = self._ask({"type": "NewIndex", "config": {"force_language": "en"}})["index_id"]
            head = f'{{"type":"AddRecord","index_id":{int(index_id)},"language":"en","filters":null,"sort":null,'
            waiting: deque[str] = deque()  # the URLs of the records sent and not yet answered, in order
            for start in range(0, len(records), self.window):
                batch = records[start:start + self.window]
                for line in batch:
                    url = _RECORD_URL.match(line)
                    if url is None:
                        raise PagefindError(f"not a search record: {line[:80]!r}")
                    waiting.append(json.loads(url.group(1)))
                self._send([head + line[1:] for line in batch])
                while len(waiting) > self.window:
                    self._indexed(waiting.popleft())
            while waiting:
                self._indexed(waiting.popleft())
            # The files come back in the answer and are written here: with WriteFiles, Pagefind answers
            # before its writes finish, and exits when its input closes, leaving files cut short.
            answer = self._ask({"type": "GetFiles", "index_id": index_id})["files"]
            files = {f["path"]: base64.b64decode(f["content"]) for f in answer if f["path"] not in leave_out}
            update_tree(output, files)
            return sorted(files)
        except BrokenPipeError as exc:
            raise PagefindError(f"Pagefind exited (status {self.process.wait()}) while it was sent records") from exc
        finally:
            self.close()

    def close(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def index_shards(shards: list[tuple[int, Path, Path]], concurrency: int = 1) -> dict[int, list[str]]:
    """Index each `(shard number, records file, output directory)`, `concurrency` Pagefind processes at a
    time: the file's records (one per line) in one index, written to the output directory without the files
    the shard does not use. Returns each shard's files (names within its directory, sorted), so nobody walks
    the directories again. Raises on the first failure."""
    executable = binary()
    if executable is None:
        raise PagefindError("no Pagefind binary found")

    def one(shard: tuple[int, Path, Path]) -> list[str]:
        number, records_file, output = shard
        return Indexer(executable).index(records_file.read_text(encoding="utf-8").splitlines(), output, unused(number))

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="pagefind") as pool:
        return {number: files for (number, _, _), files in zip(shards, pool.map(one, shards))}


def unused(number: int) -> tuple[str, ...]:
    """The files of Pagefind's bundle that shard `number` leaves out: the other UIs, and, but for the first
    shard (where the search page loads it from), the UI itself."""
    return UNUSED + (("pagefind-ui.js", "pagefind-ui.css") if number > 1 else ())


def version(executable: Path, file_digest: Callable[[Path], str]) -> str:
    """What shapes a shard's files besides its records: this module (the records' format, the messages sent,
    the files left out) and the Pagefind binary, by content (`file_digest` is the manifest's, which reads
    a file again only when it changed on disk)."""
    return digest(Path(__file__).read_bytes(), file_digest(executable.resolve())).hex()


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
