"""References for the model-based metrics on a protocol case's run: checkpoints that leave training unchanged,
values that are a pure function of the spec, and hand-checkable properties of each variant."""

from __future__ import annotations

import copy
import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from paperproof.fixtures import training
from paperproof.fixtures.training import RunSpec
from paperproof.runner.protocols import chosen_epochs
from paperproof.verify import run_references as rr
from paperproof.verify.fidelity import ATOL, RTOL
from paperproof.verify.metrics import grand

SPEC = RunSpec()
IMAGE = RunSpec(image=True)
CHOSEN = tuple(sorted(chosen_epochs(SPEC.epochs)))


def _digest(variants: dict) -> str:
    h = hashlib.sha256()
    for key in sorted(variants):
        h.update(repr(key).encode())
        h.update(np.ascontiguousarray(variants[key]).tobytes())
    return h.hexdigest()


def _clear() -> None:
    for cached in (rr.trained, rr.el2n_runs, rr._model_variants):
        cached.cache_clear()


@pytest.mark.parametrize("kwargs", [{}, {"image": True}, {"probabilities": True}, {"batch": ("index", "x", "y")}])
def test_checkpoints_leave_the_run_as_it_was(monkeypatch, kwargs):
    spec = RunSpec(**kwargs)
    kept = training.train(spec)
    monkeypatch.setattr(training.Run, "state", lambda self: {})  # a run that copies nothing
    plain = training.train(spec)
    assert np.stack(kept.logits).tobytes() == np.stack(plain.logits).tobytes()
    assert np.stack(kept.train_logits).tobytes() == np.stack(plain.train_logits).tobytes()
    assert len(kept.checkpoints) == spec.epochs and kept.initial is not None


def test_each_checkpoint_is_the_model_the_epochs_logits_came_from():
    run = training.train(SPEC)
    x = torch.from_numpy(run.data.x)
    for epoch, state in enumerate(run.checkpoints):
        net = copy.deepcopy(run.net)
        net.load_state_dict(state)
        net.eval()
        with torch.no_grad():
            assert net(x).numpy().astype(np.float64).tobytes() == run.logits[epoch].tobytes()
    first = run.checkpoints[0]
    assert any(not torch.equal(run.initial[name], first[name]) for name in first)
    assert all(value.data_ptr() != run.net.state_dict()[name].data_ptr() for name, value in run.checkpoints[-1].items())


def test_the_same_spec_gives_the_same_values_again_and_in_a_fresh_process():
    first = rr.model_variants(SPEC, CHOSEN)
    _clear()
    again = rr.model_variants(SPEC, CHOSEN)
    assert _digest(first) == _digest(again)
    code = ("from paperproof.verify import run_references as rr; from paperproof.fixtures.training import RunSpec; "
            "from tests.test_run_references import _digest; "
            f"print(_digest(rr.model_variants(RunSpec(), {CHOSEN!r})))")
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).parents[1])
    assert fresh.stdout.strip() == _digest(first)


def test_torchs_global_random_state_is_put_back():
    _clear()
    before = torch.get_rng_state()
    rr.model_variants(SPEC)
    assert torch.equal(before, torch.get_rng_state())


def test_the_variants_are_those_of_the_table_one_value_per_sample():
    named = {(m, v.name) for m, variants in rr.MODEL_VARIANTS.items() for v in variants}
    every_epoch = {k for k in named if not k[1].endswith("_all_epochs")}
    assert set(rr.model_variants(SPEC)) == every_epoch
    for spec in (SPEC, IMAGE):
        values = rr.model_variants(spec, CHOSEN)
        assert set(values) == named
        assert all(v.shape == (spec.n,) and np.isfinite(v).all() for v in values.values())
    paper = {m: [v.name for v in variants if v.paper] for m, variants in rr.MODEL_VARIANTS.items()}
    assert paper == {"vog": ["logit_class_normalised"], "grand": ["early_all_params", "init_all_params"],
                     "el2n": ["early_norm_runs"], "prototypicality": ["kmeans_distance"],
                     "conf_agree": ["max_mean_prob_train_mode"], "self_confidence": ["out_of_sample_self_confidence"]}
    assert all(v.departure for vs in rr.MODEL_VARIANTS.values() for v in vs if not v.paper)


@pytest.mark.parametrize("spec", [SPEC, IMAGE])
def test_class_normalised_vog_has_mean_zero_and_std_one_in_each_class(spec):
    values = rr.model_variants(spec, CHOSEN)
    labels = rr.trained(spec).data.observed
    for name in ("logit_class_normalised", "prob_class_normalised", "logit_class_normalised_all_epochs"):
        v = values["vog", name]
        for c in np.unique(labels):
            assert abs(v[labels == c].mean()) < 1e-9
            assert abs(v[labels == c].std() - 1) < 1e-9
    raw, normalised = values["vog", "logit_raw"], values["vog", "logit_class_normalised"]
    for c in np.unique(labels):
        inside = labels == c
        expected = (raw[inside] - raw[inside].mean()) / raw[inside].std()
        np.testing.assert_allclose(normalised[inside], expected, atol=1e-9)


def test_vog_on_the_chosen_snapshots_differs_from_vog_on_every_epoch():
    values = rr.model_variants(SPEC, CHOSEN)
    assert not np.allclose(values["vog", "logit_raw"], values["vog", "logit_raw_all_epochs"], atol=ATOL, rtol=RTOL)


def _hcat_style_vog(run: training.Run, epochs: tuple[int, ...]) -> np.ndarray:
    """VoG written as H-CAT writes it: at each snapshot the gradient of the label's softmax probability with
    respect to the input, the model in evaluation mode, float32; the per-pixel std over snapshots, averaged over
    pixels; no class normalisation."""
    gradients = []
    for epoch in epochs:
        net = copy.deepcopy(run.net)
        net.load_state_dict(run.checkpoints[epoch])
        net.eval()
        x = torch.from_numpy(run.data.x).requires_grad_(True)
        probs = torch.softmax(net(x), dim=1)
        picked = probs[torch.arange(len(x)), torch.from_numpy(run.data.observed)]
        picked.sum().backward()
        gradients.append(x.grad.detach().numpy().reshape(len(x), -1))
    stacked = np.stack(gradients)
    return np.sqrt(((stacked - stacked.mean(0)) ** 2).mean(0)).mean(-1)


@pytest.mark.parametrize("spec", [SPEC, IMAGE])
def test_an_hcat_style_vog_matches_prob_raw_and_not_the_papers(spec):
    ours = _hcat_style_vog(rr.trained(spec), CHOSEN)
    values = rr.model_variants(spec, CHOSEN)
    assert np.allclose(values["vog", "prob_raw"], ours, atol=ATOL, rtol=RTOL)
    assert not np.allclose(values["vog", "logit_class_normalised"], ours, atol=ATOL, rtol=RTOL)
    assert not np.allclose(values["vog", "prob_raw_all_epochs"], ours, atol=ATOL, rtol=RTOL)


def test_grand_final_is_the_metric_cores_grand_on_the_final_model():
    run = rr.trained(SPEC)
    net = copy.deepcopy(run.net)
    net.eval()
    expected = grand(net, torch.from_numpy(run.data.x), torch.from_numpy(run.data.observed)).numpy()
    values = rr.model_variants(SPEC)
    np.testing.assert_allclose(values["grand", "final_all_params"], expected, rtol=1e-12, atol=0)
    assert not np.allclose(values["grand", "early_all_params"], expected)
    assert not np.allclose(values["grand", "init_all_params"], values["grand", "early_all_params"])


def test_grand_of_a_model_ending_in_a_softmax_is_that_of_its_pre_softmax_logits():
    spec = RunSpec(probabilities=True)
    run = rr.trained(spec)
    logits_model = training.models()[0](spec.features, spec.classes)  # the same layers, no softmax
    logits_model.load_state_dict(run.checkpoints[-1])
    logits_model.eval()
    expected = grand(logits_model, torch.from_numpy(run.data.x), torch.from_numpy(run.data.observed)).numpy()
    np.testing.assert_allclose(rr.model_variants(spec)["grand", "final_all_params"], expected, rtol=1e-12)


def test_prototypicality_cosine_is_a_cosine_and_kmeans_distance_a_distance():
    for spec in (SPEC, IMAGE):
        values = rr.model_variants(spec)
        cosine, distance = values["prototypicality", "cosine_class_mean"], values["prototypicality", "kmeans_distance"]
        assert cosine.min() >= -1 - 1e-12 and cosine.max() <= 1 + 1e-12
        assert distance.min() >= 0


def test_kmeans_finds_well_separated_clusters_and_is_seeded():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = np.concatenate([c + rng.normal(0, 0.1, size=(20, 2)) for c in centres])
    distance = rr.kmeans_distance(points, 3, seed=1)
    expected = np.concatenate([np.linalg.norm(points[i * 20:(i + 1) * 20] - points[i * 20:(i + 1) * 20].mean(0), axis=1)
                               for i in range(3)])
    np.testing.assert_allclose(distance, expected, atol=1e-12)
    assert rr.kmeans_distance(points, 2, seed=3).tobytes() == rr.kmeans_distance(points, 2, seed=3).tobytes()


def test_kmeans_distance_follows_each_sample_whatever_their_order():
    embedded = rr.model_variants(SPEC)  # warm the run
    run = rr.trained(SPEC)
    net = copy.deepcopy(run.net)
    net.eval()
    with torch.no_grad():
        h = net(torch.from_numpy(run.data.x), embed=True).double().numpy()
    order = np.random.default_rng(7).permutation(len(h))
    distance = rr.kmeans_distance(h, SPEC.classes, seed=2)
    np.testing.assert_allclose(rr.kmeans_distance(h[order], SPEC.classes, seed=2), distance[order], atol=1e-9)
    np.testing.assert_allclose(embedded["prototypicality", "kmeans_distance"], distance, atol=1e-9)


def test_confidence_agreement_passes_differ_from_evaluation_because_the_models_have_dropout():
    run = rr.trained(SPEC)
    evaluated = torch.from_numpy(run.logits[-1]).softmax(-1).amax(-1).numpy()
    agreement = rr.model_variants(SPEC)["conf_agree", "max_mean_prob_train_mode"]
    assert agreement.min() > 1 / SPEC.classes - 1e-12 and agreement.max() <= 1
    assert not np.allclose(agreement, evaluated, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(rr.model_variants(SPEC)["conf_agree", "max_prob_eval_mode"], evaluated, rtol=1e-12)


def test_out_of_sample_self_confidence_differs_from_in_sample():
    values = rr.model_variants(SPEC)
    out, inside = values["self_confidence", "out_of_sample_self_confidence"], values["self_confidence", "in_sample_last_epoch"]
    assert np.isfinite(out).all() and out.min() >= 0 and out.max() <= 1
    assert not np.allclose(out, inside, atol=ATOL, rtol=RTOL)
    run = rr.trained(SPEC)
    gold = torch.from_numpy(run.logits[-1]).softmax(-1).numpy()[np.arange(SPEC.n), run.data.observed]
    np.testing.assert_allclose(inside, gold, rtol=1e-12)
    # the mislabelled samples are seen by the cross-validated models only as held-out data: lower there
    mislabelled = run.data.observed != run.data.clean
    assert out[mislabelled].mean() < inside[mislabelled].mean()


def test_folds_are_stratified_and_cover_every_sample_once():
    labels = rr.trained(SPEC).data.observed
    fold = rr.folds(SPEC, labels)
    assert sorted(set(fold.tolist())) == list(range(rr.FOLDS))
    for c in np.unique(labels):
        counts = np.bincount(fold[labels == c], minlength=rr.FOLDS)
        assert counts.max() - counts.min() <= 1


def test_el2n_over_one_run_is_the_early_epoch_of_the_run():
    run = rr.trained(SPEC)
    early = rr.early_epoch(SPEC.epochs)
    p = torch.from_numpy(run.logits[early]).softmax(-1).numpy()
    onehot = np.eye(SPEC.classes)[run.data.observed]
    expected = np.linalg.norm(p - onehot, axis=1)
    np.testing.assert_allclose(rr.el2n_runs(SPEC, 1), expected, rtol=1e-12)
    averaged = rr.model_variants(SPEC)["el2n", "early_norm_runs"]
    assert averaged.tobytes() == rr.el2n_runs(SPEC, rr.INIT_RUNS).tobytes()
    assert not np.allclose(averaged, expected, atol=ATOL, rtol=RTOL)


def test_other_initialisations_train_on_the_same_data_from_another_start():
    seed = rr.derived_seed(SPEC, 1, 1)
    other = rr._reinitialised(SPEC, seed)
    run = rr.trained(SPEC)
    assert other.data.x.tobytes() == run.data.x.tobytes()
    assert np.array_equal(other.data.observed, run.data.observed)
    state = other.net.state_dict()
    assert all(not torch.equal(state[name], run.initial[name]) for name in state)


@pytest.mark.parametrize("epochs, expected", [(1, 0), (4, 0), (10, 0), (11, 1), (20, 1), (30, 2), (100, 9)])
def test_the_early_epoch_is_the_first_at_or_after_a_tenth_of_training(epochs, expected):
    assert rr.early_epoch(epochs) == expected


def test_epochs_outside_the_run_are_refused():
    with pytest.raises(ValueError, match="not epochs"):
        rr.model_variants(SPEC, (0, SPEC.epochs))
