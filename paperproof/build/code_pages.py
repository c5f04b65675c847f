"""Code for programs: `/code/<sha256>.json`, one record per distinct code of the samples.

A program that holds a sample's `code_sha256` (every twin lists it) fetches the code from here. The record
carries the code itself only where the licence of a repository that holds it lets us redistribute it
(`catalogue.licence.inline_ok`, the rule the sample pages follow), with that licence and repository as its
attribution; every record also points at each place the code sits at its pinned commit, with its line range
and the link the sample pages build. Shipped records (`catalogue.shipped`) hold no source, so their code is
always a pointer. The text shown is the text the hash names: a sample whose source does not hash to its
`code_sha256` is not shown, and the build reports it.

One file per hash, each a unit of the manifest made in the build's process (`SiteWriter.emit`): a record is
a few kilobytes, cheaper to write than to send to a render process. Places are in a fixed order (repository,
path, line, sample), so the same samples give the same bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from paperproof.build.site import dump_json, record_schema
from paperproof.build.urls import SiteUrls
from paperproof.catalogue.archive import Reject
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.sample import Sample

if TYPE_CHECKING:
    from paperproof.build.site import SiteWriter
    from paperproof.catalogue.repo_work import RepoWork

SCHEMA = "code"
SHA256 = re.compile(r"[0-9a-f]{64}")


class CodePlace(BaseModel):
    """One place the code sits: a sample's entry in a repository, at its pinned commit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    repo_url: str
    commit: str | None  # None: the commit is not known, and `url` reads the file at HEAD
    path: str
    line_start: int
    line_end: int
    url: str  # the file at `commit` with its line range, as the sample page links it
    licence: str  # SPDX id, NONE (no licence file) or NOASSERTION (one nobody could identify)
    inline_ok: bool  # whether this repository's licence lets us show the code
    qualname: str  # the entry, as its module names it
    sample: str  # the sample's JSON twin


class CodeAttribution(BaseModel):
    """Whose code `code` is and under which licence it is shown: the first place whose licence allows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    licence: str
    licence_file: str | None
    repo: str
    repo_url: str
    commit: str | None
    path: str
    notice: str  # the attribution in one line


class CodeRecord(BaseModel):
    """`/code/<sha256>.json`: the code with its attribution where a licence allows, else only where it is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code_sha256: str
    code_sha256_prefix: str
    json_url: str
    schema_url: str
    language: str
    code: str | None  # the entry's source, exactly the text `code_sha256` is the hash of; None: a pointer only
    attribution: CodeAttribution | None  # None exactly when `code` is
    pointer_only: str | None  # why `code` is None, in words
    places: list[CodePlace]


Held = tuple[Sample, RepoRecord]  # a sample and the record of its repository


def code_record(code_sha256: str, held: Iterable[Held], urls: SiteUrls) -> CodeRecord:
    """The record of one code: `held` are the samples whose code hashes to `code_sha256`, with their repositories."""
    ordered = sorted(held, key=lambda h: (h[0].repo, h[0].path, h[0].lineno, h[0].sample_id))
    if not ordered:
        raise ValueError(f"code {code_sha256}: no sample holds it")
    places = [_place(sample, record, urls) for sample, record in ordered]
    shown = next(((s, r) for s, r in ordered if s.inline_ok and s.source is not None and _hashes_to(s)), None)
    attribution = _attribution(*shown) if shown else None
    return CodeRecord(code_sha256=code_sha256, code_sha256_prefix=code_sha256[:16], json_url=urls.code(code_sha256),
                      schema_url=urls.schema(SCHEMA), language=ordered[0][0].language,
                      code=shown[0].source if shown else None, attribution=attribution,
                      pointer_only=None if shown else _why_not_shown(ordered), places=places)


def _hashes_to(sample: Sample) -> bool:
    return sample.source is not None and hashlib.sha256(sample.source.encode("utf-8")).hexdigest() == sample.code_sha256


def _place(sample: Sample, record: RepoRecord, urls: SiteUrls) -> CodePlace:
    return CodePlace(repo=sample.repo, repo_url=sample.repo_url, commit=record.commit, path=sample.path,
                     line_start=sample.lineno, line_end=sample.end_lineno, url=sample.file_url,
                     licence=sample.licence, inline_ok=sample.inline_ok, qualname=sample.qualname,
                     sample=urls.sample_json(sample.sample_id))


def _attribution(sample: Sample, record: RepoRecord) -> CodeAttribution:
    at = f" at commit {record.commit}" if record.commit else ""
    notice = (f"{sample.path}, lines {sample.lineno}-{sample.end_lineno}, from {sample.repo} ({sample.repo_url}){at}; "
              f"licensed under {sample.licence}" + (f" (see its {record.licence_file})" if record.licence_file else ""))
    return CodeAttribution(licence=sample.licence, licence_file=record.licence_file, repo=sample.repo,
                           repo_url=sample.repo_url, commit=record.commit, path=sample.path, notice=notice)


def _why_not_shown(held: list[Held]) -> str:
    if any(s.inline_ok for s, _ in held):
        return ("shipped records hold no source: read the code at the pinned commit (`places`), where its "
                "licence lets it be shown")
    licences = ", ".join(sorted({s.licence for s, _ in held}))
    return (f"no repository that holds it has a licence that lets us redistribute it ({licences}): read it where "
            "it is (`places`)")


def refusal(sample: Sample) -> Reject | None:
    """A sample whose code this writer must not publish under its hash, and why (a shipped record can say anything)."""
    where = f"sample {sample.sample_id} ({sample.repo}, {sample.path}::{sample.qualname})"
    if not SHA256.fullmatch(sample.code_sha256):
        return Reject(file=where, position=-1, record=sample.file_url,
                      reason=f"bad code_sha256: {sample.code_sha256[:80]!r} is not 64 lowercase hex digits, so no "
                             "code record is published for it")
    if sample.inline_ok and sample.source is not None and not _hashes_to(sample):
        return Reject(file=where, position=-1, record=sample.file_url,
                      reason="source not of its code_sha256: its text does not hash to it, so the code record "
                             "points at the code instead of showing this text")
    return None


def _schema(urls: SiteUrls) -> str:
    return dump_json(record_schema(CodeRecord, SCHEMA, urls))


def write_code(site: SiteWriter, repos: dict[str, RepoWork], noop: bool) -> int:
    """`schema/code.json` and a code record for every distinct `code_sha256` of the samples; the number of records."""
    if noop:
        return 0
    urls = site.urls
    schema = site.path(urls.schema(SCHEMA))
    site.emit(schema, {schema: partial(_schema, urls)}, inputs=b"schema")
    by_hash: dict[str, list[Held]] = {}
    for key in sorted(repos):
        work = repos[key]
        for sample in work.samples:
            problem = refusal(sample)
            if problem is not None:
                site.rejects.append(problem)
                if not SHA256.fullmatch(sample.code_sha256):
                    continue
            by_hash.setdefault(sample.code_sha256, []).append((sample, work.record))
    for code_sha256 in sorted(by_hash):
        name = site.path(urls.code(code_sha256))
        record = code_record(code_sha256, by_hash[code_sha256], urls)
        site.emit(name, {name: record.model_dump_json()})
    return len(by_hash)


__all__ = ["CodeAttribution", "CodePlace", "CodeRecord", "code_record", "refusal", "write_code"]
