"""Data maps from training dynamics."""
