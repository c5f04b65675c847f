"""Where a name a case failed to open lies in its checkout: looked up one component at a time with lstat, never
following a link, so that the sandbox's refusal says "does not hold" only for what the repository does not ship."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paperproof.runner.checkout_paths import Located, locate
from paperproof.runner.sandbox import WORK


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "detectors" / "10").mkdir(parents=True)
    (root / "src" / "detectors" / "10" / "lstm.pth.tar").write_bytes(b"weights")
    (root / "src" / "detector.py").write_text("")
    (root / "calibration.csv").write_text("temperature,2.0\n")
    outside = tmp_path / "outside"
    (outside / "data").mkdir(parents=True)
    (outside / "data" / "train.csv").write_text("1,2\n")
    (root / "src" / "data").symlink_to(outside / "data")  # a folder linked out of the checkout
    (root / "src" / "passwd.txt").symlink_to("/etc/passwd")
    return root


def test_a_name_the_repository_does_not_ship_is_absent(checkout: Path) -> None:
    assert locate(str(checkout), "src/detector.py", "src/detectors/6/lstm.pth.tar") == Located("absent")
    assert locate(str(checkout), "src/detector.py", "/etc/hostname") == Located("absent")  # not the repository's
    assert locate(str(checkout), "src/detector.py", "../../outside/data/train.csv") == Located("absent")


def test_a_shipped_name_is_found_from_the_root_or_from_the_module_folder(checkout: Path) -> None:
    assert locate(str(checkout), "src/detector.py", "calibration.csv") == Located(
        "shipped", "calibration.csv", "calibration.csv")
    # opened relative to the module's folder: the repository ships it there, the run works in its root
    assert locate(str(checkout), "src/detector.py", "detectors/10/lstm.pth.tar") == Located(
        "shipped", "src/detectors/10/lstm.pth.tar", "src/detectors/10/lstm.pth.tar")
    assert locate(str(checkout), "src/detector.py", "./src//detectors/10/lstm.pth.tar").kind == "shipped"


def test_absolute_names_in_the_checkout_or_the_working_folder_are_the_repository_s(checkout: Path) -> None:
    assert locate(str(checkout), "src/detector.py", str(checkout / "calibration.csv")).name == "calibration.csv"
    assert locate(str(checkout), "src/detector.py", f"{WORK}/calibration.csv").name == "calibration.csv"


def test_a_link_is_named_and_never_followed(checkout: Path) -> None:
    assert locate(str(checkout), "src/detector.py", "passwd.txt") == Located("link", "src/passwd.txt", "src/passwd.txt")
    # train.csv exists behind the link, and is not reported as shipped: the walk stops at the link
    assert locate(str(checkout), "src/detector.py", str(checkout / "src" / "data" / "train.csv")) == Located(
        "link", "src/data/train.csv", "src/data")


def test_a_file_on_the_way_is_not_a_folder(checkout: Path) -> None:
    assert locate(str(checkout), "src/detector.py", "calibration.csv/x") == Located("absent")
    assert os.path.isfile(checkout / "calibration.csv")
