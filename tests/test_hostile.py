"""The hostile corpus (`tests/hostile`): every attack is contained and recorded with a precise
status and reason, the honest samples beside it are intact, and the host is untouched.

`paperproof verify` runs as a real subprocess on a copy of the corpus, with a fake token in its
environment, a TCP listener on this machine for the network attacks to aim at, canary paths
for the file attacks, and a root-only secret; afterwards the test checks the canaries, the
listener, the copy, the runner's temporary directory and the process table.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parent / "hostile"
LIMITS = {"wall_seconds": 8, "cpu_seconds": 2, "file_size": 2 * 1024**2, "address_space": 512 * 1024**2,
          "processes": 32, "open_files": 64, "memory_bytes": 640 * 1024**2}
FAKE_TOKEN = "ghp_paperproofFakeToken0123456789"

# module -> (status, reason pattern): what each kind must be recorded as, precisely.
EXPECTED = {
    "benign": ("ran", r"^returned on (\d+) of \1 cases"),
    "uses_local_module": ("ran", r"^returned on (\d+) of \1 cases"),
    # A stand-in module is given (fixtures.stubs): the module loads, and the call that uses it says what it needs.
    "missing_package": ("unverified", r"^needs module hostile_tensorflow_addons, which could not be had in the sandbox: needs hostile_tensorflow_addons"),
    "net_connect": ("unverified", r"^blocked by the sandbox on every case: network: (Connection refused|Network is unreachable)"),
    "dns_lookup": ("unverified", r"^blocked by the sandbox on every case: network: name resolution is not available"),
    "write_outside": ("unverified", r"^blocked by the sandbox on every case: filesystem: .*checkpoint\.npy is read-only in the sandbox"),
    "write_home": ("unverified", r"^blocked by the sandbox on every case: (filesystem: .* is read-only|file not available) in the sandbox"),
    "write_tmp": ("ran", r"^returned on (\d+) of \1 cases"),  # its private /tmp: the host's stays clean
    "write_shm": ("ran", r"^returned on (\d+) of \1 cases"),  # its private /dev/shm
    "read_secret": ("unverified", r"^blocked by the sandbox on every case: filesystem: access to .*credentials\.txt is denied"),
    "env_token": ("ran", r"^returned on (\d+) of \1 cases"),  # it raises with anything it finds
    "see_processes": ("ran", r"^returned on (\d+) of \1 cases"),
    # the run's CPU budget (of all its processes together) may end it before every case met its limit
    "fork_bomb": ("unverified", r"^blocked by the sandbox on (every case|\d+ of \d+ cases): processes: no process could be started \(limit of 32"),
    "thread_bomb": ("unverified", r"^blocked by the sandbox on every case: processes: no thread could be started \(limit of 32"),
    "memory_bomb": ("unverified", r"^blocked by the sandbox on (every case|\d+ of \d+ cases): memory: allocation refused at the address-space limit \(512 MiB"),
    # memory no process maps, in three processes; SysV segments that outlive their maker: its cgroup stops it
    "memfd_bomb": ("unverified", r"^no case finished: stopped for memory: its processes together reached the memory "
                   r"limit of 640 MiB \(every page they held, memfd and shared memory included, counted by its cgroup v[12]\)"),
    "sysv_shm_bomb": ("unverified", r"^no case finished: stopped for memory: its processes together reached the memory "
                      r"limit of 640 MiB"),
    "open_many_files": ("unverified", r"^blocked by the sandbox on every case: open files: limit of 64 reached"),
    # its time is CPU time, the same on a busy machine: never the wall-clock backstop
    "cpu_spin": ("unverified", r"^no case finished: CPU time limit of 2 s reached during case typical"),
    "infinite_recursion": ("ran_violates", r"^raised on every case \(RecursionError ×\d+\)"),
    "segfault": ("unverified", r"^no case finished: ended by SIGSEGV: segmentation fault during case typical"),
    "os_exit": ("unverified", r"^no case finished: exited without returning \(status 3\) during case typical and \d+ other cases"),
    "sys_exit": ("ran_violates", r"^raised on every case \(SystemExit ×\d+\); first: SystemExit: exit requested with status 4"),
    # its parent is the harness, root: refused; its own group is itself
    "kill_parent": ("unverified", r"^no case finished: ended by SIGTERM: terminated, not by the runner during case typical"),
    "ignore_sigterm": ("unverified", r"^no case finished: wall-clock limit of 8 s reached during case typical; the process tree was killed"),
    "detached_grandchild": ("unverified", r"^no case finished: wall-clock limit of 8 s reached during case typical; the process tree was killed"),
    "signal_alarm": ("unverified", r"^no case finished: ended by SIGALRM: its own alarm timer during case typical"),
    "gigantic_output": ("unverified", r"^no case finished: stdout reached the file-size cap of 2 MiB \(SIGXFSZ\) during case typical"),
    "huge_return": ("unverified", r"^returned values we cannot record on every case: the returned ndarray is 74\.5 GiB, over the 256 MiB cap"),
    "unserialisable_return": ("unverified", r"^returned values we cannot record on every case: cannot describe a value of type .*_Index: its repr raised RuntimeError"),
    "generator_return": ("ran", r"^returned on (\d+) of \1 cases"),
    # what it patches lives in its own process, after the runner bound what it uses: its own value is recorded
    "monkeypatch_runner": ("ran", r"^returned on (\d+) of \1 cases"),
    "patch_builtins": ("ran", r"^returned on (\d+) of \1 cases"),
    "forge_protocol": ("unverified", r"^returned values we cannot record on every case: what it handed back is not a value"),
    # data-map metrics whose real computation returns zeros and which forge the paper's confidence: what is
    # recorded is their own zeros, a confidence that never varies where the paper's does
    "forge_frames_exit": ("unverified", r"^no case finished: exited without returning \(status 0\) during case typical and \d+ other cases"),
    "forge_sys_modules": ("ran_violates", r"^returned on (\d+) of \1 cases; departs .*gives every sample the same value \(0\)"),
    "forge_gc": ("ran_violates", r"^returned on (\d+) of \1 cases; departs .*gives every sample the same value \(0\)"),
    "forge_descriptor": ("unverified", r"^returned values we cannot record on every case: what it handed back is not a value"),
    "forge_code_swap": ("ran_violates", r"^returned on (\d+) of \1 cases; departs .*gives every sample the same value \(0\)"),
    "forge_after_blocked": ("unverified", r"^no case finished: exited without returning \(status 0\) during case typical"),
    "honest_confidence": ("ran", r"^returned on (\d+) of \1 cases"),
    "setuid_root": ("unverified", r"^blocked by the sandbox on every case: privileges: operation not permitted in the sandbox"),
    "ptrace_attach": ("unverified", r"^blocked by the sandbox on every case: privileges: operation not permitted in the sandbox"),
    "unshare_escape": ("unverified", r"^blocked by the sandbox on every case: privileges: operation not permitted in the sandbox"),
    # allowed to any user by the kernel: only the seccomp layer refuses these two
    "netlink_probe": ("unverified", r"^blocked by the sandbox on every case: network: Address family not supported by protocol"),
    "io_uring_probe": ("unverified", r"^blocked by the sandbox on every case: privileges: operation not permitted in the sandbox"),
}

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux namespaces")

# A run whose processes waited for a CPU the machine's other work held until its wall-clock backstop (8 s, four
# times its CPU budget: a share of a CPU under a quarter) is tried again and, cut again, judged by no rule: on a
# machine that busy a sample may end so instead of with its own reason, and nothing else differs.
LOAD_CUT = "not run to a result: cut by load: "


def _host_addresses() -> list[str]:
    """IPv4 addresses of this machine's interfaces other than loopback (traffic to them stays here)."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _, name in socket.if_nameindex():
            if name == "lo":
                continue
            try:
                answer = fcntl.ioctl(sock, 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
            except OSError:
                continue
            found.append(socket.inet_ntoa(answer[20:24]))
    return found


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


def _processes() -> dict[int, tuple[str, bytes]]:
    """pid -> (command line, environment) of every process we can read."""
    seen = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        seen[int(name)] = (cmdline, environ)
    return seen


def _shmem() -> int:
    """The host's shared memory (memfd, SysV segments, tmpfs files) in bytes, from /proc/meminfo."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no Shmem line in /proc/meminfo")


# The memory attacks run apart, with the same memory limits and a CPU budget wide enough that a machine slow to
# fault in fresh pages (a new virtual machine touches each page of its memory for the first time) still meets the
# memory limit first: what they test is which memory limit stopped them, not how fast the kernel zeroes pages.
MEMORY_ATTACKS = ("memory_bomb", "memfd_bomb", "sysv_shm_bomb")
MEMORY_LIMITS = {**LIMITS, "cpu_seconds": 30, "wall_seconds": 60}


def _verify(repo: Path, limits: dict, env: dict) -> tuple[subprocess.CompletedProcess, list[dict]]:
    command = [sys.executable, "-m", "paperproof", "verify", str(repo), "--all", "--json", "--workers", "2",
               *[f"--limit={k}={v}" for k, v in limits.items()]]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    return done, json.loads(done.stdout) if done.returncode in (0, 1) else []


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    repo, memory = root / "hostile", root / "hostile-memory"
    shutil.copytree(HOSTILE, repo, ignore=shutil.ignore_patterns("__pycache__"))
    memory.mkdir()
    for module in MEMORY_ATTACKS:
        (repo / f"{module}.py").rename(memory / f"{module}.py")
    runner_tmp = root / "runner-tmp"
    runner_tmp.mkdir()
    tag = uuid.uuid4().hex[:12]
    secret_text = f"paperproof-secret-{tag}"
    secret = repo / "credentials.txt"
    secret.write_text(secret_text)
    secret.chmod(0o600)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("0.0.0.0", 0))
    listener.listen(16)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    canaries = {
        "canary_tmp": f"/tmp/paperproof-hostile-{tag}",
        "canary_shm": f"/dev/shm/paperproof-hostile-{tag}",
        "canary_home": str(Path.home() / f".paperproof-hostile-{tag}"),
    }
    targets = {"tcp": [["127.0.0.1", port]] + [[ip, port] for ip in _host_addresses()],
               "secret_file": str(secret), "marker": f"paperproof-hostile-{tag}", **canaries}
    (repo / "targets.json").write_text(json.dumps(targets))
    snapshot_before = _tree_digest(repo)
    env = {**os.environ, "GITHUB_TOKEN": FAKE_TOKEN, "AWS_SECRET_ACCESS_KEY": FAKE_TOKEN, "TMPDIR": str(runner_tmp)}
    shmem_before = _shmem()
    started = time.monotonic()
    runs = [_verify(repo, LIMITS, env)]
    elapsed = time.monotonic() - started
    runs.append(_verify(memory, MEMORY_LIMITS, env))
    accepted = []
    try:
        while True:
            accepted.append(listener.accept())
    except BlockingIOError:
        pass
    listener.close()
    time.sleep(0.2)  # let the kernel finish tearing down the last namespace
    return {
        "runs": runs, "elapsed": elapsed, "records": [r for _, records in runs for r in records],
        "tag": tag, "secret_text": secret_text, "canaries": canaries, "accepted": accepted, "repo": repo,
        "snapshot_before": snapshot_before, "snapshot_after": _tree_digest(repo), "runner_tmp": runner_tmp,
        "processes_after": _processes(), "shmem_before": shmem_before, "shmem_after": _shmem(),
        "busy": os.getloadavg()[0] >= (os.cpu_count() or 1),  # the machine's load over the last minute
    }


def test_verify_finishes_with_a_record_for_every_entry(hostile: dict) -> None:
    for done, records in hostile["runs"]:
        # exit 1: the corpus holds attempts the sandbox blocked and contracts broken, and verify says so for CI
        assert done.returncode == 1, done.stderr[-3000:]
        blocked = sorted(f"  {r['path']}:{r['lineno']} {r['entry']}: blocked by the sandbox: " for r in records
                         if any(c["outcome"] == "blocked" for c in r["cases"]))
        assert blocked and f", blocked {len(blocked)})\n" in done.stderr  # the summary's count of findings by kind
        assert all(done.stderr.count(b) == 1 for b in blocked)  # each once, at its file and line
    modules = {p.stem for p in HOSTILE.glob("*.py") if not p.name.startswith("_")}
    assert {r["path"].removesuffix(".py") for r in hostile["records"]} == modules
    assert set(EXPECTED) == modules, "every module of the corpus has an expectation"
    assert len(modules) >= 15


@pytest.mark.parametrize("module", sorted(EXPECTED))
def test_each_kind_is_contained_with_a_precise_status_and_reason(hostile: dict, module: str) -> None:
    record = next(r for r in hostile["records"] if r["path"] == f"{module}.py")
    status, pattern = EXPECTED[module]
    if record["reason"].startswith(LOAD_CUT):  # starved of a CPU on both tries: no verdict, and the record says so
        assert record["status"] == "unverified" and hostile["busy"], record["reason"]
        return
    assert (record["status"], module) == (status, module), record["reason"]
    assert re.search(pattern, record["reason"]), record["reason"]


def test_every_isolation_layer_held(hostile: dict) -> None:
    for record in hostile["records"]:
        if record["isolation"] is None:  # not run: could not be defined
            continue
        assert record["isolation"] == {"network": "namespace", "pid": "namespace", "filesystem": "read_only",
                                       "user": "unprivileged", "syscalls": "seccomp", "fallbacks": []}, record["path"]
        assert record["device"] == "cpu"


def test_honest_samples_beside_the_hostile_ones_are_intact(hostile: dict) -> None:
    by_path = {r["path"]: r for r in hostile["records"]}
    benign = by_path["benign.py"]
    assert all(c["outcome"] == "returned" for c in benign["cases"])
    assert benign["cases"][0]["output"].startswith("ndarray float32 [24] in [")
    local = by_path["uses_local_module.py"]  # a helper module of the snapshot imports from the snapshot
    assert all(c["outcome"] == "returned" for c in local["cases"])


def test_no_file_written_outside_the_sandbox(hostile: dict) -> None:
    for path in hostile["canaries"].values():
        assert not os.path.exists(path), path
    assert hostile["snapshot_after"] == hostile["snapshot_before"]  # the snapshot is read-only
    assert list(hostile["runner_tmp"].iterdir()) == []  # the runner cleared its own work too


def test_no_shared_memory_is_left_on_the_host(hostile: dict) -> None:
    """The memfd and SysV bombs asked for 1.3 GiB and 2 GiB; their cgroups stopped them and nothing stays held."""
    assert hostile["shmem_after"] - hostile["shmem_before"] < 256 * 1024**2


def test_no_connection_reached_the_host(hostile: dict) -> None:
    assert hostile["accepted"] == []


def test_no_process_left_behind(hostile: dict) -> None:
    marker, tmp = hostile["tag"], str(hostile["runner_tmp"]).encode()
    for pid, (cmdline, environ) in hostile["processes_after"].items():
        assert marker not in cmdline, f"the detached grandchild {pid} outlived its run: {cmdline}"
        assert tmp not in environ, f"a runner process {pid} outlived `paperproof verify`: {cmdline}"


def test_secrets_and_tokens_never_reach_a_sample(hostile: dict) -> None:
    output = "".join(done.stdout + done.stderr for done, _ in hostile["runs"])
    assert FAKE_TOKEN not in output
    assert hostile["secret_text"] not in output
    sees = next(r for r in hostile["records"] if r["path"] == "see_processes.py")
    # the reaper (PID 1 of its namespace), the run's harness, itself, and at most the case before it,
    # killed and not yet reaped (its memory out of reach: not dumpable): no host process, no other sample
    for case in sees["cases"]:
        assert re.fullmatch(r"dict len [34] \{1, \d+, \d+(, \d+)?\}", case["output"]), case["output"]
    forger = next(r for r in hostile["records"] if r["path"] == "forge_protocol.py")
    assert {c["outcome"] for c in forger["cases"]} == {"unserialisable"}  # what it wrote on its channel is not a value


FORGERS = ("forge_frames_exit", "forge_sys_modules", "forge_gc", "forge_descriptor", "forge_code_swap", "forge_after_blocked")


def test_forgers_publish_only_what_they_returned_and_never_the_papers_definition(hostile: dict) -> None:
    """Each forger's real computation returns zeros, and each forges the paper's confidence where it
    hopes the runner reads it; the honest implementation beside them is recognised as the paper's."""
    by_path = {r["path"]: r for r in hostile["records"]}
    honest = by_path["honest_confidence.py"]
    assert any(f["paper"] and f["metric"] == "confidence" for f in honest["fidelity"]), honest["fidelity"]
    for module in FORGERS:
        record = by_path[f"{module}.py"]
        assert not any(f["paper"] for f in record["fidelity"]), (module, record["fidelity"])
        returned = [c for c in record["cases"] if c["outcome"] == "returned"]
        for case in returned:  # what it returned, all zeros: never the reference it forged
            assert re.fullmatch(r"ndarray float64 \[\d+\] in \[0, 0\]", case["output"]), (module, case["output"])
        if record["status"] == "ran":
            assert len(returned) == len(record["cases"]), module
    exits = by_path["forge_frames_exit.py"]
    assert {c["outcome"] for c in exits["cases"]} == {"exited"}
    assert {c["exception"] for c in exits["cases"]} == {"exited with status 0 without returning"}


def test_blocked_attempts_are_on_the_sample_page_and_its_twin(hostile: dict, tmp_path: Path) -> None:
    from types import SimpleNamespace

    from paperproof.build.renderer import Renderer
    from paperproof.build.urls import SiteUrls
    from paperproof.catalogue.sample import Sample

    by_path = {r["path"]: r for r in hostile["records"]}
    forger = by_path["forge_after_blocked.py"]  # catches both refusals, forges clean records and exits
    assert "tried to open a network connection (blocked)" in forger["blocked"]
    assert any(re.fullmatch(r"tried to write .*/cache\.npy, which is read-only \(blocked\)", line) for line in forger["blocked"])
    assert forger["status"] == "unverified"
    assert "tried to open a netlink socket (blocked)" in by_path["netlink_probe.py"]["blocked"]
    assert any(line.startswith("tried to make or enter namespaces (unshare") for line in by_path["unshare_escape.py"]["blocked"])
    assert by_path["benign.py"]["blocked"] == [] and by_path["write_tmp.py"]["blocked"] == []
    sample = Sample.model_validate(forger)
    urls = SiteUrls()
    files = Renderer(urls, "2025-07-28T00:00:00+00:00", tmp_path, False).sample(sample, SimpleNamespace(page_url="/repo/x/"), {}, {})
    page = (tmp_path / files[0]).read_text()
    twin = json.loads((tmp_path / files[1]).read_text())
    assert "<li>tried to open a network connection (blocked)</li>" in page
    assert "tried to open a network connection (blocked)" in twin["blocked"]


def test_the_corpus_runs_in_reasonable_time(hostile: dict) -> None:
    assert hostile["elapsed"] < 120
