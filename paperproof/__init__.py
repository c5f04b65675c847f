"""paperproof: a static catalogue of papers and the code behind them, verified by running it."""

__version__ = "0.1.0"
