import ctypes


def fast_kernel(n):
    """A 'fast kernel' through ctypes that dereferences a null pointer."""
    return ctypes.string_at(0xFFFF_FFFF_FFFF_F000, 16)  # a kernel address: never readable
