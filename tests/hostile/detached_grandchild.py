import os
import time

from _targets import _targets


def spawn_prefetcher(n):
    """Double-forks a detached prefetcher that outlives the run, then waits for it forever."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            marker = _targets()["marker"]
            os.execv("/bin/sleep", [marker, "600"])
        os._exit(0)
    while True:
        time.sleep(0.2)
