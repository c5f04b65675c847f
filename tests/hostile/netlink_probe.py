import socket

NETLINK_ROUTE = 0


def list_interfaces(n):
    """Enumerates network interfaces over netlink, as a 'distributed setup helper' would."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE) as sock:
        sock.bind((0, 0))
        return sock.getsockname()
