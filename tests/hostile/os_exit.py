import os


def finish_training(n):
    """Ends the process the way scripts end a worker."""
    os._exit(3)
