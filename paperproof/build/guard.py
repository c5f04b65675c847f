"""Never destroy what is not ours: a build replaces its `--out` folder whole and fills its `--cache`
folder, so it refuses a path that holds anything else.

A site is ours when it carries the `.paperproof-build` marker; a cache when it carries a
`CACHEDIR.TAG` (the Cache Directory Tagging convention, which backup tools also honour: the build
writes one into every cache it makes) or holds nothing but what a build puts there. A missing or
empty folder is fine.
"""

from __future__ import annotations

from pathlib import Path

from paperproof.build.manifest import MARKER

CACHE_TAG = "CACHEDIR.TAG"
CACHE_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_CACHE_CONTENTS = {CACHE_TAG, "runs", "sites", "unpacked", "envs"}  # what builds (and verify's environments) write


class NotOurs(ValueError):
    """A path a build would overwrite that holds something paperproof did not make."""


def check_out(out: Path) -> None:
    """Refuse an `--out` that is a file, or a folder holding files but no paperproof site."""
    if out.exists() and not out.is_dir():
        raise NotOurs(f"--out {out}: is a file, not a folder; a build would replace it with a site. "
                      "Give a new or empty folder, or a site paperproof built")
    if out.is_dir() and not (out / MARKER).is_file() and any(out.iterdir()):
        raise NotOurs(f"--out {out}: this folder holds files but no paperproof site (no {MARKER} marker), and a build "
                      "replaces the whole folder. Give a new or empty folder, or a site paperproof built")


def check_cache(cache: Path) -> None:
    """Refuse a `--cache` that is a file, or a folder holding files a build did not write."""
    if cache.exists() and not cache.is_dir():
        raise NotOurs(f"--cache {cache}: is a file, not a folder. Give a new or empty folder, "
                      "or a cache paperproof made")
    if cache.is_dir() and not (cache / CACHE_TAG).is_file():
        foreign = sorted(p.name for p in cache.iterdir() if p.name not in _CACHE_CONTENTS)
        if foreign:
            raise NotOurs(f"--cache {cache}: this folder holds files that are not a paperproof cache's "
                          f"({', '.join(foreign[:3])}{', …' if len(foreign) > 3 else ''}), and a build writes into "
                          "it. Give a new or empty folder, or a cache paperproof made")


def claim_cache(cache: Path) -> None:
    """Make the cache folder and tag it, so later builds (and backup tools) know it."""
    cache.mkdir(parents=True, exist_ok=True)
    tag = cache / CACHE_TAG
    if not tag.is_file():
        tag.write_text(f"{CACHE_SIGNATURE}\n# This file is a cache tag written by paperproof: the build cache "
                       "(run results, site manifests, unpacked tarballs).\n", encoding="ascii")


def guard(out: Path, cache: Path | None, check: bool) -> None:
    """Refuse the build's paths when they hold what is not ours; else claim the cache."""
    if not check:
        check_out(out)
    if cache is not None:
        check_cache(cache)
        if not check:
            claim_cache(cache)


__all__ = ["NotOurs", "check_cache", "check_out", "claim_cache", "guard"]
