"""The licence policy: one place says what may be shown inline, and absent, unknown and unasked stay distinct."""

from __future__ import annotations

from pathlib import Path

import pytest

from paperproof.catalogue import licence
from paperproof.catalogue.archive import bundled_root


@pytest.mark.parametrize("spdx, shown", [
    ("MIT", True), ("Apache-2.0", True), ("BSD-3-Clause", True), ("GPL-3.0", True),
    ("NONE", False), ("NOASSERTION", False), (None, False), ("CC-BY-NC-4.0", False), ("Proprietary", False),
])
def test_inline_policy(spdx: str | None, shown: bool) -> None:
    assert licence.inline_ok(spdx) is shown
    assert licence.pointer_only(spdx) is not shown


def test_github_answers_map_to_three_distinct_values() -> None:
    mit = {"path": "LICENSE", "license": {"key": "mit", "spdx_id": "MIT"}}
    other = {"path": "COPYING", "license": {"key": "other", "spdx_id": "NOASSERTION"}}
    assert licence.from_github(200, mit) == ("MIT", "LICENSE")
    assert licence.from_github(200, other) == (licence.UNIDENTIFIED, "COPYING")
    assert licence.from_github(200, {"path": "LICENSE", "license": {"spdx_id": None}}) == (licence.UNIDENTIFIED, "LICENSE")
    assert licence.from_github(404, None) == (licence.NO_LICENCE, None)  # answered: no licence file
    assert licence.from_github(None, None) == (None, None)  # not asked
    assert licence.from_github(500, None) == (None, None)  # asked, no answer: still unknown, not "none"
    assert len({licence.NO_LICENCE, licence.UNIDENTIFIED, None}) == 3


def test_reach_carries_spdx_only_when_there_is_a_licence_file() -> None:
    assert licence.reach_spdx("MIT") == "MIT"
    assert licence.reach_spdx("NOASSERTION") == "NOASSERTION"
    assert licence.reach_spdx("NONE") is None and licence.reach_spdx(None) is None


@pytest.mark.parametrize("repo, spdx", [
    ("paperproof-specimens+dynamics-maps", "MIT"),
    ("paperproof-specimens+perturb-kit", "Apache-2.0"),
    ("paperproof-specimens+stats-plots", "NONE"),
])
def test_detect_on_the_bundled_specimens(repo: str, spdx: str) -> None:
    assert licence.detect(bundled_root() / "repos" / repo)[0] == spdx


def test_unidentified_licence_text(tmp_path: Path) -> None:
    (tmp_path / "LICENSE").write_text("You may look at this code on Tuesdays.\n")
    assert licence.detect(tmp_path) == ("NOASSERTION", "LICENSE")
