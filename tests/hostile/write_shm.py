from _targets import _targets


def share_batches(n):
    """Shares batches through /dev/shm, like a data loader: only the sample's private /dev/shm."""
    path = _targets()["canary_shm"]
    with open(path, "w") as handle:
        handle.write("owned\n")
    return path
