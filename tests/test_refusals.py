"""The words of a refusal: a name a case could not open is "not held" only when the repository does not ship it;
one shipped under another folder, or reached through a link of the repository, says so."""

from __future__ import annotations

import errno

from paperproof.runner.checkout_paths import Located
from paperproof.runner.refusals import attempt_line, blocked_by, shown_path
from paperproof.runner.sandbox import WORK, Limits


def _not_found(name: str) -> dict:
    return {"os_error": True, "not_found": True, "errno": errno.ENOENT, "filename": name,
            "message": f"[Errno 2] No such file or directory: {name!r}"}


def test_a_file_the_repository_does_not_ship_is_not_held() -> None:
    blocked = blocked_by(_not_found("checkpoints/epoch_3.npy"), Limits(), lambda name: Located("absent"))
    assert blocked == "file not available in the sandbox: checkpoints/epoch_3.npy"
    assert attempt_line(blocked) == "tried to open checkpoints/epoch_3.npy, which the sandbox does not hold (blocked)"


def test_a_shipped_file_opened_from_another_folder_names_where_it_is_shipped() -> None:
    shipped = Located("shipped", "src/detectors/10/lstm.pth.tar", "src/detectors/10/lstm.pth.tar")
    blocked = blocked_by(_not_found("detectors/10/lstm.pth.tar"), Limits(), lambda name: shipped)
    assert blocked is not None and "does not hold" not in attempt_line(blocked)
    assert attempt_line(blocked) == ("tried to open detectors/10/lstm.pth.tar, which the repository ships as "
                                     "src/detectors/10/lstm.pth.tar, from the repository's root, where the run works "
                                     "(blocked)")


def test_a_link_of_the_repository_is_named_as_not_followed() -> None:
    loop = {"os_error": True, "not_found": False, "errno": errno.ELOOP, "filename": "/repo/src/data/train.csv",
            "message": "[Errno 40] Too many levels of symbolic links"}
    blocked = blocked_by(loop, Limits(), lambda name: Located("link", "src/data/train.csv", "src/data"))
    assert attempt_line(blocked or "") == ("tried to open src/data/train.csv through src/data, a link of the "
                                           "repository, which the sandbox does not follow (blocked)")
    # a loop the sample made itself, outside the repository, is its own error, not a refusal
    assert blocked_by(loop, Limits(), lambda name: Located("absent")) is None


def test_a_write_refused_in_the_working_folder_is_one_line_however_it_was_named() -> None:
    refused = {"os_error": True, "errno": errno.EROFS, "filename": "./calibration.csv", "message": "Read-only"}
    assert blocked_by(refused, Limits()) == "filesystem: calibration.csv is read-only in the sandbox"
    assert shown_path(f"{WORK}/calibration.csv") == shown_path("./calibration.csv") == "calibration.csv"
    assert shown_path("/repo/src/../prior.npy") == "/repo/prior.npy"
