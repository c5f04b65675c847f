"""Import names read from installed distributions' `.dist-info`: top_level.txt first, else RECORD's top-level
modules; every read bounded (no link followed, regular files only, capped)."""

from __future__ import annotations

import os

from paperproof.runner import import_names
from paperproof.runner.import_names import provided, providers


def _dist(folder, name, record=None, top_level=None):
    info = folder / f"{name}.dist-info"
    info.mkdir(parents=True)
    if record is not None:
        (info / "RECORD").write_text(record)
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level)
    return info


def test_record_gives_the_top_level_modules_and_packages_and_nothing_else(tmp_path):
    _dist(tmp_path, "PyYAML-6.0.2", record="\n".join([
        "_yaml/__init__.py,sha256=x,1", "yaml/__init__.py,sha256=x,2", "yaml/_yaml.cpython-311-x86_64-linux-gnu.so,,",
        "PyYAML-6.0.2.dist-info/METADATA,,", "PyYAML-6.0.2.dist-info/RECORD,,"]))
    _dist(tmp_path, "markdown_it_py-4.0.0", record="\n".join([
        "bin/markdown-it,,", "../../bin/markdown-it,,", "markdown_it/main.py,,", "markdown_it/py.typed,,"]))
    _dist(tmp_path, "six-1.17.0", record="six.py,,\n__pycache__/six.cpython-311.pyc,,\n")
    _dist(tmp_path, "ext_only-1.0", record="_speedups.abi3.so,,\nnumpy.libs/libx.so,,\nsetup.pth,,\n\"odd,name/x.py\",,\n")
    _dist(tmp_path, "protobuf-7.0", record="google/protobuf/__init__.py,,\n")  # a namespace without __init__
    _dist(tmp_path, "googleapis_common_protos-1.0", record="google/api/http.py,,\n")
    found = provided(tmp_path)
    assert found == {"pyyaml": (["_yaml", "yaml"], "RECORD"), "markdown-it-py": (["markdown_it"], "RECORD"),
                     "six": (["six"], "RECORD"), "ext-only": (["_speedups"], "RECORD"),
                     "protobuf": (["google"], "RECORD"), "googleapis-common-protos": (["google"], "RECORD")}
    assert providers(tmp_path)["google"] == [("googleapis-common-protos", "RECORD"), ("protobuf", "RECORD")]


def test_top_level_txt_is_read_first_and_an_empty_or_unreadable_one_falls_back_to_record(tmp_path):
    _dist(tmp_path, "beautifulsoup4-4.13.0", record="bs4/__init__.py,,\n", top_level="bs4\n")
    _dist(tmp_path, "opencv_python_headless-4.10", record="cv2/__init__.py,,\n", top_level="\n")
    _dist(tmp_path, "weird-1.0", record="weird/__init__.py,,\n", top_level="not-a-name\n__main__\n")
    assert provided(tmp_path) == {"beautifulsoup4": (["bs4"], "top_level.txt"),
                                  "opencv-python-headless": (["cv2"], "RECORD"), "weird": (["weird"], "RECORD")}


def test_reads_follow_no_link_open_no_fifo_and_stop_at_the_cap(tmp_path, monkeypatch):
    secret = tmp_path / "secret.txt"
    secret.write_text("aws_secret_key\n")
    env = tmp_path / "env"
    linked = _dist(env, "linked-1.0")
    os.symlink(secret, linked / "top_level.txt")
    os.symlink(secret, linked / "RECORD")
    piped = _dist(env, "piped-1.0")
    os.mkfifo(piped / "RECORD")  # would block an open without O_NONBLOCK, and a read of it
    os.symlink(_dist(tmp_path / "elsewhere", "away-1.0", record="away/__init__.py,,\n"), env / "away-1.0.dist-info")
    big = _dist(env, "big-1.0")
    with open(big / "RECORD", "w") as handle:
        handle.write("first/__init__.py,,\n")
        handle.truncate(1 << 40)  # a 1 TiB sparse file
    monkeypatch.setattr(import_names, "MAX_METADATA_BYTES", 1 << 20)
    assert provided(env) == {"big": (["first"], "RECORD")}
    assert provided(tmp_path / "absent") == {}
