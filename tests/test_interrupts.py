"""The signal handling of a command, in processes of its own (the handler and the ending of descendants would
reach pytest's own): every descendant ended, one that ignores SIGTERM too, and a clean unwinding."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# A process tree as a command makes one: a child that ends on SIGTERM, one that ignores it (and has a child of its
# own), and a grandchild in a session of its own, as a zygote is.
TREE = textwrap.dedent("""
    import json, os, signal, subprocess, sys, time
    from paperproof.plumbing import interrupts

    sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
    stubborn = [sys.executable, "-c", "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True); "
                "time.sleep(120)"]
    started = [subprocess.Popen(sleep), subprocess.Popen(stubborn), subprocess.Popen(sleep, start_new_session=True)]
    deadline = time.monotonic() + 30
    while len(interrupts.descendants()) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    before = interrupts.descendants()
    interrupts.end_descendants(grace=0.5)
    for process in started:
        process.wait(5)
    time.sleep(0.2)
    alive = [pid for pid in before if interrupts._running(pid)]
    print(json.dumps({"before": len(before), "alive": alive,
                      "codes": [process.returncode for process in started]}))
""")


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_every_descendant_ends_even_one_that_ignores_sigterm_and_one_in_its_own_session():
    done = run(TREE)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["before"] == 4 and found["alive"] == []
    assert found["codes"] == [-15, -9, -15]  # SIGTERM first; SIGKILL only for the one that ignored it


UNWIND = textwrap.dedent("""
    import os, signal, sys, time
    from paperproof.plumbing import interrupts

    earlier = signal.getsignal(signal.SIGTERM)
    with interrupts.caught():
        child = os.fork()
        if child == 0:  # a forked process inherits the handler before it sets its own: it ends quietly
            time.sleep(30)
            os._exit(0)
        try:
            os.kill(os.getpid(), int(sys.argv[1]))
            time.sleep(30)
        except KeyboardInterrupt as interrupt:
            print(type(interrupt).__name__, interrupts.exit_status(interrupt), interrupts.stopping.is_set())
        _, status = os.waitpid(child, 0)
        print("child", os.waitstatus_to_exitcode(status))
    print("restored", signal.getsignal(signal.SIGTERM) is earlier)
""")


def test_sigterm_and_ctrl_c_unwind_as_an_exception_and_exit_128_plus_the_signal():
    for number, name, status in ((15, "Terminated", 143), (2, "KeyboardInterrupt", 130)):
        done = subprocess.run([sys.executable, "-c", UNWIND, str(number)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        # the parent's handler sent the child SIGTERM; the handler it inherited ended it quietly (it is not its owner)
        assert done.stdout.splitlines() == [f"{name} {status} True", "child 143", "restored True"], done.stdout
        assert "Traceback" not in done.stderr
