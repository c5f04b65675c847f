"""The zygote: a warm fork server that has imported numpy, pandas and torch once.

The parent writes one JSON request per line on stdin; for each, the zygote forks the sample
process straight into the PID namespace of its reaper (`sandbox.Reaper`, forked once at start,
before the warm imports). The sample starts a new session, closes every descriptor it inherited
(the protocol channel above all), enters its own network, mount, IPC and UTS namespaces, builds
its private root, drops to its slot's uid and runs the child. One fork per sample: forking and
tearing down the warm address space is the dearest step of a run. The zygote enforces the
wall-clock limit by killing the sample, then has the reaper kill whatever the run left in the
namespace (detached grandchildren included); without a reaper (not root), every process of the
slot's uid is swept instead (`sandbox.sweep`). The zygote then answers one JSON line: how the
run ended, the child's report lines (raw, capped), the sizes and tails of its output.

Samples and the reaper die with the zygote (parent-death signal), so a killed zygote leaves no
run behind. CUDA is never initialised here: a forked child must not inherit a CUDA context.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sys
import tempfile
from dataclasses import asdict

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

WARM_MODULES = ("numpy", "pandas", "torch")
TAIL_BYTES = 2048
OUTPUTS = ("stdout", "stderr", "report.jsonl")


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

    return "cuda" if any(d.removeprefix("/dev/nvidia").isdigit() for d in sandbox.gpu_devices()) else "cpu"


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


def _report_lines(path: str, cap: int) -> tuple[list[str], bool]:
    try:
        with _open(path) as handle:
            data = handle.read(cap + 1)
    except OSError:
        return [], False
    truncated = len(data) > cap
    text = data[:cap].decode("utf-8", "replace")
    lines = text.split("\n")
    if truncated or not text.endswith("\n"):
        lines = lines[:-1]  # a partial last line is not a report
    return [line for line in lines if line], truncated


def _sample_process(request: dict, workdir: str, uid: int, limits, pid_namespace: bool) -> None:
    """The forked sample process: isolate, then hand over to the child runner. Never returns."""
    from paperproof.runner import child, sandbox

    parent = os.getppid()  # 0 in the reaper's namespace: the zygote lies outside it
    sandbox.die_with_parent(parent)
    os.setsid()
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's protocol channel must not reach a sample
    out = open(os.path.join(workdir, "report.jsonl"), "w", encoding="utf-8")
    mapped = sandbox.mapped_bytes()
    host_root = os.getuid() == 0  # inside a user namespace of our own we would look like root
    report = sandbox.IsolationReport()
    if sandbox.enter_namespaces(report, pid_namespace):  # never touch mounts outside a namespace of our own
        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(child.__file__)))
        new_root = os.path.join(os.path.dirname(workdir), ".root")
        owner = uid if host_root else None
        sandbox.private_root([request["snapshot"], package_dir, *filter(None, [request.get("environment")])], new_root, report, owner, limits.scratch_bytes,
                             gpu=request.get("device") == "cuda", fallback_dir=workdir, proc=pid_namespace)
    else:
        os.chdir(workdir)
    sandbox.drop_privileges(uid, report, host_root)
    sandbox.die_with_parent(parent)  # again: the kernel clears it when the uid changes
    sandbox.prctl(sandbox.PR_SET_NO_NEW_PRIVS, 1)
    sandbox.apply_limits(limits, mapped, report, gpu=request.get("device") == "cuda")
    refused = syscall_filter().load()
    if refused is None:
        report.syscalls = "seccomp"
    else:
        report.fallbacks.append(f"no system-call filter ({refused})")
    sandbox.clean_environment(home=os.getcwd())
    sandbox.default_signals()
    out.write(json.dumps({"event": "isolation", **report.as_dict()}) + "\n")
    out.flush()
    child.run(request, out)
    out.flush()
    os._exit(0)


def serve(request: dict, slot: int, runs_root: str, reaper=None) -> dict:
    from paperproof.runner import sandbox

    limits = sandbox.Limits(**request.get("limits", {}))
    request = {**request, "device": _device(request)}
    workdir = tempfile.mkdtemp(prefix="run-", dir=runs_root)
    uid = sandbox.BASE_UID + slot
    if os.getuid() == 0:
        os.chown(workdir, uid, uid)  # writable by the sample only where no private root is made
    os.chmod(workdir, 0o700)
    syscall_filter()  # prepared here once, loaded in each sample
    pid = _fork(reaper)
    if pid == 0:
        try:
            _sample_process(request, workdir, uid, limits, reaper is not None)
        finally:
            os._exit(71)
    timed_out, status = _wait(pid, limits.wall_seconds)
    if reaper is not None:
        reaper.sweep()  # whatever the run left in the namespace: orphans, detached grandchildren
    else:
        sandbox.sweep(uid)  # without a PID namespace: every process of the slot's uid
    paths = {name: os.path.join(workdir, name) for name in OUTPUTS}
    lines, truncated = _report_lines(paths["report.jsonl"], limits.output_bytes)
    answer = {
        "timed_out": timed_out,
        "limits": asdict(limits),
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "report": lines,
        "report_truncated": truncated,
        "output_sizes": {name.split(".")[0]: _size(path) for name, path in paths.items()},
        "stdout_tail": _tail(paths["stdout"]),
        "stderr_tail": _tail(paths["stderr"]),
        "device": request["device"],
    }
    shutil.rmtree(workdir, ignore_errors=True)
    return answer


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


def _wait(pid: int, seconds: float) -> tuple[bool, int]:
    """Wait for the sample; past `seconds`, kill it and its process group. (timed out, wait status)."""
    timed_out = False
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(seconds * 1000):
            timed_out = True
            for kill in (os.kill, os.killpg):
                try:
                    kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    return timed_out, status


_FILTER: list = []


def syscall_filter():
    """The seccomp filter, built once per zygote (a few ms) and loaded in every sample (under 1 ms)."""
    if not _FILTER:
        from paperproof.runner import seccomp

        _FILTER.append(seccomp.Filter())
    return _FILTER[0]


def main() -> None:
    from paperproof.runner import sandbox

    slot = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    reaper = sandbox.Reaper.start()  # before the warm imports: a small process to fork
    warm = _warm()
    from paperproof.fixtures import values  # noqa: F401 - warm the materialiser for the children
    from paperproof.runner import child  # noqa: F401

    syscall_filter()
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


if __name__ == "__main__":
    main()
