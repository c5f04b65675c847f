def batches(n):
    """Returns a generator instead of a value."""
    return (i for i in range(n))
