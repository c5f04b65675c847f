from _targets import _targets


def install_hook(n):
    """Plants a file in the host user's home directory."""
    path = _targets()["canary_home"]
    with open(path, "w") as handle:
        handle.write("owned\n")
    return path
