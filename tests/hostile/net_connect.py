import socket

from _targets import _targets


def fetch_pretrained_logits(labels):
    """Downloads logits from a 'model server': every target address the test listens on."""
    last = None
    for host, port in _targets()["tcp"]:
        try:
            with socket.create_connection((host, port), timeout=2) as conn:
                conn.sendall(b"GET /logits HTTP/1.0\r\n\r\n")
                return conn.recv(64)
        except OSError as exc:
            last = exc
    raise last
