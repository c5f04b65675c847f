"""The folders a build keeps beside the site at `--out`, named in one place.

For `--out site`: `.site.staging` (the tree being built, resumed after a failed build), `.site.previous`
(the tree the last build replaced, patched into the next staging tree), `.site.trash` (trees being
deleted in the background), `.site.extra` (files found in the site that no build wrote, set aside
there), `.site.lock` (held by the build writing the site) and `.site.build` (the build's state when
there is no `--cache`). The workflow caches the site with the first two
(`.github/workflows/catalogue.yml`; `tests/test_workflow.py` holds it to `cached`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SitePaths:
    out: Path

    def _beside(self, role: str) -> Path:
        return self.out.with_name(f".{self.out.name}.{role}")

    @property
    def staging(self) -> Path:
        return self._beside("staging")

    @property
    def previous(self) -> Path:
        return self._beside("previous")

    @property
    def trash(self) -> Path:
        return self._beside("trash")

    @property
    def extra(self) -> Path:
        """Files found in the site that no build wrote, set aside by the build that found them (`build.site_files`)."""
        return self._beside("extra")

    @property
    def lock(self) -> Path:
        return self._beside("lock")

    @property
    def state(self) -> Path:
        """The build's state (manifest, link table, scratch tables) when it has no cache: removed at its end."""
        return self._beside("build")

    def cached(self) -> tuple[Path, ...]:
        """What a CI cache keeps between builds so the next one is incremental: the site, the staging tree of a
        build that failed, and the tree the last build replaced."""
        return (self.out, self.staging, self.previous)


__all__ = ["SitePaths"]
