"""A real HTTP server on loopback that plays the parts of the GitHub REST API a harvest uses.

Started by the tests themselves (`ThreadingHTTPServer` on 127.0.0.1, port 0, in a thread). It serves
repositories, licences, head commits and tarballs (built from files, packed as GitHub packs them:
one `owner-name-<sha7>/` folder and a pax global header naming the commit), with ETags and 304s;
renames (301 to `/repositories/<id>`), 404, 451, blocked 403, private repositories; and faults:
rate limits with reset headers, `retry-after`, slow answers, truncated bodies and 502s. Every
request is logged, so tests can count what was asked and what was answered.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tarfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class FakeRepo:
    full_name: str
    files: dict[str, bytes] = field(default_factory=dict)
    default_branch: str = "main"
    spdx: str | None = None  # None: GET /license answers 404 (no licence file)
    licence_path: str = "LICENSE"
    private: bool = False
    status: int = 200  # 404, 451, or 403 (blocked)
    renamed_from: tuple[str, ...] = ()
    tarball: bytes | None = None  # served as is (hostile corpus); else packed from `files`
    empty: bool = False
    id: int = 0

    @property
    def sha(self) -> str:
        digest = hashlib.sha1()
        if self.tarball is not None:
            digest.update(self.tarball)
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + self.files[path] + b"\0")
        return digest.hexdigest()

    def packed(self) -> bytes:
        if self.tarball is not None:
            return self.tarball
        top = f"{self.full_name.replace('/', '-')}-{self.sha[:7]}"
        return pack(top, self.files, comment=self.sha)


def pack(top: str, files: dict[str, bytes], comment: str = "") -> bytes:
    """A deterministic tar.gz with one top folder, as GitHub's tarball endpoint makes them."""
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT,
                          pax_headers={"comment": comment} if comment else {}) as archive:
            folder = tarfile.TarInfo(top + "/")
            folder.type, folder.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(folder)
            for path in sorted(files):
                info = tarfile.TarInfo(f"{top}/{path}")
                info.size, info.mode = len(files[path]), 0o644
                archive.addfile(info, io.BytesIO(files[path]))
    return raw.getvalue()


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@dataclass
class Hit:
    path: str
    status: int
    conditional: bool
    authorised: bool


class GitHubServer:
    """The server and its knobs; use as a context manager."""

    def __init__(self, codeload: GitHubServer | None = None) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.hits: list[Hit] = []
        self.lock = threading.Lock()
        self.codeload = codeload
        if codeload is not None:
            codeload.repos = self.repos  # the tarball host serves the same repositories
        self.slow: dict[str, float] = {}  # path -> seconds before answering
        self.slow_once: set[str] = set()  # paths that are slow only the first time
        self.slow_entered = threading.Event()
        self.truncate: dict[str, int] = {}  # path -> how many answers to cut short (-1: all)
        self.fail: dict[str, int] = {}  # path -> how many 502s before answering (-1: all)
        self.retry_after_once: dict[str, tuple[int, float]] = {}  # path -> (status, seconds)
        self.limited_from: int | None = None  # API requests from this index on are refused...
        self.limited_until: float = 0.0  # ...until this epoch time
        self._api_requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # --- lifecycle ---

    def __enter__(self) -> GitHubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, repo: FakeRepo) -> FakeRepo:
        repo.id = repo.id or len(self.repos) + 1000
        self.repos[repo.full_name.lower()] = repo
        return repo

    def requests(self, prefix: str = "") -> list[Hit]:
        with self.lock:
            return [h for h in self.hits if h.path.startswith(prefix)]

    def reset_log(self) -> None:
        with self.lock:
            self.hits.clear()

    # --- lookups ---

    def find(self, owner: str, name: str) -> tuple[FakeRepo | None, bool]:
        """(repo, renamed): the repository under its name, or under an old name it was renamed from."""
        wanted = f"{owner}/{name}".lower()
        if wanted in self.repos:
            return self.repos[wanted], False
        for repo in self.repos.values():
            if wanted in (old.lower() for old in repo.renamed_from):
                return repo, True
        return None, False

    def by_id(self, ident: int) -> FakeRepo | None:
        return next((r for r in self.repos.values() if r.id == ident), None)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                server._serve(self)

        return Handler

    # --- answering ---

    def _serve(self, req: BaseHTTPRequestHandler) -> None:
        path = req.path.split("?", 1)[0]
        with self.lock:
            once = path in self.slow_once
            delay = self.slow.get(path, 0.0)
            if once:
                self.slow_once.discard(path)
                self.slow.pop(path, None)
        if delay:
            self.slow_entered.set()
            time.sleep(delay)
        status, headers, body = self._answer(req, path)
        etag = headers.get("ETag")
        if status == 200 and etag and req.headers.get("If-None-Match") == etag:
            status, body = 304, b""
        truncated = False
        with self.lock:
            left = self.truncate.get(path, 0)
            if status == 200 and left:
                truncated = True
                self.truncate[path] = left - 1 if left > 0 else -1
            self.hits.append(Hit(path, status, "If-None-Match" in req.headers, "Authorization" in req.headers))
        req.send_response(status)
        for name, value in headers.items():
            req.send_header(name, value)
        req.send_header("Content-Length", str(len(body) + (100 if truncated else 0)))
        if truncated:
            req.send_header("Connection", "close")
            req.close_connection = True
        req.end_headers()
        try:
            req.wfile.write(body[: len(body) // 2] if truncated else body)
            req.wfile.flush()
        except OSError:
            pass

    def _json(self, status: int, data: object, extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps(data, sort_keys=True).encode()
        headers = {"Content-Type": "application/json; charset=utf-8", **(extra or {})}
        if status == 200:
            headers["ETag"] = '"' + hashlib.sha1(body).hexdigest() + '"'
        return status, headers, body

    def _quota(self, path: str) -> tuple[int, dict[str, str], bytes] | None:
        """A rate-limit refusal for this request, or None; quota headers are set on every API answer."""
        with self.lock:
            index = self._api_requests
            self._api_requests += 1
            special = self.retry_after_once.pop(path, None)
            limited = self.limited_from is not None and index >= self.limited_from and time.time() < self.limited_until
        if special is not None:
            status, seconds = special
            return self._json(status, {"message": "You have exceeded a secondary rate limit."},
                              {"Retry-After": str(int(seconds))})
        if limited:
            return self._json(403, {"message": "API rate limit exceeded"},
                              {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(self.limited_until) + 1)})
        return None

    def _answer(self, req: BaseHTTPRequestHandler, path: str) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            failing = self.fail.get(path, 0)
            if failing:
                self.fail[path] = failing - 1 if failing > 0 else -1
        if failing:
            return 502, {"Content-Type": "text/plain"}, b"bad gateway"
        m = re.fullmatch(r"/codeload/([^/]+)/([^/]+)/legacy\.tar\.gz/([0-9a-f]+)", path)
        if m:
            repo, _ = self.find(m.group(1), m.group(2))
            if repo is None or m.group(3) != repo.sha:
                return self._json(404, {"message": "Not Found"})
            return 200, {"Content-Type": "application/x-gzip"}, repo.packed()
        limited = self._quota(path)
        if limited is not None:
            return limited
        m = re.fullmatch(r"/repositories/(\d+)", path)
        if m:
            repo = self.by_id(int(m.group(1)))
            return self._repo_json(repo) if repo else self._json(404, {"message": "Not Found"})
        m = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not m:
            return self._json(404, {"message": "Not Found"})
        repo, renamed = self.find(m.group(1), m.group(2))
        rest = m.group(3) or ""
        if repo is None:
            return self._json(404, {"message": "Not Found"})
        if renamed:
            target = f"/repositories/{repo.id}" if not rest else f"/repos/{repo.full_name}{rest}"
            return self._json(301, {"message": "Moved Permanently"}, {"Location": self.url + target})
        if repo.status == 451:
            return self._json(451, {"message": "Repository access blocked", "block": {"reason": "dmca"}})
        if repo.status == 403:
            return self._json(403, {"message": "Repository access blocked", "block": {"reason": "tos"}})
        if repo.status != 200:
            return self._json(repo.status, {"message": "Not Found"})
        if not rest:
            return self._repo_json(repo)
        if rest == "/license":
            if repo.spdx is None:
                return self._json(404, {"message": "Not Found"})
            return self._json(200, {"name": repo.licence_path, "path": repo.licence_path,
                                    "license": {"key": repo.spdx.lower(), "spdx_id": repo.spdx}})
        m = re.fullmatch(r"/commits/([^/]+)", rest)
        if m:
            if repo.empty:
                return self._json(409, {"message": "Git Repository is empty."})
            if m.group(1) != repo.default_branch:
                return self._json(404, {"message": "No commit found for SHA"})
            if "sha" in req.headers.get("Accept", ""):
                body = repo.sha.encode()
                return 200, {"Content-Type": "text/plain", "ETag": '"' + hashlib.sha1(body).hexdigest() + '"'}, body
            return self._json(200, {"sha": repo.sha})
        m = re.fullmatch(r"/tarball/([0-9a-f]+)", rest)
        if m:
            base = (self.codeload or self).url
            owner, name = repo.full_name.split("/")
            return 302, {"Location": f"{base}/codeload/{owner}/{name}/legacy.tar.gz/{m.group(1)}"}, b""
        return self._json(404, {"message": "Not Found"})

    def _repo_json(self, repo: FakeRepo) -> tuple[int, dict[str, str], bytes]:
        owner, name = repo.full_name.split("/")
        return self._json(200, {
            "id": repo.id, "name": name, "full_name": repo.full_name, "owner": {"login": owner},
            "private": repo.private, "html_url": f"https://github.com/{repo.full_name}",
            "default_branch": repo.default_branch,
        })
