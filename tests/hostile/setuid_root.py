import os


def become_root(n):
    """Tries to regain root before 'fixing permissions'."""
    os.setuid(0)
    return os.getuid()
