import sys


def evaluate_and_quit(n):
    """Evaluates, then exits the interpreter as a command-line script would."""
    sys.exit(4)
