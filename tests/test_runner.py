"""The runner's parent side: zygote restarts, the protocol channel, devices, the result cache,
report parsing and the caps on returned values."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from paperproof.build.pipeline import BuildConfig, build
from paperproof.catalogue.extract import extract_module
from paperproof.catalogue.sample import Contract
from paperproof.fixtures.synth import synthesize
from paperproof.runner.answer import parse_answer
from paperproof.runner.executor import Executor, ResultCache, RunRequest
from paperproof.verify import verdict


def request(tmp: Path, code: str, limits: dict | None = None, name: str = "m.py") -> RunRequest:
    (tmp / name).write_text(code)
    (entry,) = extract_module(code, repo="o/r", path=name)
    fixtures = synthesize(entry)
    assert fixtures.cases, fixtures.missing
    return RunRequest(entry, fixtures, str(tmp), limits)


@pytest.fixture(scope="module")
def executor():
    with Executor(workers=1) as pool:
        yield pool


def test_entries_taking_a_device_get_the_cpu_here_and_the_record_says_so(executor, tmp_path):
    run = request(tmp_path, "def place(scores, device):\n    return str(device)\n")
    assert run.payload()["wants_device"]
    result = executor.run_one(run)
    assert result.end == "completed" and result.device == "cpu"
    assert {c.value.repr for c in result.cases} == {"'cpu'"}
    hello = executor._all[0].hello
    assert hello["warm"] == ["numpy", "pandas", "torch"] and hello["cuda_initialised"] is False


def test_a_case_holds_no_pipe_or_socket_of_the_runner_but_its_own_hand_back(executor, tmp_path):
    code = (
        "import os, stat\n\n"
        "def held(n):\n"
        "    kinds = {}\n"
        "    for name in os.listdir('/proc/self/fd'):\n"
        "        try:\n"
        "            mode = os.fstat(int(name)).st_mode\n"
        "        except OSError:\n"
        "            continue\n"
        "        kinds[name] = 'pipe' if stat.S_ISFIFO(mode) else 'socket' if stat.S_ISSOCK(mode) else 'other'\n"
        "    return ' '.join(sorted(kinds.values()))\n"
    )
    result = executor.run_one(request(tmp_path, code))
    assert result.end == "completed"
    for case in result.cases:  # std streams and the write end of its own hand-back pipe
        assert case.value.repr.strip("'").split() == ["other", "other", "other", "pipe"], case.value


def test_a_sample_gets_no_transparent_huge_pages(executor, tmp_path):
    """Else the kernel's work to find huge pages for a large allocation counts as the sample's CPU time."""
    code = (
        "def huge_pages(n):\n"
        "    with open('/proc/self/status') as handle:\n"
        "        return [line.split()[1] for line in handle if line.startswith('THP_enabled:')][0]\n"
    )
    result = executor.run_one(request(tmp_path, code))
    assert result.end == "completed"
    assert {case.value.repr for case in result.cases} == {"'0'"}


def test_a_killed_zygote_is_restarted_and_the_affected_sample_marked(tmp_path):
    cache = ResultCache(tmp_path / "cache")
    slow = request(tmp_path, "import time\n\ndef wait(n):\n    time.sleep(30)\n", name="slow.py")
    quick = request(tmp_path, "def double(n):\n    return 2 * n\n", name="quick.py")
    with Executor(workers=1, cache=cache) as pool:
        pool.run_one(quick)  # warm: the zygote is up
        zygote = pool._all[0]
        runs_root = zygote.runs_root
        killer = threading.Timer(1.0, lambda: os.kill(zygote.process.pid, signal.SIGKILL))
        killer.start()
        started = time.monotonic()
        result = pool.run_one(slow)
        assert time.monotonic() - started < 10  # noticed at once, not at the wall-clock limit
        assert result.end == "runner_error"
        assert "died (signal 9)" in result.reason and "restarted" in result.reason
        judged = verdict.judge(slow.fixtures, result, Contract())
        assert judged.status == "unverified" and judged.reason.startswith("not run to a result: the sandbox zygote died")
        assert not os.path.exists(runs_root)
        assert cache.get(slow.cache_key()) is None  # a runner failure is not the sample's result
        again = pool.run_one(quick.__class__(quick.entry, quick.fixtures, quick.snapshot, {"wall_seconds": 9}))
        assert again.end == "completed"  # on a fresh zygote


def test_concurrent_pools_never_share_a_sandbox_uid():
    with Executor(workers=2) as one, Executor(workers=2) as two:
        slots = [z.slot for z in one._all + two._all]
    assert len(set(slots)) == 4


def test_the_cache_skips_unchanged_runs_and_reruns_changed_code_or_fixtures(tmp_path):
    cache_dir = tmp_path / "cache"
    first = request(tmp_path, "def half(n):\n    return n / 2\n", name="a.py")
    second = request(tmp_path, "def third(n):\n    return n / 3\n", name="b.py")
    with Executor(workers=1, cache=ResultCache(cache_dir)) as pool:
        list(pool.run([first, second]))
        assert pool.executed == 2
    with Executor(workers=1, cache=ResultCache(cache_dir)) as pool:
        results = list(pool.run([first, second]))
        assert (pool.executed, pool.cache.hits) == (0, 2)
        assert [r.end for r in results] == ["completed", "completed"]
    changed = request(tmp_path, "def half(n):\n    return n / 2.0\n", name="a.py")
    refixtured = RunRequest(second.entry, second.fixtures.model_copy(update={"version": "other"}), second.snapshot)
    with Executor(workers=1, cache=ResultCache(cache_dir)) as pool:
        list(pool.run([changed, second, refixtured]))
        assert (pool.executed, pool.cache.hits) == (2, 1)


def test_a_second_build_with_nothing_changed_executes_no_sample(bundled_site, tmp_path):
    cache = bundled_site.parent / "cache"
    summary = build(BuildConfig(out=tmp_path / "site", cache=cache))
    total = sum(summary.samples.values())
    assert summary.executed == 0
    assert summary.cached > 0 and summary.cached <= total


# --- report parsing: untrusted lines ---------------------------------------------------------


def _answer(lines: list[dict], **frame) -> dict:
    return {"timed_out": False, "exit_code": 0, "signal": None, "limits": {}, "report_truncated": False,
            "report": [json.dumps(line) for line in lines], **frame}


def _cases(run: RunRequest) -> list[dict]:
    return [{"event": "case", "case_id": c.case_id, "outcome": "returned",
             "value": {"type": "int", "repr": "1", "digest": "d"}} for c in run.fixtures.cases]


def test_forged_or_unknown_report_lines_make_the_report_untrusted(tmp_path):
    run = request(tmp_path, "def one(n):\n    return 1\n")
    honest = parse_answer(_answer([{"event": "load"}, *_cases(run)]), run)
    assert honest.end == "completed"
    for extra, why in (
        ({"event": "case", "case_id": run.fixtures.cases[0].case_id, "outcome": "returned",
          "value": {"type": "int", "repr": "2", "digest": "e"}}, "two results for case"),
        ({"event": "verdict", "status": "ran"}, "unknown event 'verdict'"),
        ({"event": "case", "case_id": "bonus", "outcome": "returned", "value": {"type": "int", "digest": "f"}}, "not asked for"),
        ({"event": "isolation", "network": "namespace"}, "second isolation record"),
    ):
        lines = [{"event": "isolation"}, *_cases(run), extra]
        result = parse_answer(_answer(lines), run)
        assert result.end == "protocol_error" and why in result.reason
        assert all(c.outcome == "not_reached" for c in result.cases)  # nothing of it is kept
        assert verdict.judge(run.fixtures, result, Contract()).reason.startswith("its report cannot be trusted")


def test_the_reason_names_the_limit_and_the_case_cut_short(executor, tmp_path):
    spin = request(tmp_path, "def spin(n):\n    while True:\n        n += 1\n", {"cpu_seconds": 1}, name="spin.py")
    first = spin.fixtures.cases[0].case_id
    result = executor.run_one(spin)
    assert (result.end, result.reason) == ("killed", f"CPU time limit of 1 s reached during case {first}")
    assert [c.outcome for c in result.cases] == ["exited"] + ["not_reached"] * (len(result.cases) - 1)
    late = request(tmp_path, "import time\n\ndef wait(n):\n    time.sleep(30)\n", {"wall_seconds": 2.5}, name="late.py")
    result = executor.run_one(late)
    assert result.reason == f"wall-clock limit of 2.5 s reached during case {first}; the process tree was killed"


def test_a_case_that_exits_or_dies_is_exited_without_returning_and_the_others_still_run(executor, tmp_path):
    code = "import os, signal\n\ndef pick(n):\n    if n == 24:\n        os.kill(os.getpid(), signal.SIGSEGV)\n    return n\n"
    run = request(tmp_path, code, name="pick.py")
    result = executor.run_one(run)
    by_outcome = {c.outcome for c in result.cases}
    assert by_outcome == {"exited", "returned"}
    died = [c for c in result.cases if c.outcome == "exited"]
    assert all(c.value is None and c.ended == "ended by SIGSEGV: segmentation fault" for c in died)
    assert result.end == "killed" and result.reason.startswith("ended by SIGSEGV: segmentation fault during case ")


# --- caps on returned values -------------------------------------------------------------------


def test_values_over_the_caps_are_not_recorded(executor, tmp_path):
    listed = executor.run_one(request(tmp_path, "def many(n):\n    return list(range(100))\n", {"value_bytes": 512}, name="many.py"))
    assert {c.outcome for c in listed.cases} == {"unserialisable"}
    assert "over the 0 MiB cap on returned values" in listed.cases[0].exception.message
    code = "import numpy as np\n\ndef nested(n):\n    return [[list(np.linspace(0, 1, 4096)) for _ in range(4)] for _ in range(4)]\n"
    big = executor.run_one(request(tmp_path, code, {"record_bytes": 64 * 1024}, name="nested.py"))
    assert {c.outcome for c in big.cases} == {"unserialisable"}
    assert "over the 65536-byte cap on one report record" in big.cases[0].exception.message


FALLBACK_SCRIPT = """
import json, sys
from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.synth import synthesize
from paperproof.runner.executor import Executor, RunRequest
(entry,) = extract_module(open(sys.argv[1] + "/m.py").read(), repo="o/r", path="m.py")
with Executor(workers=1) as pool:
    result = pool.run_one(RunRequest(entry, synthesize(entry), sys.argv[1]))
print(json.dumps({"end": result.end, "isolation": result.isolation.model_dump()}))
"""


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("unshare"), reason="needs root to make an unprivileged runner")
def test_without_root_the_run_record_states_each_fallback(tmp_path):
    (tmp_path / "m.py").write_text("def double(n):\n    return 2 * n\n")
    tmp_path.chmod(0o755)
    command = ["unshare", "--user", "--map-user=65534", "--map-group=65534",
               sys.executable, "-c", FALLBACK_SCRIPT, str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout.splitlines()[-1])
    assert record["end"] == "completed"
    isolation = record["isolation"]
    assert (isolation["network"], isolation["pid"], isolation["user"]) == ("namespace", "process_group", "same")
    assert any(f.startswith("no PID namespace (needs root)") for f in isolation["fallbacks"])
    assert any(f.startswith("not root: runs as the invoking user") for f in isolation["fallbacks"])


def test_a_sample_runs_every_numerical_library_on_one_thread(executor, tmp_path):
    """The budget is CPU time of the sample's processes: a library sizing its thread pool to the machine would spend
    it faster than its work does, and more on a machine with more cores."""
    code = ("import os\n\n"
            "def threads(n):\n"
            "    import torch\n"
            "    names = ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'TF_NUM_INTRAOP_THREADS', 'TF_NUM_INTEROP_THREADS')\n"
            "    return [torch.get_num_threads(), *[os.environ.get(name) for name in names]]\n")
    result = executor.run_one(request(tmp_path, code))
    assert result.end == "completed"
    seen = {tuple(item.repr for item in c.value.items or []) for c in result.cases if c.value is not None}
    assert seen == {("1", "'1'", "'1'", "'1'", "'1'")}
