"""The training-run fixture: planted hardness at known indices, real loaders, a seeded, repeatable run."""

from __future__ import annotations

import numpy as np
import pytest

from paperproof.fixtures import training
from paperproof.fixtures.training import HARDNESS_KINDS, RunSpec, dynamics, planted, train


def test_hardness_is_planted_where_it_says():
    spec = RunSpec(seed=5, n=120, classes=4)
    data = planted(spec)
    assert set(data.hard) == set(HARDNESS_KINDS)
    every = [i for kind in HARDNESS_KINDS for i in data.hard[kind]]
    assert len(every) == len(set(every)) and all(len(data.hard[k]) == 6 for k in HARDNESS_KINDS)
    mislabelled = set(data.hard["uniform"] + data.hard["asymmetric"] + data.hard["adjacent"])
    assert {int(i) for i in np.flatnonzero(data.observed != data.clean)} == mislabelled
    for i in data.hard["asymmetric"]:
        assert data.observed[i] == (data.clean[i] + 1) % 4
    for i in data.hard["adjacent"]:
        assert data.observed[i] == (data.clean[i] - 1) % 4
    inputs = set(data.hard["near_ood"] + data.hard["far_ood"] + data.hard["atypical"])
    assert all(data.observed[i] == data.clean[i] for i in inputs)  # the input kinds keep their label


def test_each_input_kind_moves_its_samples_where_it_says():
    """Near-OOD inputs fade towards the data's mean (between the classes), far-OOD ones lie away from every
    class, and atypical ones form a rare mode of their own class, far from its prototype and nearer the other
    classes: each harder than a clean sample, none easier."""
    spec = RunSpec(seed=5, n=600, classes=3, planted=0.3)
    data = planted(spec)
    every = {i for kind in HARDNESS_KINDS for i in data.hard[kind]}
    clean = np.array([i for i in range(spec.n) if i not in every])
    protos = np.stack([data.x[clean][data.clean[clean] == c].mean(axis=0) for c in range(3)])
    centre = data.x[clean].mean(axis=0)

    def own(idx):  # distance to the sample's own class prototype
        return np.linalg.norm(data.x[idx] - protos[data.clean[idx]], axis=1)

    def nearest_other(idx):
        d = np.linalg.norm(data.x[idx][:, None, :] - protos[None], axis=2)
        d[np.arange(len(idx)), data.clean[idx]] = np.inf
        return d.min(axis=1)

    near, far, atypical = (np.array(data.hard[k]) for k in ("near_ood", "far_ood", "atypical"))
    margin = (nearest_other(clean) - own(clean)).mean()  # how much nearer its own class a clean sample lies
    assert (nearest_other(near) - own(near)).mean() < 0.25 * margin  # faded: between the classes
    assert np.linalg.norm(data.x[far] - centre, axis=1).min() > np.linalg.norm(data.x[clean] - centre, axis=1).max()
    assert own(atypical).mean() > 1.5 * own(clean).mean()
    assert (nearest_other(atypical) - own(atypical)).mean() < 0.5 * margin
    # a rare subgroup: the atypical samples of a class sit together, a mode as tight as the class itself
    for c in range(3):
        mine = atypical[data.clean[atypical] == c]
        assert np.linalg.norm(data.x[mine] - data.x[mine].mean(axis=0), axis=1).mean() < 1.25 * own(clean).mean()


def test_images_plant_a_zoomed_and_shifted_mode():
    spec = RunSpec(seed=5, n=240, classes=3, image=True, side=8, channels=1, planted=0.3)
    data, again = planted(spec), planted(spec)
    assert data.x.shape == (240, 1, 8, 8) and data.x.tobytes() == again.x.tobytes()
    assert all(len(data.hard[k]) == 12 for k in HARDNESS_KINDS)
    image = np.arange(64, dtype=float).reshape(1, 8, 8)
    source = [2, 2, 3, 3, 4, 4, 5, 5]  # zoomed 2x about the centre: the central 4x4 pixels, each twice
    np.testing.assert_array_equal(training._zoom_shift(image, zoom=2.0, shift=0), image[:, source][:, :, source])
    assert np.array_equal(training._zoom_shift(np.eye(8)[None], zoom=1.0, shift=2), np.roll(np.eye(8)[None], 2, axis=-1))


def test_the_clean_samples_and_the_mislabels_do_not_depend_on_the_input_kinds():
    """The input kinds draw from a stream of their own: the clean samples and labels of a seed are those of a
    run planted without them (here, a run whose input kinds hold no sample at all)."""
    spec = RunSpec(seed=7, n=240, classes=3, planted=0.3)
    data = planted(spec)
    every = {i for kind in HARDNESS_KINDS for i in data.hard[kind]}
    rng = np.random.default_rng(7)
    clean = np.arange(240) % 3
    rng.shuffle(clean)
    protos = rng.normal(0, 2.0, size=(3, 8))
    x = protos[clean] + rng.normal(0, 0.7, size=(240, 8))
    untouched = [i for i in range(240) if i not in every or i in data.hard["uniform"] + data.hard["asymmetric"]
                 + data.hard["adjacent"]]
    np.testing.assert_array_equal(data.x[untouched], x[untouched].astype(np.float32))
    np.testing.assert_array_equal(data.clean, clean)


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    first, labels = dynamics(RunSpec(seed=3))
    again, labels_again = dynamics(RunSpec(seed=3))
    other, _ = dynamics(RunSpec(seed=4))
    assert first.tobytes() == again.tobytes() and np.array_equal(labels, labels_again)
    assert first.shape == (4, 48, 3) and not np.allclose(first, other)


def test_the_model_learns_the_clean_samples_and_not_the_mislabelled_ones_first():
    spec = RunSpec(seed=11, n=96, classes=3, epochs=6)
    run = train(spec)
    logits, observed = run.dynamics()
    hard = set(run.data.hard["uniform"] + run.data.hard["asymmetric"] + run.data.hard["adjacent"])
    every = {i for kind in HARDNESS_KINDS for i in run.data.hard[kind]}
    clean = [i for i in range(spec.n) if i not in every]
    correct = (logits.argmax(-1) == observed).mean(axis=0)  # over the epochs: SGD with momentum oscillates
    assert correct[clean].mean() > 0.8
    assert correct[sorted(hard)].mean() < correct[clean].mean()


@pytest.mark.parametrize("layout", [("x", "y"), ("index", "x", "y"), ("x", "clean", "y", "index")])
def test_loaders_yield_batches_in_the_order_the_code_unpacks(layout):
    spec = RunSpec(batch=layout, n=40, batch_size=8)
    run = training.start(spec)
    items = next(iter(run.loader))
    assert len(items) == len(layout)
    named = dict(zip(layout, items))
    assert tuple(named["x"].shape) == (8, spec.features) and named["x"].dtype.is_floating_point
    assert named["y"].tolist() == run.data.observed[:8].tolist()
    if "index" in named:
        assert named["index"].tolist() == list(range(8))
    seen = sorted(i for batch in run.train_loader for i in (dict(zip(layout, batch)).get("index", batch[0][:0]).tolist()))
    assert seen == (list(range(40)) if "index" in named else [])


def test_images_train_a_small_cnn_and_the_loop_calls_its_listener_in_order():
    events = []
    spec = RunSpec(image=True, side=8, channels=1, n=32, epochs=2, batch_size=16, batch=("x", "y", "index"))
    run = train(spec, lambda event, run, info: events.append((event, run.epoch, info.get("step"))))
    assert type(run.net).__name__ == "LeNet"
    assert events == [("batch_end", 0, 0), ("batch_end", 0, 1), ("epoch_end", 0, None),
                      ("batch_end", 1, 0), ("batch_end", 1, 1), ("epoch_end", 1, None), ("train_end", 1, None)]
    embedded = run.net(__import__("torch").from_numpy(run.data.x[:4]), embed=True)
    assert tuple(embedded.shape) == (4, 16)


def test_unknown_batch_roles_are_refused():
    with pytest.raises(ValueError, match="unknown batch roles"):
        training.start(RunSpec(batch=("x", "weights")))


def test_hooks_cannot_steer_the_run_so_it_can_be_trained_again_outside_the_sandbox():
    """A hook that draws random numbers, switches the model to evaluation or walks the training loader
    leaves the run's trajectory as it was: both series of logits are those of a run without hooks."""
    import torch

    spec = training.RunSpec(batch=("x", "clean", "y", "index"))
    plain = training.train(spec)

    def meddle(event, run, info):
        torch.rand(7)
        run.net.eval()
        for _ in run.train_loader:
            break

    meddled = training.train(spec, meddle)
    assert np.array_equal(plain.dynamics()[0], meddled.dynamics()[0])
    assert np.array_equal(plain.training_dynamics()[0], meddled.training_dynamics()[0])


def test_training_logits_are_the_batches_forward_passes_in_sample_order():
    spec = training.RunSpec(seed=5, n=40, classes=4, epochs=3, batch=("index", "x", "y"))
    seen = {}

    def record(event, run, info):
        if event == "batch_end":
            for i, row in zip(info["indices"].tolist(), info["logits"].numpy()):
                seen[run.epoch, i] = row

    trained, labels = training.train(spec, record).training_dynamics()
    assert trained.shape == (3, 40, 4) and len(seen) == 3 * 40
    for (epoch, i), row in seen.items():
        np.testing.assert_allclose(trained[epoch, i], row, rtol=0, atol=1e-6)
    evaluated, _ = training.train(spec).dynamics()
    assert not np.allclose(trained, evaluated)  # training passes (dropout, weights mid-epoch) are not the evaluation


def test_a_model_that_ends_in_a_softmax_keeps_the_log_of_its_probabilities_as_logits():
    import torch

    spec = RunSpec(seed=3, n=24, classes=3, epochs=2, probabilities=True)
    run = train(spec)
    with torch.no_grad():
        run.net.eval()
        probs = run.net(torch.from_numpy(run.data.x)).numpy()
    np.testing.assert_allclose(probs.sum(-1), 1, atol=1e-6)
    logits, _ = run.dynamics()
    softmax = np.exp(logits[-1]) / np.exp(logits[-1]).sum(-1, keepdims=True)
    np.testing.assert_allclose(softmax, probs, atol=1e-6)


def test_models_take_one_unbatched_sample_as_nn_layers_do():
    import torch

    for spec in (RunSpec(), RunSpec(image=True, side=8, channels=1)):
        run = train(RunSpec(**{**spec.__dict__, "epochs": 1}))
        run.net.eval()
        with torch.no_grad():
            batch = run.net(torch.from_numpy(run.data.x[:2]))
            one = run.net(torch.from_numpy(run.data.x[1]))
        np.testing.assert_allclose(one.numpy(), batch[1].numpy(), atol=1e-6)


def test_the_dataset_reads_as_torchvisions_and_as_a_tensor_datasets_do():
    run = training.start(RunSpec(batch=("x", "y", "index"), n=20))
    ds = run.loader.dataset
    assert [len(t) for t in ds.tensors] == [20, 20, 20]  # `TensorDataset.tensors`: the columns of an item, in order
    assert ds.tensors[1].tolist() == ds.targets == run.data.observed.tolist()
    assert all(bool((a == b).all()) for a, b in zip(ds[7], (t[7] for t in ds.tensors)))
    assert ds.classes == [f"class_{i}" for i in range(len(ds.classes))] and ds.class_to_idx["class_0"] == 0
