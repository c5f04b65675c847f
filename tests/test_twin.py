"""The twin reads the seed records unchanged and writes them back under our names, key for key."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from paperproof.build.pages import SEED_RENAMES, PaperTwin
from tests.conftest import SEEDS

SEED_FILES = sorted(SEEDS.glob("*.txt"))


def renamed(value):
    if isinstance(value, dict):
        return {SEED_RENAMES.get(k, k): renamed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v) for v in value]
    return value


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.stem)
def test_seed_round_trip_equals_seed_with_renames(path):
    raw = path.read_text()
    twin = PaperTwin.model_validate_json(raw)
    expected = renamed(json.loads(raw))
    assert json.loads(twin.to_json()) == expected
    # Key order too, at every level, and byte for byte in the seeds' compact form.
    assert twin.to_json() == json.dumps(expected, separators=(",", ":"), ensure_ascii=False)


def test_absent_and_null_stay_distinct():
    """Seed 000 lacks `syntology_url`, seed 001 has it null: both survive the round trip."""
    without, with_null = (json.loads(PaperTwin.model_validate_json(p.read_text()).to_json()) for p in SEED_FILES)
    assert "page_url" not in without["verification"]
    assert with_null["verification"]["page_url"] is None


def test_unknown_keys_are_refused():
    raw = json.loads(SEED_FILES[0].read_text())
    raw["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        PaperTwin.model_validate(raw)


def test_reach_without_licence_file_has_no_spdx_key():
    twin = PaperTwin.model_validate_json(SEED_FILES[1].read_text())
    reaches = [json.loads(link.model_dump_json())["reach"] for link in twin.code_links]
    assert {"status": "ok"} in reaches and None in reaches
