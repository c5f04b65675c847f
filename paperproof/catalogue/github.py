"""Asking the GitHub REST API with the manners a shared API expects.

One `GitHubClient` serves every worker thread of a harvest. It sends the token from
`GITHUB_TOKEN` (only to the API's own origin, never along a redirect to another host), a timeout on
every request, conditional requests (`If-None-Match` with the ETag we stored, so an unchanged
repository costs a 304 and no quota), retries with exponential backoff on 5xx, timeouts and broken
bodies, and a shared rate gate: when the API says the quota is spent (`x-ratelimit-remaining: 0`,
`retry-after`, 403/429), every thread waits until the reset if it is near, or the harvest stops with
`RateLimited` saying when to resume. "The API did not answer" (`NoAnswer`) is never confused with an
answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from paperproof import __version__

API_URL = "https://api.github.com"
REDIRECTS = frozenset({301, 302, 303, 307, 308})
RETRY_STATUSES = frozenset({500, 502, 503, 504})
MAX_RATE_ROUNDS = 8
MAX_BACKOFF = 60.0


@dataclass(frozen=True)
class ClientSettings:
    """How to talk to the API; `from_env` takes the token from `GITHUB_TOKEN`."""

    api_url: str = API_URL
    token: str | None = None
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 1.0
    max_wait: float = 300.0
    max_download_bytes: int = 1 << 30
    max_redirects: int = 5

    @classmethod
    def from_env(cls, **overrides: Any) -> ClientSettings:
        token = os.environ.get("GITHUB_TOKEN") or None
        return cls(token=token, **overrides)


class RateLimited(Exception):
    """The API asked us to wait longer than we are willing to; resume at `until` (epoch seconds)."""

    def __init__(self, until: float, reason: str) -> None:
        super().__init__(reason)
        self.until = until
        self.reason = reason


class NoAnswer(Exception):
    """No usable answer after every retry (timeouts, 5xx, truncated bodies, refused connections)."""


class CredentialsRefused(Exception):
    """The API refused the token (401); going on would only spend requests."""


class TooLarge(Exception):
    """A download was bigger than the cap."""


@dataclass(frozen=True)
class Answer:
    """One final answer (after redirects): its status, the API path that gave it, its ETag and body."""

    status: int
    path: str
    etag: str | None
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    redirected: bool = False

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class RateGate:
    """The quota as every thread sees it: blocked until a reset time, which waits or stops the harvest."""

    def __init__(self, max_wait: float, sleep: Callable[[float], None] = time.sleep) -> None:
        self.max_wait = max_wait
        self.sleep = sleep
        self._until = 0.0
        self._reason = ""
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            until, reason = self._until, self._reason
        delay = until - time.time()
        if delay <= 0:
            return
        if delay > self.max_wait:
            raise RateLimited(until, reason)
        self.sleep(delay)

    def block(self, until: float, reason: str) -> None:
        with self._lock:
            if until > self._until:
                self._until, self._reason = until, reason

    def observe(self, response: httpx.Response) -> bool:
        """Note the quota headers; True when this response is a refusal to be retried after the wait."""
        headers = response.headers
        now = time.time()
        remaining = headers.get("x-ratelimit-remaining")
        reset = _number(headers.get("x-ratelimit-reset"))
        retry_after = _retry_after(headers.get("retry-after"), now)
        status = response.status_code
        refused = status == 429 or (status == 403 and (remaining == "0" or retry_after is not None))
        if refused:
            until = retry_after if retry_after is not None else reset if reset is not None else now + 60
            self.block(max(until, now + 1.0), f"HTTP {status} rate limit"
                       + (f" (retry-after {headers.get('retry-after')})" if retry_after is not None else ""))
            return True
        if remaining == "0" and reset is not None:
            self.block(reset, "quota spent (x-ratelimit-remaining: 0)")
        return False


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _retry_after(value: str | None, now: float) -> float | None:
    """`retry-after` as an epoch time: seconds from now, or an HTTP date."""
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return now + max(seconds, 0.0)
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return now + 60


def _describe(exc: Exception) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class GitHubClient:
    """A thread-safe client for the REST API at `settings.api_url` (GitHub's, Enterprise's, or a test server's)."""

    def __init__(self, settings: ClientSettings, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.sleep = sleep
        self.gate = RateGate(settings.max_wait, sleep)
        self.base = settings.api_url.rstrip("/")
        origin = urlsplit(self.base)
        self._origin = (origin.scheme, origin.netloc)
        self._http = httpx.Client(
            timeout=httpx.Timeout(settings.timeout),
            follow_redirects=False,
            headers={"User-Agent": f"paperproof/{__version__} (repository harvest)",
                     "X-GitHub-Api-Version": "2022-11-28"},
        )
        self.answers: Counter[int] = Counter()
        self._count_lock = threading.Lock()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- requests -------------------------------------------------------------------------

    def _path(self, url: str) -> str:
        """The API path of a URL on the API's origin (`/repos/o/r`), else the URL itself."""
        return url[len(self.base):] if url.startswith(self.base + "/") else url

    def _headers(self, url: str, accept: str | None, etag: str | None) -> dict[str, str]:
        headers = {"Accept": accept or "application/vnd.github+json"}
        parts = urlsplit(url)
        if self.settings.token and (parts.scheme, parts.netloc) == self._origin:
            headers["Authorization"] = f"Bearer {self.settings.token}"
        if etag:
            headers["If-None-Match"] = etag
        return headers

    def _count(self, status: int) -> None:
        with self._count_lock:
            self.answers[status] += 1

    def _pause(self, failures: int, asked: float | None = None) -> None:
        """Exponential backoff with jitter before retry `failures`; a server's own `retry-after` when it gave one."""
        if asked is not None and 0 <= asked <= self.settings.max_wait:
            self.sleep(asked)
            return
        delay = min(self.settings.backoff * 2 ** (failures - 1), MAX_BACKOFF)
        self.sleep(delay * (1 + random.random() / 4))

    def _send(self, url: str, headers: dict[str, str], stream: bool) -> httpx.Response:
        """One request with rate waits and retries; a 5xx after the last retry is NoAnswer."""
        failures = 0
        rate_rounds = 0
        while True:
            self.gate.wait()
            try:
                request = self._http.build_request("GET", url, headers=headers)
                response = self._http.send(request, stream=stream)
                if not stream:
                    response.read()
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                failures += 1
                if failures > self.settings.retries:
                    raise NoAnswer(f"GET {self._path(url)}: {_describe(exc)} after {failures} tries") from exc
                self._pause(failures)
                continue
            self._count(response.status_code)
            if self.gate.observe(response):
                response.close()
                rate_rounds += 1
                if rate_rounds > MAX_RATE_ROUNDS:
                    raise RateLimited(time.time() + 60,
                                      f"GET {self._path(url)}: still rate limited after {rate_rounds} waits")
                continue
            if response.status_code in RETRY_STATUSES:
                response.close()
                failures += 1
                if failures > self.settings.retries:
                    raise NoAnswer(f"GET {self._path(url)}: HTTP {response.status_code} after {failures} tries")
                self._pause(failures, _number(response.headers.get("retry-after")))
                continue
            if response.status_code == 401:
                response.close()
                raise CredentialsRefused(f"GET {self._path(url)}: HTTP 401, the API refused the credentials "
                                         "(check GITHUB_TOKEN)")
            return response

    def get(self, path: str, etags: Mapping[str, str] | None = None, accept: str | None = None) -> Answer:
        """GET an API path, following redirects; each hop is conditional on the ETag stored for its path."""
        url = self.base + path
        redirected = False
        for _ in range(self.settings.max_redirects + 1):
            hop = self._path(url)
            response = self._send(url, self._headers(url, accept, (etags or {}).get(hop)), stream=False)
            location = response.headers.get("location")
            if response.status_code in REDIRECTS and location:
                url = urljoin(url, location)
                if urlsplit(url).scheme not in ("http", "https"):
                    raise NoAnswer(f"GET {path}: redirected to a non-HTTP location {location!r}")
                redirected = True
                continue
            return Answer(response.status_code, hop, response.headers.get("etag"), response.content,
                          dict(response.headers), redirected)
        raise NoAnswer(f"GET {path}: more than {self.settings.max_redirects} redirects")

    def download(self, path: str, dest: Path) -> tuple[str, int]:
        """Stream a file (a tarball) to `dest`, following redirects; (sha256, size). Retries restart it."""
        cap = self.settings.max_download_bytes
        failures = 0
        while True:
            url = self.base + path
            try:
                for _ in range(self.settings.max_redirects + 1):
                    response = self._send(url, self._headers(url, "application/vnd.github+json", None), stream=True)
                    try:
                        location = response.headers.get("location")
                        if response.status_code in REDIRECTS and location:
                            url = urljoin(url, location)
                            continue
                        if response.status_code != 200:
                            raise NoAnswer(f"GET {path}: HTTP {response.status_code}")
                        declared = _number(response.headers.get("content-length"))
                        if declared is not None and declared > cap:
                            raise TooLarge(f"tarball of {int(declared)} bytes is over the {cap}-byte download cap")
                        digest = hashlib.sha256()
                        size = 0
                        with dest.open("wb") as handle:
                            for chunk in response.iter_bytes(1 << 16):
                                size += len(chunk)
                                if size > cap:
                                    raise TooLarge(f"tarball is over the {cap}-byte download cap")
                                digest.update(chunk)
                                handle.write(chunk)
                            handle.flush()
                            os.fsync(handle.fileno())
                        return digest.hexdigest(), size
                    finally:
                        response.close()
                raise NoAnswer(f"GET {path}: more than {self.settings.max_redirects} redirects")
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                failures += 1
                if failures > self.settings.retries:
                    raise NoAnswer(f"GET {path}: {_describe(exc)} after {failures} tries") from exc
                self._pause(failures)
