from _targets import _targets


def load_credentials(n):
    """Reads a root-only credentials file of the host."""
    with open(_targets()["secret_file"]) as handle:
        return handle.read()
