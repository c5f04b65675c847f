"""Fixture synthesis reads parameters like a researcher would, and cases are seeded and coherent."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.synth import optional_arguments, synthesize
from paperproof.fixtures.values import dynamics, materialize, softmax


def entry(code: str):
    (found,) = extract_module(code, repo="o/r", path="m.py")
    return found


def values(case, device="cpu"):
    """Materialised arguments; an object of the training run (a protocol's) stands as its role."""
    payload = case.model_dump(mode="json")
    return {a["name"]: a["spec"]["params"]["role"] if a["spec"]["kind"] == "run" else materialize(a["spec"], payload, device)
            for a in payload["args"]}


def test_logits_and_labels_of_a_case_share_dimensions():
    fixtures = synthesize(entry("def conf(logits, labels, epochs=3):\n    pass\n"))
    assert fixtures.cases and not fixtures.missing
    for case in fixtures.cases:
        got = values(case)
        e, n, c = case.dims["E"], case.dims["N"], case.dims["C"]
        assert got["logits"].shape == (e, n, c) and got["labels"].shape == (n,)
        assert "epochs" not in got  # defaults are the code's own
    assert {c.kind for c in fixtures.cases} == {"typical", "edge", "relation"}
    assert any(c.dims["E"] == 1 for c in fixtures.cases) and any(c.dims["C"] == 2 for c in fixtures.cases)


def test_cases_are_deterministic():
    fixtures = synthesize(entry("def f(probs, targets):\n    pass\n"))
    first, second = values(fixtures.cases[0]), values(fixtures.cases[0])
    assert np.array_equal(first["probs"], second["probs"]) and np.array_equal(first["targets"], second["targets"])


def test_annotations_choose_the_container():
    fixtures = synthesize(entry("import torch\ndef f(logits: torch.Tensor, labels: list, v: str, k: int) -> float:\n    pass\n"))
    got = values(fixtures.cases[0])
    import torch

    assert isinstance(got["logits"], torch.Tensor) and isinstance(got["labels"], list)
    assert isinstance(got["v"], str) and got["k"] == 3
    strings = {values(c)["v"] for c in fixtures.cases}
    assert len(strings) > 1  # parsers meet more than one spelling


def test_domain_values():
    fixtures = synthesize(entry("def f(training_dynamics, args, img, df, p_values, num_classes, device):\n    pass\n"))
    case = fixtures.cases[0]
    got = values(case)
    record = next(iter(got["training_dynamics"].values()))
    assert set(record) == {"gold", "logits"} and len(record["logits"]) == case.dims["E"]
    assert isinstance(got["args"], argparse.Namespace) and got["args"].seed == 0
    assert got["img"].dtype == np.uint8 and got["img"].shape[-1] == 3
    assert isinstance(got["df"], pd.DataFrame) and {"confidence", "variability"} <= set(got["df"].columns)
    assert ((got["p_values"] >= 0) & (got["p_values"] <= 1)).all()
    assert got["num_classes"] == case.dims["C"] and got["device"] == "cpu"


def test_what_we_cannot_make_is_named():
    fixtures = synthesize(entry("def encode(tokenizer, mystery):\n    pass\n"))
    assert not fixtures.cases
    reasons = {m.param: m.reason for m in fixtures.missing}
    assert "tokenizer" in reasons["tokenizer"]
    assert reasons["mystery"] == "no fixture rule for parameter `mystery`"
    # The model and the loader come from the training run; what the run cannot give names the protocol.
    fixtures = synthesize(entry("def train(model, loader, mystery):\n    pass\n"))
    reasons = {m.param: m.reason for m in fixtures.missing}
    assert set(reasons) == {"mystery"} and reasons["mystery"].startswith("protocol call")


def test_dynamics_have_the_archetypes_and_no_ties():
    logits, labels = dynamics(11, 6, 24, 3)
    correct = logits.argmax(-1) == labels[None, :]
    assert (~correct.any(axis=0)).any(), "some samples are never learned"
    forgets = (correct[:-1] & ~correct[1:]).sum(axis=0)
    assert forgets.max() >= 1, "some samples are forgotten"
    top2 = np.sort(logits, axis=-1)[..., -2:]
    assert (top2[..., 1] - top2[..., 0] > 1e-9).all()
    gold = np.take_along_axis(softmax(logits), labels[None, :, None], -1)[..., 0]
    assert gold.mean(axis=0).min() < 0.2 and gold.mean(axis=0).max() > 0.8


def test_relation_cases_permute_samples_and_rename_classes():
    fixtures = synthesize(entry("def f(logits, labels):\n    pass\n"))
    by_id = {c.case_id: c for c in fixtures.cases}
    base = values(by_id["typical"])
    permuted = values(by_id["typical~permuted"])
    relabelled = values(by_id["typical~relabelled"])
    from paperproof.fixtures.values import sample_permutation

    order = sample_permutation(by_id["typical~permuted"].transform["permute"], by_id["typical"].dims["N"])
    assert np.array_equal(permuted["logits"], base["logits"][:, order]) and np.array_equal(permuted["labels"], base["labels"][order])
    gold = lambda v: np.take_along_axis(softmax(v["logits"].astype(float)), v["labels"][None, :, None], -1)[..., 0]  # noqa: E731
    assert np.allclose(gold(relabelled), gold(base)) and not np.array_equal(relabelled["labels"], base["labels"])


def test_per_sample_entries_and_docstring_shapes():
    per = synthesize(entry("def forgetting(correctness_trend):\n    pass\n"))
    assert all(c.per_sample for c in per.cases)
    code = 'def f(a, b):\n    """F.\n\n    Args:\n        a: gold-label probabilities, shape (n_samples, n_epochs)\n        b: the labels\n    """\n'
    case = synthesize(entry(code)).cases[0]
    got = values(case)
    assert got["a"].shape == (case.dims["N"], case.dims["E"]) and got["b"].shape == (case.dims["N"],)


def test_evaluated_defaults_are_supplied_when_we_can():
    fixtures = synthesize(entry("def enc(labels, vocab=load('v.txt'), k=3):\n    pass\n"))
    assert fixtures.supplied_defaults == ["vocab"]
    assert [a.name for a in fixtures.cases[0].args] == ["labels", "vocab"]


def test_classes_get_constructor_and_method_arguments():
    code = "class Scorer:\n    def __init__(self, num_classes):\n        pass\n    def score(self, logits, labels):\n        pass\n    def save(self, path):\n        pass\n"
    fixtures = synthesize(entry(code))
    case = fixtures.cases[0]
    assert [a.name for a in case.args] == ["num_classes"] and list(case.method_args) == ["score"]
    assert fixtures.skipped_methods[0].param == "save()"


NAMES = ["logits", "probs", "labels", "targets", "training_dynamics", "img", "images", "embeddings", "p_values",
         "scores", "df", "args", "num_classes", "epochs", "seed", "noise_rate", "alpha", "k", "v", "device",
         "gold_probs", "correct", "vocab", "model", "path", "mystery"]
ANNOTATIONS = [None, "np.ndarray", "torch.Tensor", "List[float]", "int", "float", "str", "bool", "pd.DataFrame"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(ANNOTATIONS)), min_size=1, max_size=5,
                unique_by=lambda t: t[0]))
def test_any_signature_gets_coherent_cases_or_names_what_is_missing(params):
    signature = ", ".join(f"{n}: {a}" if a else n for n, a in params)
    fixtures = synthesize(entry(f"def f({signature}):\n    pass\n"))
    if fixtures.missing:
        assert not fixtures.cases and {m.param for m in fixtures.missing} <= {n for n, _ in params}
        return
    assert [a.name for a in fixtures.cases[0].args] == [n for n, _ in params]
    for case in fixtures.cases[:2]:
        first, second = values(case), values(case)
        for name in first:
            a, b = first[name], second[name]
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b, equal_nan=True)
            elif isinstance(a, pd.DataFrame):
                assert a.equals(b)
            elif not hasattr(a, "__array__"):
                assert a == b or (a != a and b != b)


def test_labels_of_several_annotators_are_one_noisy_column_each() -> None:
    from paperproof.fixtures.values import ANNOTATORS

    case = {"seed": 3, "dims": {"E": 4, "N": 40, "C": 3}, "case_id": "t"}
    plain = materialize({"kind": "labels"}, case)
    votes = materialize({"kind": "labels", "params": {"layout": "NM"}}, case)
    assert votes.shape == (40, ANNOTATORS) and votes.dtype.kind == "i"
    assert ((votes >= 0) & (votes < 3)).all()
    agree = (votes == plain[:, None]).mean(axis=0)
    assert ((agree > 0.5) & (agree < 1.0)).all()  # each annotator mostly right, none perfect
    assert not (votes[:, 0] == votes[:, 1]).all()


def test_a_gpu_default_of_a_function_of_arrays_is_replaced_by_the_runners_device() -> None:
    text = "def margin(logits, labels, device='cuda:0', eps=1e-8):\n    return logits\n"
    (entry,) = extract_module(text, repo="o/r", path="m.py")
    fixtures = synthesize(entry)
    assert {a.name: a.spec.kind for a in fixtures.cases[0].args}.get("device") == "device"
    assert "eps" not in {a.name for a in fixtures.cases[0].args}  # a literal default that runs anywhere is kept
    assert "device" not in fixtures.supplied_defaults
    assert any("its default 'cuda:0' names a GPU" in c for c in fixtures.choices)


def test_a_count_named_only_in_its_docstring_line_is_a_small_integer() -> None:
    code = ('def filter_with_trees(X_train, y_train, nest):\n    """Args:\n      X_train: the training data\n'
            '      y_train: the labels\n      nest: number of estimators\n    """\n    return X_train[:nest]\n')
    fixtures = synthesize(entry(code))
    assert fixtures.cases and not fixtures.missing
    assert values(fixtures.cases[0])["nest"] == 3


def test_names_that_say_a_count_a_rate_or_a_size_get_a_number_of_that_kind() -> None:
    fixtures = synthesize(entry("def f(scores, num_examples, num_labels, lr, corrupt_prob, cls_smpl_sz, global_step):"
                                "\n    pass\n"))
    case = fixtures.cases[0]
    got = values(case)
    assert got["num_examples"] == case.dims["N"] and got["num_labels"] == case.dims["C"]
    assert (got["lr"], got["corrupt_prob"], got["cls_smpl_sz"], got["global_step"]) == (0.1, 0.2, 3, 3)


def test_a_docstring_shape_over_the_classes_gives_a_class_matrix_or_a_class_prior() -> None:
    code = ('def latent(joint_counts, noise, prior, labels):\n    """Estimate.\n\n    Parameters\n    ----------\n'
            '    joint_counts : np.ndarray\n      An array of shape ``(K, K)``: entry (j, k) is the number of examples '
            'with noisy label j and true label k.\n'
            '    noise : np.ndarray\n      A conditional probability matrix (of shape ``(K, K)``); its columns sum to 1.\n'
            '    prior : np.ndarray\n      Array of shape ``(K, )``: the fraction of each noisy class.\n'
            '    labels : np.ndarray\n      A 1D array of shape ``(N,)`` of class labels.\n    """\n')
    case = synthesize(entry(code)).cases[0]
    got, classes = values(case), case.dims["C"]
    assert got["joint_counts"].shape == (classes, classes) and got["noise"].shape == (classes, classes)
    assert got["joint_counts"].sum() == case.dims["N"] + classes  # counted, each class once as itself
    assert np.allclose(got["noise"].sum(axis=0), 1.0) and np.linalg.matrix_rank(got["noise"]) == classes
    assert got["prior"].shape == (classes,) and np.isclose(got["prior"].sum(), 1.0)
    assert np.allclose(got["prior"], np.bincount(got["labels"], minlength=classes) / case.dims["N"])


def test_an_optional_parameter_is_offered_to_a_probe_only_where_it_was_left_at_none() -> None:
    fn = entry("def noise(K, trace, valid_noise_matrix=True, py=None, seed=None, frac_zero=0.0):\n    pass\n")
    offered = optional_arguments(fn)
    assert offered["valid_noise_matrix"] is None and offered["frac_zero"] is None  # settings it has already
    assert offered["seed"] is not None and offered["seed"].spec.params["value"] == 0


def test_a_logger_is_the_standard_librarys() -> None:
    import logging

    got = values(synthesize(entry("def select(scores, logger):\n    logger.info('selecting')\n")).cases[0])
    assert isinstance(got["logger"], logging.Logger)


def test_a_splits_data_matrix_and_labels_are_named_as_scikit_learn_names_them() -> None:
    case = synthesize(entry("def filter_easy(X_train, y_train, seed, groups):\n    pass\n")).cases[0]
    got = values(case)
    assert got["X_train"].shape == (case.dims["N"], case.dims["D"]) and got["y_train"].shape == (case.dims["N"],)
    assert got["groups"].shape == (case.dims["N"],) and got["groups"].dtype.kind == "i"  # each sample's group


def test_a_capital_x_is_the_data_matrix_and_a_lower_case_x_one_array_of_scores() -> None:
    got = values(synthesize(entry("def kdn(X, y, k=5):\n    pass\n")).cases[0])
    assert got["X"].ndim == 2 and len(got["X"]) == len(got["y"])
    assert values(synthesize(entry("def rank(x):\n    pass\n")).cases[0])["x"].ndim == 1


def _features_case(**extra):
    return {"case_id": "typical", "seed": 11, "dims": {"E": 4, "N": 30, "C": 3, "D": 5}, **extra}


def test_feature_vectors_follow_their_samples_when_reordered_and_keep_their_place_when_classes_are_renamed():
    from paperproof.fixtures.values import features, sample_permutation

    points, labels = features(_features_case())
    moved, moved_labels = features(_features_case(transform={"permute": 5}))
    order = sample_permutation(5, 30)
    np.testing.assert_array_equal(moved, points[order])
    np.testing.assert_array_equal(moved_labels, labels[order])
    renamed_points, renamed = features(_features_case(transform={"relabel": 3}))
    np.testing.assert_array_equal(renamed_points, points)
    names = np.random.default_rng(3).permutation(3)
    np.testing.assert_array_equal(renamed, names[labels])


def test_a_held_out_split_is_new_points_of_the_same_classes_and_its_labels_match_its_features():
    from paperproof.fixtures.values import HELD_OUT, features

    case = _features_case()
    points, labels = features(case)
    test_points, test_labels = features(case, held_out=True)
    assert test_points.shape == points.shape and not np.allclose(test_points, points)
    centres = np.stack([points[labels == c].mean(axis=0) for c in range(3)])
    for c in range(3):  # each class of the test split lies nearest its own class of the training samples
        gaps = np.linalg.norm(centres - test_points[test_labels == c].mean(axis=0), axis=1)
        assert gaps.argmin() == c
    np.testing.assert_array_equal(materialize({"kind": "labels", "params": {"split": HELD_OUT}}, case), test_labels)
    np.testing.assert_array_equal(materialize({"kind": "embeddings", "params": {"split": HELD_OUT}}, case),
                                  test_points.astype(np.float32))


def test_a_planted_cases_features_are_the_planted_runs_inputs_with_its_observed_labels():
    from paperproof.fixtures import training
    from paperproof.fixtures.values import features

    case = {"case_id": "planted@10", "seed": 11, "dims": {"E": 6, "N": 120, "C": 3, "D": 8, "P": 10}}
    points, labels = features(case)
    run = training.planted(training.RunSpec(seed=11, n=120, classes=3, epochs=6, features=8, planted=0.1))
    np.testing.assert_array_equal(points, run.x)
    np.testing.assert_array_equal(labels, run.observed)
    assert (run.observed != run.clean).any()  # its mislabels keep their class's input under another label
    test_points, test_labels = features(case, held_out=True)
    assert test_points.shape == (120, 8) and set(test_labels.tolist()) == {0, 1, 2}
