"""Shared fixtures: the bundled site is built once per session (it runs every specimen in the sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parent / "data" / "seeds"


@pytest.fixture(scope="session")
def bundled_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from paperproof.build.pipeline import BuildConfig, build

    root = tmp_path_factory.mktemp("bundled")
    build(BuildConfig(out=root / "site", cache=root / "cache"))
    return root / "site"


@pytest.fixture(scope="session")
def samples(bundled_site: Path) -> dict[tuple[str, str], dict]:
    """The bundled site's sample twins, by (repository, entry)."""
    found = {}
    for path in sorted((bundled_site / "sample").glob("*.json")):
        record = json.loads(path.read_text())
        found[record["repo"], record["entry"]] = record
    return found
