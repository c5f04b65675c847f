"""The zygote: a warm fork server that has imported numpy, pandas and torch once.

The parent writes one JSON request per line on stdin; for each, the zygote forks a supervisor,
which isolates itself (`sandbox`), forks the sample process (PID 1 of a new PID namespace where
the kernel allows it) and relays how it ended. The zygote enforces the wall-clock limit by killing
the supervisor's process group; the sample dies with it (parent-death signal), and with the sample
every process of its namespace, detached grandchildren included. The zygote then answers one JSON
line: how the run ended, the child's report lines (raw, capped) and the tails of its output.

CUDA is never initialised here: a forked child must not inherit a CUDA context.
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

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

WARM_MODULES = ("numpy", "pandas", "torch")
TAIL_BYTES = 2048


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
    try:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None and visible.strip() in ("", "-1"):
            return "cpu"
        return "cuda" if any(name.startswith("nvidia") for name in os.listdir("/dev")) else "cpu"
    except OSError:
        return "cpu"


def _tail(path: str, limit: int = TAIL_BYTES) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


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


def _sample_process(request: dict, workdir: str, slot: int, report, limits, namespaced: bool) -> None:
    """In the process that runs sample code: finish isolation, then hand over to the child runner."""
    from paperproof.runner import child, sandbox

    out = open(os.path.join(workdir, "report.jsonl"), "w", encoding="utf-8")
    if namespaced:  # never touch mounts outside a mount namespace of our own
        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(child.__file__)))
        new_root = os.path.join(os.path.dirname(workdir), ".root")
        sandbox.private_root(workdir, [request["snapshot"], package_dir], new_root, report)
    else:
        os.chdir(workdir)
    sandbox.drop_privileges(sandbox.BASE_UID + slot, report)
    sandbox.prctl(sandbox.PR_SET_NO_NEW_PRIVS, 1)
    sandbox.apply_limits(limits)
    sandbox.clean_environment(home=os.getcwd())
    out.write(json.dumps({"event": "isolation", **report.as_dict()}) + "\n")
    out.flush()
    child.run(request, out)
    out.flush()
    os._exit(0)


def _supervise(request: dict, workdir: str, slot: int, limits) -> None:
    """The forked supervisor: new session, namespaces, then the sample as PID 1; relays its end."""
    from paperproof.runner import sandbox

    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        handle = os.open(os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(handle, fd)
        os.close(handle)
    report = sandbox.IsolationReport()
    if not sandbox.enter_namespaces(report):
        _sample_process(request, workdir, slot, report, limits, namespaced=False)
    pid = os.fork()
    if pid == 0:
        sandbox.die_with_parent()
        _sample_process(request, workdir, slot, report, limits, namespaced=True)
    _, status = os.waitpid(pid, 0)
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
        os.chown(workdir, uid, uid)
    os.chmod(workdir, 0o700)
    pid = os.fork()
    if pid == 0:
        try:
            _supervise(request, workdir, slot, limits)
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
    lines, truncated = _report_lines(os.path.join(workdir, "report.jsonl"), limits.output_bytes)
    answer = {
        "timed_out": timed_out,
        "limit_seconds": limits.wall_seconds,
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "report": lines,
        "report_truncated": truncated,
        "stdout_tail": _tail(os.path.join(workdir, "stdout")),
        "stderr_tail": _tail(os.path.join(workdir, "stderr")),
        "device": request["device"],
    }
    shutil.rmtree(workdir, ignore_errors=True)
    return answer


def main() -> None:
    slot = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    warm = _warm()
    from paperproof.fixtures import values  # noqa: F401 - warm the materialiser for the children
    from paperproof.runner import child, sandbox  # noqa: F401

    runs_root = tempfile.mkdtemp(prefix="paperproof-runs-")
    os.chmod(runs_root, 0o711)
    os.makedirs(os.path.join(runs_root, ".root"))  # mount point for each sample's private root
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints from libraries must not hit the channel
    channel.write(json.dumps({"ready": True, "warm": warm, "pid": os.getpid()}) + "\n")
    channel.flush()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            answer = serve(json.loads(line), slot, runs_root)
            channel.write(json.dumps(answer) + "\n")
            channel.flush()
    finally:
        shutil.rmtree(runs_root, ignore_errors=True)


if __name__ == "__main__":
    main()
