"""noisetrack: per-sample hardness from training dynamics."""
from .registry import NORMS

__all__ = ["NORMS"]
