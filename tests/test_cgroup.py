"""Per-sample memory accounting: the kernel stops a group at its limit, memfd pages included, and
says so; without a group the sandbox refuses memfd_create and the run record states it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from paperproof.runner import cgroup

HOLD = """
import os, sys
fds = []
for _ in range(64):
    fd = os.memfd_create("hold")
    os.posix_fallocate(fd, 0, 4 * 1024 * 1024)
    fds.append(fd)
print(len(fds))
"""


def _accounting() -> cgroup.Accounting:
    found, why = cgroup.Accounting.find()
    if found is None:
        pytest.skip(f"no cgroup can be made here: {why}")
    return found


def test_a_group_stops_memory_that_no_process_maps() -> None:
    accounting = _accounting()
    try:
        group = accounting.group(64 * 1024**2, 16)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read)
                group.join()
                os.write(write, b"j")
                os.execv(sys.executable, [sys.executable, "-c", HOLD])
            finally:
                os._exit(70)
        os.close(write)
        assert os.read(read, 1) == b"j"
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9  # 256 MiB of memfd against 64 MiB
        assert group.stopped()
        group.remove()
        assert not os.path.exists(group.memory)
        quiet = accounting.group(256 * 1024**2, 16)
        assert not quiet.stopped()
        quiet.remove()
    finally:
        accounting.close()
    assert not os.path.exists(accounting.memory)


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_group_counts_the_cpu_of_all_its_processes() -> None:
    """The run's CPU budget is read from its group: every process, one that left its session included."""
    accounting = _accounting()
    try:
        group = accounting.group(256 * 1024**2, 16)
        if group.cpu is None:
            pytest.skip("no CPU accounting beside the memory group here")
        pid = os.fork()
        if pid == 0:
            try:
                group.join()
                if os.fork() == 0:
                    os.setsid()
                    _spin(0.3)
                    os._exit(0)
                _spin(0.3)
                os.wait()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        used = group.cpu_seconds()
        assert used is not None and 0.6 <= used < 1.2, used
        waited = group.waited_seconds()
        assert waited is None or 0 <= waited < 60
        group.remove()
        assert not os.path.exists(group.cpu)
    finally:
        accounting.close()


FALLBACK = """
import json, sys
from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.synth import synthesize
from paperproof.runner.executor import Executor, RunRequest
(entry,) = extract_module(open(sys.argv[1] + "/m.py").read(), repo="o/r", path="m.py")
with Executor(workers=1) as pool:
    result = pool.run_one(RunRequest(entry, synthesize(entry), sys.argv[1]))
print(json.dumps({"cases": [c.model_dump(mode="json") for c in result.cases], "isolation": result.isolation.model_dump()}))
"""


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("unshare"), reason="needs root to make an unprivileged runner")
def test_without_a_group_memfd_create_is_refused_and_said(tmp_path) -> None:
    (tmp_path / "m.py").write_text("import os\n\n\ndef buffer(n: int) -> int:\n    return os.memfd_create('b') + n\n")
    tmp_path.chmod(0o755)
    command = ["unshare", "--user", "--map-user=65534", "--map-group=65534", sys.executable, "-c", FALLBACK, str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout.splitlines()[-1])
    assert any(f.startswith("no memory cgroup (not root): memfd_create refused") for f in record["isolation"]["fallbacks"])
    assert record["cases"] and all(c["outcome"] in ("blocked", "raised") for c in record["cases"])
    assert all("Operation not permitted" in json.dumps(c["exception"]) for c in record["cases"])
