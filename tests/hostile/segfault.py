import ctypes


def fast_kernel(n):
    """A 'fast kernel' through ctypes that dereferences a null pointer."""
    return ctypes.string_at(0, 16)
