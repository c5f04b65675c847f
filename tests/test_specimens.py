"""Every status occurs among the specimen samples, each for the reason the specimen was written for."""

from __future__ import annotations

import json

import pytest

# (repository, entry) -> (status, contract_check, a fragment of the reason that says why)
EXPECTED = {
    ("paperproof-specimens/dynamics-maps", "confidence_scores"):
        ("ran", "PASSES", "its contract holds"),
    ("paperproof-specimens/dynamics-maps", "compute_train_dy_metrics"):
        ("ran", "PASSES", "returns DataFrame"),
    ("paperproof-specimens/perturb-kit", "flip_labels_uniform"):
        ("ran", "PASSES", "its contract holds"),
    ("paperproof-specimens/legacy-tf-maps", "confidence_from_probs"):
        ("ran", "PASSES", "its contract holds"),
    ("paperproof-specimens/perturb-kit", "mean_intensity"):
        ("ran_violates", "VIOLATES", "broke its own promise: returns float (its annotation), got ndarray"),
    ("paperproof-specimens/perturb-kit", "str2bool"):
        ("ran_violates", "VIOLATES", "returns bool (its annotation), got str"),
    ("paperproof-specimens/perturb-kit", "run_name"):
        ("ran_fixture", "RAISES", "'Namespace' object has no attribute 'hardness' — at its input boundary"),
    ("paperproof-specimens/dynamics-maps-fork", "compute_train_dy_metrics"):
        ("ran_draft_wrong", "OUTPUT_MISDECLARED", "our draft said it returns DataFrame"),
    ("paperproof-specimens/stats-plots", "rank_hardest"):
        ("ran_draft_wrong", "OUTPUT_MISDECLARED", "returns list"),
    ("paperproof-specimens/legacy-tf-maps", "DataMapCallback"):
        ("unverified", None, "module tensorflow is not installed"),
    ("paperproof-specimens/stats-plots", "plot_data_map"):
        ("unverified", None, "module matplotlib is not installed"),
    ("paperproof-specimens/legacy-tf-maps", "read_jsonl"):
        ("unverified", None, "parameter `path` needs a file"),
    ("paperproof-specimens/legacy-tf-maps", "encode_labels"):
        ("unverified", None, "file not available in the sandbox: vocab.txt"),
}


@pytest.fixture(scope="module")
def samples(bundled_site):
    found = {}
    for path in sorted((bundled_site / "sample").glob("*.json")):
        record = json.loads(path.read_text())
        found[record["repo"], record["entry"]] = record
    return found


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: f"{k[0].split('/')[1]}::{k[1]}")
def test_specimen_gets_its_status_for_its_reason(samples, key):
    status, check, fragment = EXPECTED[key]
    record = samples[key]
    assert (record["status"], record["contract_check"]) == (status, check), record["reason"]
    assert fragment in record["reason"]


def test_every_status_occurs(samples):
    from paperproof.catalogue.sample import STATUS_VOCABULARY

    assert {r["status"] for r in samples.values()} == set(STATUS_VOCABULARY)


def test_the_entry_that_needs_tensorflow_did_not_stop_its_neighbour(samples):
    """callbacks.py imports tensorflow at the top; the closure lets the function that does not need it run."""
    record = samples["paperproof-specimens/legacy-tf-maps", "confidence_from_probs"]
    assert record["status"] == "ran" and record["closure_names"] == ["np"]


def test_pointer_only_licence_hides_the_code(samples):
    record = samples["paperproof-specimens/stats-plots", "rank_hardest"]
    assert record["licence"] == "NONE" and record["inline_ok"] is False and record["source"] is None
    shown = samples["paperproof-specimens/dynamics-maps", "confidence_scores"]
    assert shown["licence"] == "MIT" and shown["inline_ok"] and "def confidence_scores" in shown["source"]


def test_samples_ran_isolated(samples):
    record = samples["paperproof-specimens/dynamics-maps", "confidence_scores"]
    assert record["isolation"]["network"] in ("namespace", "none")
    if record["isolation"]["network"] == "none":
        assert record["isolation"]["fallbacks"], "a missing layer must be stated"
    assert record["device"] == "cpu"
