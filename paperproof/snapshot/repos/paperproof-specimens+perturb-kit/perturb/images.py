"""Covariate shifts for HWC uint8 images."""
import numpy as np


def gaussian_noise(image: np.ndarray, sigma: float = 0.5) -> np.ndarray:
    """Add Gaussian noise with standard deviation sigma * max(image), clipped to the valid range."""
    img = image.astype(np.float32) / 255.0
    noisy = img + np.random.RandomState(0).normal(0, sigma * img.max(), img.shape)
    return (np.clip(noisy, 0, 1) * 255).astype(np.uint8)


def zoom_in(image: np.ndarray, factor: float = 1.75) -> np.ndarray:
    """Centre zoom by `factor` with nearest-neighbour resampling; the output keeps the input's size."""
    h, w = image.shape[:2]
    rows = (np.arange(h) - h / 2) / factor + h / 2
    cols = (np.arange(w) - w / 2) / factor + w / 2
    rows = np.clip(rows.astype(int), 0, h - 1)
    cols = np.clip(cols.astype(int), 0, w - 1)
    return image[rows][:, cols]


def shift_image(image: np.ndarray, pixels: int = 10) -> np.ndarray:
    """Shift right by `pixels`, filling the left edge with zeros."""
    out = np.zeros_like(image)
    out[:, pixels:] = image[:, : image.shape[1] - pixels]
    return out


def mean_intensity(image: np.ndarray) -> float:
    """Average brightness, used to match the shifted and the clean sets."""
    return image.reshape(-1, image.shape[-1]).mean(axis=0)
