import signal
import time


def timed_eval(n):
    """Arms an alarm as a crude timeout and then overruns it."""
    signal.alarm(1)
    time.sleep(30)
