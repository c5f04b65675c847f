def floor_weights(cfg, losses):
    """Per-sample loss weights, never below the configured floor."""
    span = losses.max() - losses.min() + 1e-12
    return cfg.floor + (1 - cfg.floor) * cfg.scale * (losses - losses.min()) / span
