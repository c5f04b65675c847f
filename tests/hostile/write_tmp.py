from _targets import _targets


def cache_features(n):
    """Caches features under /tmp: allowed, but only in the sample's private /tmp."""
    path = _targets()["canary_tmp"]
    with open(path, "w") as handle:
        handle.write("owned\n")
    return path
