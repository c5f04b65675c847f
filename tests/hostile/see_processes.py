import os


def list_workers(n):
    """Lists every process it can see, with its command line, looking for other samples."""
    seen = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as handle:
                    seen[name] = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                pass
    return seen
