"""Read confidence after every round, as the boosted baseline is read."""

from noisetrack.stages import StagedConfidence


def run(net, X, y, train_one_round, n_rounds=20):
    tracker = StagedConfidence(X, y)
    for r in range(1, n_rounds + 1):
        train_one_round(net)
        tracker.on_round_end(net, iteration=r)
    return tracker.rounds_seen()
