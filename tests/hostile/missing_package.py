import hostile_tensorflow_addons as tfa


def focal_loss(logits, labels):
    """Needs a third-party package the runner does not have (and must not install)."""
    return tfa.losses.sigmoid_focal_crossentropy(labels, logits)
