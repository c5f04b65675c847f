"""The harness: the trusted process of a run, inside the sandbox, that never runs sample code.

Forked by the zygote for one sample, it enters the namespaces and builds the private root once,
loads the system-call filter as its supervisor, and then, for each fixture case, materialises
the inputs and forks a case process (`runner.child`) that becomes the slot's unprivileged uid,
takes its limits, and makes the call. The case process holds only the write end of its own
pipe; the harness holds everything else: the request, the report to the zygote, the filter's
listener. It decides every case's outcome itself:

- `returned` / `raised`: the process handed back exactly one whole, well-formed message per call
  and was found stopped after it (a hand-back is followed by SIGSTOP), nothing else on its pipe;
- `exited`: it ended before that (exit, a signal, the CPU budget or the wall-clock backstop): "exited
  without returning", whatever it wrote;
- `unserialisable`: its value could not be sent, or what came back is not one hand-back.
Case ids, repeats and counts are the harness's own. What the sandbox refused is recorded here
too: the system calls the filter hands over, connections the network namespace refused (its
counters), and the exceptions the sandbox caused that reached the call's boundary, in the words
of `runner.refusals`.

Its time is CPU time (`runner.meter`): the run's budget counts this process, every case process and
all their children together, looked at every `meter.TICK` while a case runs; each case process also
carries an RLIMIT_CPU a second past what is left, should the harness not get to look. The run's
wall-clock limit is a backstop for samples that sleep or wait. When it is reached, the time the run's
processes waited for a CPU says whether it was the machine's other work that used it up: then the
case is `cut_by_load`, which the parent tries again once and never publishes as a verdict.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import signal
import sys
import time

from paperproof.runner import checkout_paths, sandbox, seccomp, summary, wire
from paperproof.runner import meter as meters
from paperproof.runner.refusals import (
    attempt_line,
    blocked_by,
    call_line,
    mib,
    net_counters,
    opened_path,
    read_only,
    shown_path,
)

SIGNAL_REASONS: dict[int, str] = {
    signal.SIGSEGV: "segmentation fault",
    signal.SIGBUS: "bus error",
    signal.SIGABRT: "aborted",
    signal.SIGILL: "illegal instruction",
    signal.SIGFPE: "arithmetic fault",
    signal.SIGALRM: "its own alarm timer",
    signal.SIGKILL: "killed, not by the runner's timeout (by the sample itself or the kernel's out-of-memory killer)",
    signal.SIGTERM: "terminated, not by the runner",
}


# --- one case ---------------------------------------------------------------------------------


class _Supervisor:
    """The harness's run: the listener, the SIGCHLD wake-up, the deadline, the report."""

    def __init__(self, request: dict, limits: sandbox.Limits, uid: int, host_root: bool, mapped: int,
                 report_fd: int, listener, started: float, meter: meters.Meter) -> None:
        self.request, self.limits, self.uid, self.host_root, self.mapped = request, limits, uid, host_root, mapped
        self.report_fd, self.listener, self.started, self.meter = report_fd, listener, started, meter
        self.deadline = started + limits.wall_seconds  # the running case's backstop: the budget is CPU time
        self.spent = False  # a case spent its CPU budget: no further case is started
        self.case_pid = 0  # the case process running now (0 between cases)
        self.dying: list[int] = []  # case processes killed, not yet reaped
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w)

    def _locate(self, filename: str) -> checkout_paths.Located:
        """Where a name a case failed to open lies in the checkout (for the refusal's words)."""
        return checkout_paths.locate(self.request["snapshot"], self.request["path"], filename)

    def emit(self, record: dict) -> None:
        data = (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()
        while data:
            data = data[os.write(self.report_fd, data):]

    def live(self) -> list[int]:
        """The sample's processes alive now, for the meter where no cgroup counts them."""
        if not self.case_pid:
            return []
        return self.meter.processes(self.case_pid, self.uid if self.host_root else None)

    def cpu(self) -> float:
        return self.meter.cpu(self.live)

    def usage(self) -> dict:
        """What the run used, in seconds: CPU, wall-clock, and time some process of it waited for a CPU."""
        waited = self.meter.waited(self.live)
        return {"cpu": round(self.cpu(), 3), "wall": round(_now() - self.started, 3),
                "waited": None if waited is None else round(waited, 3), "meter": self.meter.source}

    def _cpu_line(self) -> str:
        return f"CPU time limit of {self.limits.cpu_seconds:g} s reached"

    def _backstop(self) -> tuple[str, str]:
        """How the backstop ended the case: cut by load when the run's processes waited for a CPU
        for `meter.STARVED` of the backstop or more (without that wait it would not have met it)."""
        waited = self.meter.waited(self.live)
        if waited is not None and waited >= meters.STARVED * self.limits.wall_seconds:
            return "cut_by_load", (f"cut by load: the machine's other work held the CPU its processes waited for until "
                                   f"the wall-clock backstop of {self.limits.wall_seconds:g} s")
        return "timeout", f"wall-clock limit of {self.limits.wall_seconds:g} s reached"

    def _case_process(self, plan: dict, write_end: int, spent: float) -> None:
        """In the forked case process: keep only the pipe, become the sample's uid, take the limits."""
        from paperproof.runner import child

        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        keep = write_end
        os.closerange(3, keep)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
        os.setpgid(0, 0)
        harness = os.getppid()
        throwaway = sandbox.IsolationReport()
        if self.host_root:
            sandbox.drop_privileges(self.uid, throwaway, True)
            if throwaway.user != "unprivileged":
                os._exit(72)  # never run sample code as root
        sandbox.die_with_parent(harness)
        # a second past the case's budget: the harness's look (`meter.TICK`) ends it first
        limits = dataclasses.replace(self.limits, cpu_seconds=max(1, int(self.limits.cpu_seconds + 0.999)) + 1)
        sandbox.apply_limits(limits, self.mapped, throwaway, gpu=self.request.get("device") == "cuda")
        sandbox.default_signals()
        child.run(self.request, plan, keep)
        os._exit(0)

    def run_case(self, plan: dict) -> dict:
        """Fork, supervise and judge one case: the record the report carries (without its id)."""
        self.reap(keep=1)
        read_end, write_end = os.pipe()
        before = net_counters()
        present = _listing()
        spent = self.cpu()  # the run's CPU time before this case: the case's budget is counted from here
        self.deadline = _now() + self.limits.wall_seconds
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_end)
                self._case_process(plan, write_end, spent)
            finally:
                os._exit(71)
        self.case_pid = pid
        os.close(write_end)
        os.set_blocking(read_end, False)
        calls = len(plan["calls"]) + 1  # the load hand-back (`L`, or `D` when it could not be defined), then each call's
        cap = self.limits.value_bytes + (1 << 20)
        buffer = bytearray()
        accepted: list[bytes] = []  # the hand-backs taken, one per call made
        attempts: list[str] = []  # what the filter blocked, as report lines
        ended: tuple[str, str] | None = None  # (run end kind, how) when it did not return
        malformed: str | None = None
        poller = select.poll()
        for fd in (read_end, self.wake_r, *((self.listener.fd,) if self.listener else ())):
            poller.register(fd, select.POLLIN)
        alive, reaped = True, False
        look = 0.0  # when the run's CPU time is next looked at
        warned = plan.get("how") != "driver"  # a driver is told to stop, once, before it is killed
        while alive:
            now = _now()
            if now >= self.deadline:
                ended = self._backstop()
                break
            if now >= look:
                look = now + meters.TICK
                if self.meter.sampled:
                    self.meter.waited(self.live)
                used = self.cpu() - spent
                if used >= self.limits.cpu_seconds:
                    self.spent = True
                    ended = ("killed", self._cpu_line())
                    break
                if not warned and used >= self.limits.cpu_seconds * DRIVER_WARNING:
                    warned = True  # its own timer counts only its own time, not that of the processes it started
                    try:
                        os.kill(pid, signal.SIGALRM)
                    except ProcessLookupError:
                        pass
            for fd, _ in poller.poll(max(0.0, min(self.deadline, look) - now) * 1000):
                if fd == read_end:
                    buffer += _drain(read_end)
                    if len(buffer) > calls * (cap + wire.HEADER.size):
                        malformed = f"it sent more than the {self.limits.value_bytes / 1024**2:.0f} MiB cap on returned values"
                        alive = False
                elif self.listener is not None and fd == self.listener.fd:
                    self._on_call(attempts)
                elif fd == self.wake_r:
                    _drain(self.wake_r)
            if not alive:
                break
            try:
                found, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
            except ChildProcessError:
                found = 0
            if not found:
                continue
            if os.WIFSTOPPED(status):
                buffer += _drain(read_end)
                try:
                    messages, rest = wire.split(bytes(buffer), cap)
                except wire.Malformed as exc:
                    malformed = str(exc)
                    break
                if len(messages) != len(accepted) + 1 or rest:
                    malformed = ("it stopped without handing back a value" if len(messages) == len(accepted)
                                 else "its channel carried more than one hand-back per call")
                    break
                accepted = messages
                if len(accepted) == calls or messages[-1][4:5] == b"D":
                    break
                os.kill(pid, signal.SIGCONT)
                continue
            ended = self._how_it_ended(status)
            alive, reaped = False, True
        if not reaped:  # reaped later: tearing down its address space need not hold up the next case
            _signal(pid, signal.SIGKILL)
            self.dying.append(pid)
        self.reap()
        self._sweep()
        self.case_pid = 0
        buffer += _drain(read_end)  # all its writers are killed: what they wrote is there
        os.close(read_end)
        while self.listener is not None and select.select([self.listener.fd], [], [], 0)[0]:
            if not self._on_call(attempts):  # calls still queued: their callers are dead
                break
        after = net_counters()
        if any(after.get(k, 0) > before.get(k, 0) for k in after):
            attempts.append("tried to open a network connection (blocked)")
        called = accepted and (len(accepted) > 1 or accepted[0][4:5] == b"D")  # a hand-back past the load line
        if malformed is None and called and len(buffer) != sum(len(m) for m in accepted):
            malformed = "its channel carried more than one hand-back per call"
        record = self._judge(accepted, calls, ended, malformed, attempts)
        record["wrote"] = [name for name in _listing() if name not in present and name.rstrip("/") not in OURS][:MAX_WROTE]
        return record

    def _how_it_ended(self, status: int) -> tuple[str, str]:
        if os.WIFEXITED(status):
            return "exited", f"exited with status {os.WEXITSTATUS(status)} without returning"
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU:  # the kernel's safety net, a second past the case's budget
            self.spent = True
            return "killed", self._cpu_line()
        if number == signal.SIGXFSZ:
            full = [name for fd, name in ((1, "stdout"), (2, "stderr")) if os.fstat(fd).st_size >= self.limits.file_size]
            return "output_limit", (f"{' and '.join(full or ['a file it wrote'])} reached the file-size cap of "
                                    f"{mib(self.limits.file_size)} (SIGXFSZ)")
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else f"signal {number}"
        return "killed", f"ended by {name}: {SIGNAL_REASONS.get(number, 'a signal')}"

    def reap(self, keep: int | None = None) -> None:
        """Reap the killed case processes: those that are gone, and every one but the newest `keep`
        (waiting for them), so at most `keep` linger, tearing down, while the next case runs."""
        pending = list(self.dying)
        for index, pid in enumerate(pending):
            wait = keep is not None and index < len(pending) - keep
            try:
                found, _ = os.waitpid(pid, 0 if wait else os.WNOHANG)  # its CPU time joins RUSAGE_CHILDREN
            except ChildProcessError:
                found = pid
            if found:
                self.dying.remove(pid)

    def _sweep(self) -> None:
        """Kill whatever the case left running (children, detached grandchildren): every process of
        the sample's uid in this PID namespace, scanning again until no new one appears."""
        if not self.host_root:
            return
        if not os.path.isdir("/proc/self"):
            sandbox.sweep(self.uid)
            return
        killed: set[int] = set(self.dying)
        for _ in range(10_000):
            found = set()
            for name in os.listdir("/proc"):
                if name.isdigit() and int(name) not in killed:
                    try:
                        if os.stat(f"/proc/{name}").st_uid == self.uid:
                            found.add(int(name))
                    except OSError:
                        pass
            if not found:
                break
            for pid in found:
                _signal(pid, signal.SIGKILL)
            killed |= found

    def _on_call(self, attempts: list[str]) -> bool:
        """Answer one call the filter handed over, recording what it tried; False when none was there."""
        got = self.listener.receive()
        if got is None:
            return False
        ident, pid, name, args = got
        if name in seccomp.OPENS:
            path = opened_path(pid, name, args)  # read while its caller waits for the answer
            if path is not None and read_only(path):
                attempts.append(f"tried to write {shown_path(path)}, which is read-only (blocked)")
        else:
            attempts.append(call_line(name, args))
        self.listener.respond(ident, name)
        return True

    def _judge(self, accepted: list[bytes], calls: int, ended, malformed, attempts: list[str]) -> dict:
        record: dict = {}
        messages = []
        if malformed is None:
            try:
                messages = [wire.read(m) for m in accepted]
            except wire.Malformed as exc:
                malformed = str(exc)
        if messages and messages[0].kind == "L":
            loaded = messages.pop(0)
            if isinstance(loaded.body, str):
                record["loaded"] = loaded.body[:400]
            else:
                malformed = "its load hand-back is not a line of text"
        elif messages and messages[0].kind != "D":
            malformed = "it handed back a value before saying how it was loaded"
        first = messages[0] if messages else None
        if malformed is not None:
            record.update(outcome="unserialisable", exception=_exception("Malformed", f"what it handed back is not a value: {malformed}"))
        elif first is None:
            record.update(outcome="exited", ended=ended[1] if ended else "ended without handing back a value", end=ended[0] if ended else "exited")
        elif first.kind == "D":
            record.update(outcome="load_failed", exception=self._exception(first.body, "load", attempts))
        elif first.kind == "E":
            info = self._exception(first.body, None, attempts)
            record.update(outcome="blocked" if info["blocked"] else "raised", exception=info)
        elif first.kind == "U":
            record.update(outcome="unserialisable", exception=_exception("ValueTooLarge", str(first.body)))
        elif self.request.get("driver"):
            trace, why = self._trace(first.body)
            if trace is None:
                record.update(outcome="unserialisable", exception=_exception("Malformed", why))
            else:
                record.update(outcome="returned", trace=trace)
        else:
            value, problem = self._summary(first.body)
            if value is None:  # then `problem` says why
                record.update(outcome="unserialisable", exception=_exception("ValueTooLarge", str(problem)))
            else:
                record.update(outcome="returned", value=value)
                if calls > 2:
                    again = self._summary(messages[1].body)[0] if len(messages) > 1 and messages[1].kind == "V" else None
                    record["repeat_equal"] = again is not None and again["digest"] == value["digest"]
        if ended is not None and record["outcome"] != "exited":
            record["end"], record["ended"] = ended
        record["blocked"] = list(dict.fromkeys(attempts))
        return record

    def _summary(self, node) -> tuple[dict | None, str | None]:
        try:
            encoded = summary.encode(node)
        except (wire.Malformed, ValueError, TypeError) as exc:
            return None, f"what it handed back is not a value: {exc}"
        size = len(json.dumps(encoded, allow_nan=False, separators=(",", ":")))
        if size > self.limits.record_bytes:
            return None, f"its summary is {size} bytes, over the {self.limits.record_bytes}-byte cap on one report record"
        return encoded, None

    def _trace(self, body) -> tuple[dict | None, str]:
        """A driver's trace: one JSON object, within the cap on one report record. Its fields are checked by the
        parent (`runner.observe`); here only that it is data and how large."""
        if not isinstance(body, str):
            return None, "its driver's trace is not text"
        if len(body) > self.limits.record_bytes:
            return None, f"its driver's trace is {len(body)} bytes, over the {self.limits.record_bytes}-byte cap"
        try:
            trace = json.loads(body)
        except (ValueError, RecursionError) as exc:
            return None, f"its driver's trace is not JSON: {str(exc)[:200]}"
        return (trace, "") if isinstance(trace, dict) else (None, "its driver's trace is not an object")

    def _exception(self, body, where: str | None, attempts: list[str]) -> dict:
        fields = dict(body.values) if isinstance(body, wire.Mapping) else {}
        info = {k: v for k, v in fields.items() if isinstance(v, (str, int, bool)) or v is None}
        blocked = blocked_by(info, self.limits, self._locate)
        if blocked:
            attempts.append(attempt_line(blocked))
        text = lambda key, limit=400: str(info[key])[:limit] if isinstance(info.get(key), str) else None  # noqa: E731
        place = info.get("where") if info.get("where") in ("binding", "entry", "callee") else "callee"
        return {"type": text("type", 200) or "Exception", "message": text("message") or "", "where": where or place,
                "missing_module": text("missing_module", 200), "blocked": blocked,
                "line": info["line"] if isinstance(info.get("line"), int) and not isinstance(info.get("line"), bool) else None}


def _exception(kind: str, message: str) -> dict:
    return {"type": kind, "message": message[:400], "where": "callee", "missing_module": None, "blocked": None, "line": None}


def _now() -> float:
    return time.monotonic()


def _drain(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


# Of a driver's case budget, what it and every process it started may spend before it is told to stop and hand back
# what it called (SIGALRM, which `child._run_driver` turns into a cut): above the driver's own share of CPU time, so
# that a driver spending its time itself stops by its own timer first.
DRIVER_WARNING = 0.85
OURS = sandbox.RESERVED  # the scratch folder a run is given, the harness's files, and where libraries keep their caches
MAX_WROTE = 20


def _listing() -> list[str]:
    """The names in the case's working directory (folders with a trailing `/`), at most 10,000: what a
    case added there, outside the scratch folder it is given, is reported as written."""
    names = []
    try:
        with os.scandir(".") as found:
            for entry in found:
                try:
                    names.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
                except OSError:
                    names.append(entry.name)
                if len(names) >= 10_000:
                    break
    except OSError:
        return []
    return sorted(names)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


# --- the run ----------------------------------------------------------------------------------


def _arguments(arg_list: list, case: dict, device: str) -> tuple[list, dict]:
    from paperproof.fixtures.values import materialize

    positional = [materialize(a["spec"], case, device) for a in arg_list if a.get("positional")]
    keywords = {a["name"]: materialize(a["spec"], case, device) for a in arg_list if not a.get("positional")}
    return positional, keywords


def plan(request: dict, case: dict, cap: int) -> dict:
    """What one case process is given: its materialised inputs (twice, fresh, for a repeated case),
    how to call with them, and the cap on its value. Nothing of any other case."""
    device = request.get("device", "cpu")
    if request.get("driver"):  # the repository's own test, example, script, notebook or README block (`runner.observe`)
        return {"how": "driver", "calls": [None], "cap": cap, "positional": 0, "keywords": [],
                "cpu_seconds": sandbox.Limits(**request.get("limits", {})).cpu_seconds,
                "wall_seconds": sandbox.Limits(**request.get("limits", {})).wall_seconds}
    if case.get("protocol"):  # driven by a training run through the protocol it declares (`runner.protocols`)
        how = "protocol"

        def job():
            return (case, device)
    elif request["kind"] == "class":
        how = "class"

        def job():
            return (_arguments(case["args"], case, device),
                    [(name, _arguments(a, case, device)) for name, a in case.get("method_args", {}).items()])
    elif case.get("per_sample"):
        how = "per_sample"

        def job():
            return [_arguments(case["args"], {**case, "sample_index": i}, device) for i in range(case["dims"]["N"])]
    else:
        how = "call"

        def job():
            return _arguments(case["args"], case, device)
    repeats = 2 if case["case_id"] in request.get("repeat", []) else 1
    return {"how": how, "calls": [job() for _ in range(repeats)], "cap": cap,
            "positional": sum(1 for a in case["args"] if a.get("positional")),
            "keywords": [a["name"] for a in case["args"] if not a.get("positional")]}


def main(request: dict, workdir: str, uid: int, limits: sandbox.Limits, pid_namespace: bool,
         report_fd: int, syscall_filter, group=None, no_group_reason: str = "") -> None:
    """The harness process: isolate once, then run every case in a process of its own. Never returns."""
    parent = os.getppid()  # 0 in the reaper's namespace: the zygote lies outside it
    sandbox.die_with_parent(parent)
    report = sandbox.IsolationReport()
    started = _now()
    if group is not None:
        try:
            group.join()  # first: the private root has no /sys, and every page from here on is counted
        except OSError as exc:
            group = None
            report.fallbacks.append(f"memory cgroup not joined ({exc.strerror}): only the address-space limit holds")
    else:
        report.fallbacks.append(f"no memory cgroup ({no_group_reason}): memfd_create refused, SysV shared memory "
                                "capped; the address-space limit holds per process")
    os.setsid()
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(os.path.join(workdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    os.closerange(3, report_fd)
    os.closerange(report_fd + 1, os.sysconf("SC_OPEN_MAX"))
    meter = meters.Meter.open(group)  # before the private root: it has no /sys
    mapped = sandbox.mapped_bytes()
    host_root = os.getuid() == 0
    if sandbox.enter_namespaces(report, pid_namespace):  # never touch mounts outside a namespace of our own
        sandbox.cap_shared_memory(limits, report)  # the IPC namespace is the run's own
        from paperproof.runner import child

        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(child.__file__)))
        new_root = os.path.join(os.path.dirname(workdir), ".root")
        binds = [package_dir, *filter(None, [request.get("environment")])]
        sandbox.private_root(binds, new_root, report, uid if host_root else None, limits.scratch_bytes,
                             gpu=request.get("device") == "cuda", fallback_dir=workdir, proc=pid_namespace,
                             checkout=request["snapshot"])
        if pid_namespace:
            meter.look_in("/proc")  # the namespace's own, where the case processes' numbers are theirs
    else:
        os.chdir(workdir)
    if host_root:
        report.user = "unprivileged"  # each case process drops to the slot's uid, or does not run
    else:
        report.fallbacks.append("not root: runs as the invoking user, confined by the namespaces")
    sandbox.prctl(sandbox.PR_SET_NO_NEW_PRIVS, 1)
    sandbox.prctl(sandbox.PR_SET_DUMPABLE, 0)  # its memory and descriptors stay out of reach through /proc
    try:
        sandbox.write_font_config(os.getcwd())
    except OSError as exc:
        report.fallbacks.append(f"no font configuration of its own ({exc.strerror}): plotting libraries may try "
                                "to write the system's font cache")
    sys.dont_write_bytecode = True  # no open for writing from here on: it would wait on this process's own listener
    refused = syscall_filter.load()
    listener = None
    if refused is None:
        report.syscalls = "seccomp"
        listener = syscall_filter.listener()
        if listener is None:
            report.fallbacks.append("denied system calls are refused, but not recorded (no seccomp listener)")
    else:
        report.fallbacks.append(f"no system-call filter ({refused})")
    sandbox.clean_environment(home=os.getcwd())
    supervisor = _Supervisor(request, limits, uid, host_root, mapped, report_fd, listener, started, meter)
    supervisor.emit({"event": "isolation", **report.as_dict()})
    for case in request["cases"]:
        supervisor.emit({"event": "start", "case_id": case["case_id"]})
        record = supervisor.run_case(plan(request, case, limits.value_bytes))
        end = record.pop("end", None)
        if record["outcome"] == "load_failed":
            supervisor.emit({"event": "load_failed", "exception": record["exception"], "blocked": record["blocked"]})
            break
        supervisor.emit({"event": "case", "case_id": case["case_id"], **record, **({"end": end} if end else {})})
        if str(record.get("loaded", "")).startswith("defined from its closure"):
            # its module's top level could not run: the next cases are not made to pay for finding that out again
            request = {**request, "closure_only": record["loaded"]}
            supervisor.request = request
        if end in ("timeout", "cut_by_load") or supervisor.spent:
            break  # a case spent its time: the other cases are not reached
        supervisor.reap()
    supervisor.reap(keep=0)
    supervisor.case_pid = 0
    supervisor.emit({"event": "usage", **supervisor.usage()})
    os._exit(0)
