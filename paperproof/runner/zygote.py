"""The zygote: a warm fork server that has imported numpy, pandas and torch once.

The parent writes one JSON request per line on stdin; for each, the zygote makes the run a memory
cgroup (`cgroup`, where the machine allows) and forks the run's harness (`runner.harness`) straight
into the PID namespace of its reaper (`sandbox.Reaper`, forked once at start, before the warm
imports). The harness joins the cgroup first. The harness closes every descriptor it
inherited but its report pipe, enters its own network, mount, IPC and UTS namespaces, builds
its private root and loads the system-call filter, then forks one case process per fixture
case, which drops to the slot's uid and makes the call. The harness keeps the run's CPU budget and
its wall-clock backstop itself; the zygote reads its report and kills it only past a backstop of
its own, then has the
reaper kill whatever the run left in the namespace (detached grandchildren included); without a
reaper (not root), every process of the slot's uid is swept instead (`sandbox.sweep`). The
zygote then answers one JSON line: how the harness ended (and whether its cgroup was stopped at the
memory limit), its report lines (capped), the sizes
and tails of the sample's output.

Harnesses, samples and the reaper die with the zygote (parent-death signal), so a killed zygote
leaves no run behind. CUDA is never initialised here: a forked child must not inherit a CUDA context.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

WARM_MODULES = ("numpy", "pandas", "torch")
TAIL_BYTES = 2048
OUTPUTS = ("stdout", "stderr")
BACKSTOP_SECONDS = 10.0  # past the run's wall-clock backstop, the harness itself is killed


def _warm() -> list[str]:
    loaded = []
    for name in WARM_MODULES:
        try:
            __import__(name)
            loaded.append(name)
        except ImportError:
            pass
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(1)
    return loaded


def _device(request: dict) -> str:
    """The GPU when present and the entry asked for a device, else the CPU; probed without CUDA init."""
    if not request.get("wants_device"):
        return "cpu"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return "cpu"
    from paperproof.runner import sandbox

    return "cuda" if sandbox.gpu_present() else "cpu"


def _open(path: str):
    """A run's output file, never through a link: where a sample shares the working directory
    (no private root), it could swap its output for a link to a file only the zygote may read."""
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb")


def _tail(path: str, limit: int = TAIL_BYTES) -> str:
    try:
        with _open(path) as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def serve(request: dict, slot: int, runs_root: str, reaper=None) -> dict:
    from paperproof.runner import harness, sandbox

    limits = sandbox.Limits(**request.get("limits", {}))
    request = {**request, "device": _device(request)}
    workdir = tempfile.mkdtemp(prefix="run-", dir=runs_root)
    uid = sandbox.BASE_UID + slot
    if os.getuid() == 0:
        os.chown(workdir, uid, uid)  # writable by the sample only where no private root is made
    os.chmod(workdir, 0o700)
    seccomp_filter = syscall_filter()  # prepared here once, loaded in each run's harness
    report_read, report_write = os.pipe()
    accounting = _ACCOUNTING[0]
    group = accounting.group(limits.memory_bytes, limits.processes) if accounting is not None else None
    pid = _fork(reaper)
    if pid == 0:
        try:
            _default_signals()
            os.close(report_read)
            harness.main(request, workdir, uid, limits, reaper is not None, report_write, seccomp_filter,
                         group, _ACCOUNTING[1])
        finally:
            os._exit(71)
    os.close(report_write)
    backstop = limits.run_backstop(len(request.get("cases", []))) + BACKSTOP_SECONDS
    timed_out, status, data = _collect(pid, report_read, backstop, limits.output_bytes)
    if reaper is not None:
        reaper.sweep()  # whatever the run left in the namespace: orphans, detached grandchildren
    else:
        sandbox.sweep(uid)  # without a PID namespace: every process of the slot's uid
    memory = {"accounting": group.kind if group else None, "stopped": group is not None and group.stopped()}
    starved = None
    if timed_out and group is not None:  # the harness did not end its own run: was the machine's load the cause?
        from paperproof.runner import meter

        waited = group.waited_seconds()
        starved = None if waited is None else waited >= meter.STARVED * limits.wall_seconds
    if group is not None:
        group.remove()
    lines, truncated = _lines(data, limits.output_bytes)
    paths = {name: os.path.join(workdir, name) for name in OUTPUTS}
    answer = {
        "timed_out": timed_out,
        "limits": asdict(limits),
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "report": lines,
        "report_truncated": truncated,
        "output_sizes": {name: _size(path) for name, path in paths.items()},
        "stdout_tail": _tail(paths["stdout"]),
        "stderr_tail": _tail(paths["stderr"]),
        "device": request["device"],
        "memory": memory,
        "starved": starved,
    }
    shutil.rmtree(workdir, ignore_errors=True)
    return answer


def _lines(data: bytes, cap: int) -> tuple[list[str], bool]:
    truncated = len(data) > cap
    lines = data[:cap].decode("utf-8", "replace").split("\n")[:-1]  # a partial last line is not a report
    return [line for line in lines if line], truncated


def _collect(pid: int, fd: int, seconds: float, cap: int) -> tuple[bool, int, bytes]:
    """Read the harness's report until it exits; past `seconds` (a backstop: the harness keeps the
    run's wall-clock limit itself) kill it. (timed out, wait status, the report's bytes, capped)."""
    deadline = time.monotonic() + seconds
    chunks, size, timed_out = [], 0, False
    os.set_blocking(fd, False)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                for kill in (os.kill, os.killpg):
                    try:
                        kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                break
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:  # the harness is gone (its case processes never held this pipe)
                break
            if size <= cap:
                chunks.append(chunk)
                size += len(chunk)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return timed_out, status, b"".join(chunks)


def _fork(reaper) -> int:
    """Fork the sample, into the reaper's PID namespace when there is one; the zygote stays in its own."""
    if reaper is None:
        return os.fork()
    reaper.enter()
    try:
        pid = os.fork()
    except BaseException:
        reaper.leave()
        raise
    if pid != 0:  # the child stays: it and all its descendants belong to the reaper's namespace
        reaper.leave()
    return pid


_FILTER: list = []
_ACCOUNTING: list = [None, "not looked for"]  # (cgroup.Accounting or None, why none), found once in `main`


def syscall_filter():
    """The seccomp filter, built once per zygote (a few ms) and loaded in every run's harness
    (under 1 ms), which answers the calls it denies. Without a memory cgroup it also refuses
    `memfd_create`, whose pages no other limit counts."""
    if not _FILTER:
        from paperproof.runner import seccomp

        _FILTER.append(seccomp.Filter(notify=True, deny_memfd=_ACCOUNTING[0] is None))
    return _FILTER[0]


def _quietly(number: int, frame: object) -> None:
    """SIGTERM or SIGINT (the builder ending its workers): exit through `main`'s cleanup, without a traceback."""
    raise SystemExit(128 + number)


def _default_signals() -> None:
    """In a forked harness: the signals as a fresh interpreter has them, so a sample meets them as it would."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    from paperproof.runner import cgroup, sandbox

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, _quietly)
    slot = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    reaper = sandbox.Reaper.start()  # before the warm imports: a small process to fork
    _ACCOUNTING[:] = cgroup.Accounting.find()
    warm = _warm()
    from paperproof.fixtures import values  # noqa: F401 - warm the materialiser for the children
    from paperproof.runner import child, harness  # noqa: F401 - and the harness, the wire reader, the summaries

    syscall_filter()
    gc.freeze()  # what the warm imports made is never collected: no copy-on-write of it in each fork
    runs_root = tempfile.mkdtemp(prefix="paperproof-runs-")
    os.chmod(runs_root, 0o711)
    os.makedirs(os.path.join(runs_root, ".root"))  # mount point for each sample's private root
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints from libraries must not hit the channel
    torch = sys.modules.get("torch")
    cuda = bool(torch is not None and torch.cuda.is_initialized())  # must stay False: children fork from here
    channel.write(json.dumps({"ready": True, "warm": warm, "pid": os.getpid(), "runs_root": runs_root,
                              "cuda_initialised": cuda}) + "\n")
    channel.flush()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            if reaper is not None and not reaper.alive():  # killed from outside: make another
                reaper.release()
                reaper = sandbox.Reaper.start()
            try:
                answer = serve(json.loads(line), slot, runs_root, reaper)
            except Exception as exc:  # noqa: BLE001 - a failure of ours is answered, not fatal
                answer = {"runner_error": f"{type(exc).__name__}: {exc}"[:500]}
            channel.write(json.dumps(answer) + "\n")
            channel.flush()
    finally:
        shutil.rmtree(runs_root, ignore_errors=True)
        if _ACCOUNTING[0] is not None:
            _ACCOUNTING[0].close()


if __name__ == "__main__":
    main()
