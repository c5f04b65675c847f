"""Progress on stderr: off a terminal, a line at a steady interval and one at the stage's end; on a terminal, a bar."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time

from paperproof.plumbing import progress
from paperproof.plumbing.interrupts import stopping


def slow(n: int, seconds: float):
    for i in range(n):
        time.sleep(seconds)
        yield i


def test_off_a_terminal_a_line_comes_at_a_steady_interval_and_one_at_the_end(capsys):
    assert list(progress.bar(slow(6, 0.2), "run", total=6, unit="sample", every=0.1)) == list(range(6))
    lines = capsys.readouterr().err.splitlines()
    ticks, end = lines[:-1], lines[-1]
    assert len(ticks) >= 4, lines  # 1.2 s at 0.1 s: the log shows it is alive while one item takes long
    assert all(line.startswith("run: ") and line.endswith(" s so far") for line in ticks), lines
    done = [int(line.split()[1].split("/")[0]) for line in ticks]
    assert done == sorted(done) and all(line.split()[1].endswith("/6") for line in ticks)
    assert end.startswith("run: 6/6 samples, done in ") and end.endswith(" s")


def test_the_end_line_comes_once_even_when_the_consumer_stops_at_the_last_item(capsys):
    # zip() stops when its first iterator ends, and never asks the bar past its last item
    pairs = list(zip("abc", progress.bar(iter(range(3)), "links", total=3, unit="link", every=60)))
    assert pairs == [("a", 0), ("b", 1), ("c", 2)]
    assert capsys.readouterr().err.splitlines() == ["links: 3/3 links, done in 0 s"]
    list(progress.bar(iter(range(1200)), "papers", unit="paper", every=60))  # no total: counted
    assert capsys.readouterr().err.splitlines() == ["papers: 1,200 papers, done in 0 s"]


def test_a_stage_name_is_shown_not_obeyed_and_nothing_is_said_once_interrupted(capsys):
    list(progress.bar(range(2), "evil\x1b[2J\r", every=60))
    assert capsys.readouterr().err == "evil\\x1b[2J\\r: 2/2 items, done in 0 s\n"
    stopping.set()
    try:
        list(progress.bar(slow(3, 0.1), "run", total=3, every=0.05))
    finally:
        stopping.clear()
    assert capsys.readouterr().err == ""


def test_on_a_terminal_it_is_a_bar_and_no_log_line():
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a width for the bar
    code = "from paperproof.plumbing.progress import bar\nfor _ in bar(range(3), 'run', total=3): pass\n"
    done = subprocess.run([sys.executable, "-c", code], stderr=follower, stdout=subprocess.PIPE, timeout=60)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert done.returncode == 0
    assert b"3/3" in seen and b"\r" in seen and b"done in" not in seen
