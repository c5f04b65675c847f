"""The harvest stage: every repository the archive's code links name, asked of the GitHub API.

For each unique normalised repository (plus the curated community list) it asks for the
repository, its licence and its default branch's head commit, downloads the tarball at that commit
into the content-addressed store, unpacks it safely, and writes a `RepoRecord`. Records say what
the host answered (`ok`, `moved`, `not_found`, `unavailable`, `private`) or that it did not answer
(`rate_limited`, `error`), never one for the other.

Resumable: each settled repository is appended to the store's journal after its record is written;
a run that was killed or stopped continues with the rest. A run started after a complete one asks
again with the stored ETags, so unchanged repositories cost a 304 each and write nothing. A failed
refresh keeps the last good record and snapshot and only says what failed (`refresh_failed`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from paperproof.catalogue import licence
from paperproof.catalogue.archive import Archive, open_archive
from paperproof.catalogue.community import Community, curated
from paperproof.catalogue.github import (
    API_URL,
    Answer,
    ClientSettings,
    CredentialsRefused,
    GitHubClient,
    NoAnswer,
    RateLimited,
    TooLarge,
)
from paperproof.catalogue.repo_record import Reach, ReachStatus, RepoRecord
from paperproof.catalogue.repo_url import RepoKey, safe_key
from paperproof.catalogue.repos import find_readme
from paperproof.catalogue.store import HarvestState, Store
from paperproof.catalogue.tarsafe import Limits, Refused

FINAL = frozenset({"ok", "moved", "not_found", "unavailable", "private"})
SHA_MEDIA_TYPE = "application/vnd.github.sha"


@dataclass
class HarvestConfig:
    archive: str | None = None
    store: Path = Path(".paperproof-store")
    api_url: str = API_URL
    concurrency: int = 4
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 1.0
    max_wait: float = 300.0
    token: str | None = None
    limits: Limits = field(default_factory=Limits)
    max_download_bytes: int = 1 << 30
    community: Community | None = None  # None: the curated list bundled with paperproof


@dataclass
class Outcome:
    """What asking about one repository produced; `record` None means "leave the stored record as it is"."""

    key: RepoKey
    record: RepoRecord | None
    settled: bool
    downloaded: int = 0
    stop: Exception | None = None
    failure: str | None = None  # `error` or `rate_limited` when the API gave no answer this time


@dataclass
class HarvestSummary:
    store: str
    repositories: int = 0
    already_settled: int = 0
    settled: int = 0
    invalid_urls: int = 0
    reach: Counter = field(default_factory=Counter)
    answers: Counter = field(default_factory=Counter)
    written: int = 0
    unchanged: int = 0
    downloaded: int = 0
    downloaded_bytes: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (repo, reason) of `error` outcomes
    stopped: str | None = None
    resume_after: str | None = None

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def lines(self) -> list[str]:
        out = [
            f"harvested into {self.store}: {self.repositories} repositories"
            + (f" ({self.already_settled} already settled by the interrupted run)" if self.already_settled else ""),
            "reach: " + (", ".join(f"{k} {v}" for k, v in sorted(self.reach.items())) or "none asked"),
            "answers: " + (", ".join(f"HTTP {k}× {v}" for k, v in sorted(self.answers.items())) or "none")
            + f"; tarballs downloaded: {self.downloaded} ({self.downloaded_bytes} bytes)",
            f"records written: {self.written}, unchanged: {self.unchanged}",
        ]
        if self.invalid_urls:
            out.append(f"code links without a repository URL: {self.invalid_urls}")
        for repo, reason in self.refused[:10]:
            out.append(f"  refused {repo}: {reason}")
        for repo, reason in self.failed[:10]:
            out.append(f"  no answer for {repo}: {reason}")
        if len(self.failed) > 10:
            out.append(f"  … and {len(self.failed) - 10} more without an answer")
        if self.stopped:
            out.append(f"stopped: {self.stopped}")
            if self.resume_after:
                out.append(f"resume after {self.resume_after} by running the same command again; "
                           "settled repositories are not asked twice")
        return out


def _iso(epoch: float) -> str:
    """An epoch time as ISO UTC, rounded up to the second (resuming early would only be refused again)."""
    return datetime.fromtimestamp(math.ceil(epoch), tz=UTC).isoformat()


def _reach(status: ReachStatus, spdx: str | None = None) -> Reach:
    return Reach(status=status, spdx=spdx) if spdx else Reach(status=status)


# --- the keys ---------------------------------------------------------------------------------


def repository_keys(archive: Archive, community: Community, summary: HarvestSummary) -> list[RepoKey]:
    """Unique normalised repositories of the archive's links and the community list, in key order."""
    from paperproof.plumbing.progress import bar

    keys: dict[str, RepoKey] = {}
    for link, _ in bar(archive.links(), "links", unit="link"):
        key = safe_key(link.repo_url)
        if key is None:
            summary.invalid_urls += 1
            continue
        keys.setdefault(key.key, key)
    for entry in community:
        keys.setdefault(entry.key.key, entry.key)
    return [keys[k] for k in sorted(keys)]


# --- one repository ---------------------------------------------------------------------------


class Harvester:
    """Asks about one repository at a time (thread-safe: shares only the client and the store)."""

    def __init__(self, client: GitHubClient, store: Store, limits: Limits) -> None:
        self.client = client
        self.store = store
        self.limits = limits

    def harvest(self, key: RepoKey) -> Outcome:
        previous = self.store.read_record(key)
        try:
            return self._harvest(key, previous)
        except RateLimited as exc:
            reason = f"rate limited before the API answered; resume after {_iso(exc.until)}"
            return Outcome(key, self._failed(key, previous, "rate_limited", reason), settled=False, stop=exc,
                           failure="rate_limited")
        except CredentialsRefused as exc:
            return Outcome(key, None, settled=False, stop=exc, failure="error")
        except NoAnswer as exc:
            return Outcome(key, self._failed(key, previous, "error", str(exc)), settled=False, failure="error")

    @staticmethod
    def _failed(key: RepoKey, previous: RepoRecord | None, status: ReachStatus, reason: str) -> RepoRecord:
        """A refresh that got no answer keeps the last good record and snapshot, and says what failed."""
        if previous is not None and previous.reach is not None and previous.reach.status in FINAL:
            return previous.model_copy(update={"refresh_failed": reason})
        return RepoRecord(url=key.url, repo=key.repo, host=key.host, source="none", reach=_reach(status),
                          note=f"no answer yet: {reason}")

    def _answered_nothing(self, key: RepoKey, previous: RepoRecord | None, status: ReachStatus, note: str,
                          etags: dict[str, str]) -> RepoRecord:
        """The host answered that there is nothing to harvest; an earlier snapshot is kept and said to be earlier."""
        base = RepoRecord(url=key.url, repo=key.repo, host=key.host, source="none", reach=_reach(status),
                          note=note, etags=etags or None)
        if previous is not None and previous.snapshot is not None:
            return previous.model_copy(update={
                "reach": _reach(status), "etags": etags or None, "refresh_failed": None,
                "note": f"{note}; the snapshot is from an earlier harvest (commit {previous.commit})"})
        return base

    def _harvest(self, key: RepoKey, previous: RepoRecord | None) -> Outcome:
        if not key.is_github:
            return Outcome(key, RepoRecord(
                url=key.url, repo=key.repo, host=key.host, source="none",
                note=f"not harvested: {key.host} is not GitHub, and paperproof asks only the GitHub API"), settled=True)
        etags = dict(previous.etags or {}) if previous is not None else {}
        meta = self.client.get(f"/repos/{key.owner}/{key.name}", etags)
        if meta.status == 304 and previous is not None and previous.reach is not None:
            full_name = _full_name(previous.moved_to) or key.repo
            default_branch = previous.default_branch
            private = previous.reach.status == "private"
        elif meta.status == 200 and isinstance(meta.json(), dict) and meta.json().get("full_name"):
            data = meta.json()
            full_name = str(data["full_name"])
            default_branch = data.get("default_branch")
            private = bool(data.get("private"))
            _remember(etags, meta)
        else:
            return self._unanswered_meta(key, previous, meta, etags)
        moved_to = f"https://github.com/{full_name}" if full_name.lower() != key.repo.lower() else None
        if private:
            record = self._answered_nothing(key, previous, "private", "private repository: not harvested", etags)
            return Outcome(key, record.model_copy(update={"moved_to": moved_to}), settled=True)
        status: ReachStatus = "moved" if moved_to else "ok"

        if meta.status == 304 and previous is not None:
            # The repository object carries its licence: unchanged object, unchanged licence; nothing to ask.
            spdx, licence_file, licence_note = previous.licence, previous.licence_file, None
        else:
            spdx, licence_file, licence_note = self._licence(full_name, etags, previous)
        commit, commit_note = self._commit(full_name, default_branch, etags, previous)
        notes = [n for n in (f"moved to {moved_to}" if moved_to else None, licence_note, commit_note) if n]
        snapshot = sha256 = refused = None
        downloaded = 0
        pinned = commit
        if commit is not None:
            snapshot, sha256, refused, downloaded = self._snapshot(key, full_name, commit, previous)
            if refused and previous is not None and previous.snapshot is not None:
                # Keep the last good snapshot, and the commit it is at; the note says why the new one was not taken.
                snapshot, sha256, pinned = previous.snapshot, previous.tarball_sha256, previous.commit
                notes.append(f"keeping the snapshot of commit {previous.commit}")
                # The record's commit is the kept one; ask for the head afresh next time, not "unchanged".
                etags.pop(_commit_path(full_name, default_branch), None)
            if refused:
                notes.append(f"tarball refused: {refused}")
        readme = None
        if snapshot is not None:
            root = self.store.root / snapshot
            readme = find_readme(root)
            if spdx is None:
                spdx, licence_file = licence.detect(root)
                notes.append("licence read from the snapshot: the API gave none")
        record = RepoRecord(
            url=key.url, repo=key.repo, host=key.host, source="harvest" if snapshot else "none",
            reach=_reach(status, licence.reach_spdx(spdx)), licence=spdx, licence_file=licence_file,
            commit=pinned, default_branch=default_branch, snapshot=snapshot, readme=readme,
            note="; ".join(notes) or None, moved_to=moved_to, etags=etags or None, tarball_sha256=sha256,
            refused=refused,
        )
        return Outcome(key, record, settled=True, downloaded=downloaded)

    def _unanswered_meta(self, key: RepoKey, previous: RepoRecord | None, meta: Answer,
                         etags: dict[str, str]) -> Outcome:
        """The repository request answered, but not with a repository: say which answer it was."""
        body = meta.json() if meta.body else None
        message = str(body.get("message", "")) if isinstance(body, dict) else ""
        if meta.status in (404, 410):
            return Outcome(key, self._answered_nothing(key, previous, "not_found",
                                                       f"the API answered HTTP {meta.status}: no such repository", {}),
                           settled=True)
        if meta.status == 451 or (meta.status == 403 and (isinstance(body, dict) and "block" in body
                                                           or "block" in message.lower() or "disabled" in message.lower())):
            reason = f"the API answered HTTP {meta.status}" + (f" ({message})" if message else "") + ": unavailable"
            return Outcome(key, self._answered_nothing(key, previous, "unavailable", reason, {}), settled=True)
        reason = f"GET /repos/{key.repo}: unexpected HTTP {meta.status}" + (f" ({message})" if message else "")
        return Outcome(key, self._failed(key, previous, "error", reason), settled=False, failure="error")

    def _licence(self, full_name: str, etags: dict[str, str],
                 previous: RepoRecord | None) -> tuple[str | None, str | None, str | None]:
        try:
            answer = self.client.get(f"/repos/{full_name}/license", etags)
        except NoAnswer as exc:  # the licence is then read from the snapshot; the repository still counts
            return None, None, f"licence not known: {exc}"
        if answer.status == 304 and previous is not None:
            return previous.licence, previous.licence_file, None
        if answer.status in (200, 404):
            _remember(etags, answer)
            spdx, path = licence.from_github(answer.status, answer.json() if answer.status == 200 else None)
            return spdx, path, None
        return None, None, f"licence not known: the API answered HTTP {answer.status}"

    def _commit(self, full_name: str, branch: str | None, etags: dict[str, str],
                previous: RepoRecord | None) -> tuple[str | None, str | None]:
        if not branch:
            return None, "the API named no default branch"
        answer = self.client.get(_commit_path(full_name, branch), etags, accept=SHA_MEDIA_TYPE)
        if answer.status == 304 and previous is not None and previous.commit:
            return previous.commit, None
        if answer.status == 200:
            text = answer.body.decode("utf-8", "replace").strip()
            sha = text if _is_sha(text) else (answer.json() or {}).get("sha") if text.startswith("{") else None
            if isinstance(sha, str) and _is_sha(sha):
                _remember(etags, answer)
                return sha.lower(), None
            raise NoAnswer(f"GET /repos/{full_name}/commits/{branch}: no commit id in the answer")
        if answer.status == 409:
            return None, "empty repository: no commit on the default branch"
        raise NoAnswer(f"GET /repos/{full_name}/commits/{branch}: HTTP {answer.status}")

    def _snapshot(self, key: RepoKey, full_name: str, commit: str,
                  previous: RepoRecord | None) -> tuple[str | None, str | None, str | None, int]:
        """(snapshot, tarball sha256, refusal, bytes downloaded) for a commit; nothing is fetched twice."""
        if previous is not None and previous.commit == commit and previous.tarball_sha256:
            if previous.refused:
                return None, previous.tarball_sha256, previous.refused, 0
            if previous.snapshot and (self.store.root / previous.snapshot).is_dir():
                return previous.snapshot, previous.tarball_sha256, None, 0
        sha256 = self.store.tarball_for(key, commit)
        downloaded = 0
        if sha256 is None:
            partial = self.store.tmp_file(".tar.gz")
            try:
                sha256, downloaded = self.client.download(f"/repos/{full_name}/tarball/{commit}", partial)
            except TooLarge as exc:
                return None, None, str(exc), 0
            finally:
                if sha256 is None:
                    partial.unlink(missing_ok=True)
            self.store.put_tarball(partial, sha256)
            self.store.remember_tarball(key, commit, sha256)
        try:
            return self.store.unpack(sha256, self.limits), sha256, None, downloaded
        except Refused as exc:
            return None, sha256, f"commit {commit[:12]}: {exc}", downloaded


def _commit_path(full_name: str, branch: str | None) -> str:
    return f"/repos/{full_name}/commits/{quote(branch or '', safe='')}"


def _remember(etags: dict[str, str], answer: Answer) -> None:
    if answer.etag:
        etags[answer.path] = answer.etag


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdefABCDEF" for c in text)


def _full_name(url: str | None) -> str | None:
    return url.removeprefix("https://github.com/") if url else None


# --- the run ----------------------------------------------------------------------------------


def harvest(config: HarvestConfig) -> HarvestSummary:
    """Harvest every repository of the archive (and the community list) into the store."""
    store = Store(config.store)
    summary = HarvestSummary(store=str(config.store))
    with store.lock():
        store.clear_tmp()
        state = store.read_state()
        if not _may_start(state, config.max_wait, summary):
            return summary
        community = config.community if config.community is not None else curated()
        keys = repository_keys(open_archive(config.archive), community, summary)
        summary.repositories = len(keys)
        if state is None or state.status == "complete":
            store.reset_journal()
            settled: set[str] = set()
        else:
            settled = store.settled()
        todo = [k for k in keys if k.key not in settled]
        summary.already_settled = len(keys) - len(todo)
        store.write_state(HarvestState(status="running", keys=len(keys), settled=summary.already_settled))
        settings = ClientSettings(api_url=config.api_url, token=config.token, timeout=config.timeout,
                                  retries=config.retries, backoff=config.backoff, max_wait=config.max_wait,
                                  max_download_bytes=config.max_download_bytes)
        with GitHubClient(settings) as client:
            stop = _run(Harvester(client, store, config.limits), store, todo, max(1, config.concurrency), summary)
            summary.answers = client.answers
        if stop is None:
            store.write_state(HarvestState(status="complete", keys=len(keys), settled=len(keys)))
            store.reset_journal()
        else:
            until = stop.until if isinstance(stop, RateLimited) else None
            summary.stopped = stop.reason if isinstance(stop, RateLimited) else str(stop)
            summary.resume_after = _iso(until) if until else None
            store.write_state(HarvestState(status="stopped", reason=summary.stopped, keys=len(keys),
                                           resume_after=summary.resume_after,
                                           settled=summary.already_settled + summary.settled))
    return summary


def _may_start(state: HarvestState | None, max_wait: float, summary: HarvestSummary) -> bool:
    """Honour a stopped run's `resume_after`: wait for it when it is near, else say again when to come back."""
    if state is None or not state.resume_after:
        return True
    delay = datetime.fromisoformat(state.resume_after).timestamp() - time.time()
    if delay <= 0:
        return True
    if delay <= max_wait:
        time.sleep(delay)
        return True
    summary.stopped = f"the API asked us to wait ({state.reason}); nothing was asked"
    summary.resume_after = state.resume_after
    return False


def _run(harvester: Harvester, store: Store, todo: list[RepoKey], concurrency: int,
         summary: HarvestSummary) -> Exception | None:
    """Ask about every key with bounded concurrency; the main thread alone writes records and the journal."""
    from paperproof.plumbing.progress import bar

    stop: Exception | None = None
    pending: set[Future[Outcome]] = set()
    queue = iter(todo)

    def completed() -> Iterable[Outcome]:
        nonlocal pending
        while True:
            while stop is None and len(pending) < concurrency * 2:
                key = next(queue, None)
                if key is None:
                    break
                pending.add(pool.submit(harvester.harvest, key))
            if not pending:
                return
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: f.result().key.key):
                yield future.result()

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="harvest")
    try:
        for outcome in bar(completed(), "harvest", total=len(todo), unit="repo"):
            if outcome.stop is not None and stop is None:
                stop = outcome.stop
            _settle(store, outcome, summary)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: settled work is journaled, the rest resumes
        raise
    pool.shutdown(wait=True)
    return stop


def _settle(store: Store, outcome: Outcome, summary: HarvestSummary) -> None:
    """Write the outcome's record (if it changed), count it, and journal it when the repository is settled."""
    record = outcome.record
    if record is not None:
        if store.write_record(outcome.key, record):
            summary.written += 1
        else:
            summary.unchanged += 1
        if record.refused and outcome.settled:
            summary.refused.append((record.repo, record.refused))
    if outcome.failure is not None:
        summary.reach[outcome.failure] += 1
        reason = (record.refresh_failed or record.note) if record is not None else str(outcome.stop)
        if outcome.failure == "error":  # rate-limited ones share one reason, said once by `stopped`
            summary.failed.append((outcome.key.repo, reason or "no answer"))
    else:
        summary.reach[record.reach.status if record is not None and record.reach else "not_asked"] += 1
    if outcome.downloaded:
        summary.downloaded += 1
        summary.downloaded_bytes += outcome.downloaded
    if outcome.settled:
        store.settle(outcome.key)
        summary.settled += 1
