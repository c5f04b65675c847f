def tree_depth(n):
    """Depth of a tree whose recursion has no base case."""
    return tree_depth(n + 1) + 1
