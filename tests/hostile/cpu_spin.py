def converge(n):
    """Iterates until convergence, which never comes."""
    x = 0
    while True:
        x = (x * 31 + n) % 1000003
