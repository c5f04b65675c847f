import signal
import time


def train_forever(n):
    """Ignores SIGTERM and SIGINT and trains forever."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.2)
