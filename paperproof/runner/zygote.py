"""The zygote: a warm fork server that has imported numpy, pandas and torch once.

The parent writes one JSON request per line on stdin; for each, the zygote forks a supervisor,
which closes every descriptor it inherited (the protocol channel above all), isolates itself
(`sandbox`), forks the sample process (PID 1 of a new PID namespace where the kernel allows it)
and relays how it ended. The zygote enforces the wall-clock limit by killing the supervisor's
process group and then every process of the slot's uid (`sandbox.sweep`); the sample also dies
with the supervisor (parent-death signal), and with the sample every process of its namespace,
detached grandchildren included. The zygote then answers one JSON line: how the run ended, the
child's report lines (raw, capped), the sizes and tails of its output.

A supervisor dies with the zygote, so a killed zygote leaves no run behind. CUDA is never
initialised here: a forked child must not inherit a CUDA context.
"""

from __future__ import annotations

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


def _tail(path: str, limit: int = TAIL_BYTES) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _report_lines(path: str, cap: int) -> tuple[list[str], bool]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError:
        return [], False
    truncated = len(data) > cap
    text = data[:cap].decode("utf-8", "replace")
    lines = text.split("\n")
    if truncated or not text.endswith("\n"):
        lines = lines[:-1]  # a partial last line is not a report
    return [line for line in lines if line], truncated


def _sample_process(request: dict, report_fd: int, workdir: str, uid: int, limits, report,
                    namespaced: bool, parent: int) -> None:
    """In the process that runs sample code: finish isolation, then hand over to the child runner."""
    from paperproof.runner import child, sandbox

    out = os.fdopen(report_fd, "w", encoding="utf-8")
    if namespaced:  # never touch mounts outside a mount namespace of our own
        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(child.__file__)))
        new_root = os.path.join(os.path.dirname(workdir), ".root")
        owner = uid if os.getuid() == 0 else None
        sandbox.private_root([request["snapshot"], package_dir], new_root, report, owner, limits.scratch_bytes,
                             gpu=request.get("device") == "cuda", fallback_dir=workdir)
    else:
        os.chdir(workdir)
    sandbox.drop_privileges(uid, report)
    sandbox.die_with_parent(parent)
    sandbox.prctl(sandbox.PR_SET_NO_NEW_PRIVS, 1)
    sandbox.apply_limits(limits)
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


def _supervise(request: dict, workdir: str, uid: int, limits, zygote: int) -> None:
    """The forked supervisor: new session, no inherited descriptors, namespaces, then the sample."""
    from paperproof.runner import sandbox

    os.setsid()
    sandbox.die_with_parent(zygote)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        handle = os.open(os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, fd)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's protocol channel must not reach a sample
    report_fd = os.open(os.path.join(workdir, "report.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    report = sandbox.IsolationReport()
    namespaced = sandbox.enter_namespaces(report)
    pid = os.fork()
    if pid == 0:
        parent = os.getppid()  # 0 as PID 1 of a new namespace: the supervisor lies outside it
        sandbox.die_with_parent(parent)
        _sample_process(request, report_fd, workdir, uid, limits, report, namespaced, parent)
    os.close(report_fd)
    _, status = os.waitpid(pid, 0)
    if not namespaced:  # no PID namespace took the sample's descendants with it
        sandbox.sweep(uid)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


def serve(request: dict, slot: int, runs_root: str) -> dict:
    from paperproof.runner import sandbox

    limits = sandbox.Limits(**request.get("limits", {}))
    request = {**request, "device": _device(request)}
    workdir = tempfile.mkdtemp(prefix="run-", dir=runs_root)
    uid = sandbox.BASE_UID + slot
    if os.getuid() == 0:
        os.chown(workdir, uid, uid)  # writable by the sample only where no private root is made
    os.chmod(workdir, 0o700)
    zygote = os.getpid()
    syscall_filter()  # prepared here once, loaded in each sample
    pid = os.fork()
    if pid == 0:
        try:
            _supervise(request, workdir, uid, limits, zygote)
        finally:
            os._exit(71)
    timed_out = False
    deadline = time.monotonic() + limits.wall_seconds
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    if timed_out:
        sandbox.sweep(uid)  # whatever left the process group: setsid, double forks
    paths = {name: os.path.join(workdir, name) for name in OUTPUTS}
    lines, truncated = _report_lines(paths["report.jsonl"], limits.output_bytes)
    answer = {
        "timed_out": timed_out,
        "limits": asdict(limits),
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
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


_FILTER: list = []


def syscall_filter():
    """The seccomp filter, built once per zygote (a few ms) and loaded in every sample (under 1 ms)."""
    if not _FILTER:
        from paperproof.runner import seccomp

        _FILTER.append(seccomp.Filter())
    return _FILTER[0]


def main() -> None:
    slot = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    warm = _warm()
    from paperproof.fixtures import values  # noqa: F401 - warm the materialiser for the children
    from paperproof.runner import child, sandbox  # noqa: F401

    syscall_filter()
    runs_root = tempfile.mkdtemp(prefix="paperproof-runs-")
    os.chmod(runs_root, 0o711)
    os.makedirs(os.path.join(runs_root, ".root"))  # mount point for each sample's private root
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints from libraries must not hit the channel
    channel.write(json.dumps({"ready": True, "warm": warm, "pid": os.getpid(), "runs_root": runs_root}) + "\n")
    channel.flush()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                answer = serve(json.loads(line), slot, runs_root)
            except Exception as exc:  # noqa: BLE001 - a failure of ours is answered, not fatal
                answer = {"runner_error": f"{type(exc).__name__}: {exc}"[:500]}
            channel.write(json.dumps(answer) + "\n")
            channel.flush()
    finally:
        shutil.rmtree(runs_root, ignore_errors=True)


if __name__ == "__main__":
    main()
