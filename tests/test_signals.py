"""Ctrl-C and SIGTERM on real commands: a real `paperproof build`, `verify` and `harvest`, each started as a process
in a session of its own (as a shell starts a job), signalled once its workers exist. Each must end every process it
started (counted by walking /proc), print one line saying what was kept and no traceback, and exit 128 + the signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from paperproof.plumbing.interrupts import descendants
from tests.github_server import GitHubServer
from tests.test_harvest import add_specimens

# A specimen of our own in the style of research code: a score that refines its prototypes until they converge,
# which they never do, so its case spends its whole CPU budget while the test signals the command.
SLOW_REPO = {
    "protoscore/__init__.py": "",
    "protoscore/scores.py": '''"""Prototypicality scores: distance of each sample to its class prototype."""
import numpy as np


def prototype_scores(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Distance of each embedding to the prototype of its class, refined until the prototypes settle."""
    prototypes = {c: embeddings[labels == c].mean(axis=0) for c in np.unique(labels)}
    shift = 1.0
    while shift > 0:  # the prototypes never settle: each pass moves them back and forth
        for c in prototypes:
            prototypes[c] = -prototypes[c]
        shift = abs(shift)
    return np.array([np.linalg.norm(e - prototypes[c]) for e, c in zip(embeddings, labels)])
''',
}


def started(pid: int) -> bytes | None:
    """The process's start time (clock ticks after boot): with its pid, it names one process, not a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2:].split()
    return None if fields[0] in (b"Z", b"X") else fields[19]


def command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def snapshot(root: int) -> dict[int, bytes]:
    """Every running descendant of `root`, by pid, with its start time."""
    return {pid: start for pid in descendants(root) if (start := started(pid)) is not None}


def left_running(before: dict[int, bytes], session: int) -> list[tuple[int, bytes]]:
    """What still runs of `before`, and any process left in the command's session: (pid, command line)."""
    alive = {pid for pid, start in before.items() if started(pid) == start}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[3]) == session and fields[0] not in (b"Z", b"X"):  # field 6 of stat: the session id
                alive.add(int(name))
    return sorted((pid, command_line(pid)[:120]) for pid in alive)


def zygotes(tree: dict[int, bytes]) -> list[int]:
    return [pid for pid in tree if b"paperproof.runner.zygote" in command_line(pid)]


def launch(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, Path]:
    """`paperproof ARGS` in a session of its own; its stdout and stderr go to files under `cwd`."""
    out = cwd / "command.out"
    with open(out, "wb") as stdout, open(cwd / "command.err", "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "paperproof", *args], cwd=cwd, stdout=stdout, stderr=stderr,
                                   start_new_session=True, env={**os.environ, **(env or {})})
    return process, out


def wait_for(process: subprocess.Popen, ready, seconds: float = 300) -> dict[int, bytes]:
    """The command's process tree once `ready(tree)` holds; fails when the command ends first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, "the command ended before its workers existed"
        tree = snapshot(process.pid)
        if ready(tree):
            return tree
        time.sleep(0.2)
    process.kill()
    raise AssertionError("its workers never appeared")


def ended(process: subprocess.Popen, before: dict[int, bytes], cwd: Path) -> tuple[str, list]:
    """Wait for the command to end; its stderr, and what is left running of it."""
    process.wait(timeout=120)
    # A killed process is torn down by the kernel after its parent has gone: unmapping a sandbox child that
    # imported torch takes seconds on a busy machine (its command line reads empty meanwhile). One that still runs
    # after 15 s was not ended.
    deadline = time.monotonic() + 15
    while (left := left_running(before, process.pid)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return (cwd / "command.err").read_text(), left


def test_sigterm_to_verify_ends_every_worker_and_sample(tmp_path: Path) -> None:
    repo = tmp_path / "protoscore"
    for name, text in SLOW_REPO.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    verify, _ = launch(["verify", str(repo), "--no-install", "--workers", "2"], tmp_path,
                       env={"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    # a zygote runs the sample: the zygote's harness has a case process
    before = wait_for(verify, lambda tree: any(any(descendants(child)) for z in zygotes(tree)
                                               for child in descendants(z)))
    time.sleep(1.0)
    before.update(snapshot(verify.pid))
    verify.send_signal(signal.SIGTERM)
    stderr, left = ended(verify, before, tmp_path)
    assert left == [], f"left running after SIGTERM: {left}"
    assert verify.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == (f"paperproof: ended by SIGTERM: no verdict; {repo} was not changed; the runs "
                                       f"finished so far are kept in {tmp_path / 'xdg' / 'paperproof'}")


def test_ctrl_c_on_build_prints_one_line_and_leaves_the_site_as_it_was(tmp_path: Path) -> None:
    build, _ = launch(["build", "--out", "site", "--cache", "cache", "--jobs", "2", "--workers", "2"], tmp_path)
    cli = build.pid

    def working(tree: dict[int, bytes]) -> bool:
        renderers = [pid for pid in tree if command_line(pid) == command_line(cli)]  # forked: the same command line
        return len(renderers) >= 2 and bool(zygotes(tree))

    before = wait_for(build, working)
    os.killpg(cli, signal.SIGINT)  # as a terminal sends Ctrl-C: to the whole foreground process group
    stderr, left = ended(build, before, tmp_path)
    assert left == [], f"left running after Ctrl-C: {left}"
    assert build.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    said = [line for line in stderr.splitlines() if "interrupted" in line]
    assert said == ["paperproof: interrupted (Ctrl-C): nothing was published: site is as it was; the runs finished "
                    "so far are kept in cache, and the next build starts from them"], stderr
    assert stderr.splitlines()[-1] == said[0]
    assert not (tmp_path / "site").exists()


def test_ctrl_c_on_harvest_says_what_was_settled_and_does_not_wait_for_a_request(tmp_path: Path) -> None:
    with GitHubServer() as server:
        add_specimens(server)
        slow = "/repos/paperproof-specimens/stats-plots"
        server.slow[slow] = 60.0  # answered after a minute: the command must not wait for it
        harvest, _ = launch(["harvest", "--store", "store", "--api-url", server.url, "--concurrency", "1",
                             "--timeout", "90"], tmp_path, env={"GITHUB_TOKEN": ""})
        deadline = time.monotonic() + 120
        while not server.slow_entered.is_set() and time.monotonic() < deadline:
            assert harvest.poll() is None, (tmp_path / "command.err").read_text()
            time.sleep(0.1)
        assert server.slow_entered.is_set(), "the harvest never reached the slow repository"
        before = snapshot(harvest.pid)
        os.killpg(harvest.pid, signal.SIGINT)
        stderr, left = ended(harvest, before, tmp_path)
        assert slow not in {hit.path for hit in server.requests()}, "it waited for the slow answer"
    assert left == []
    assert harvest.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == ("paperproof: interrupted (Ctrl-C): the repositories settled so far are kept "
                                       "in store: run the same command again to resume")
