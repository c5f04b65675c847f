"""Every status occurs among the specimen samples, each for the reason the specimen was written for."""

from __future__ import annotations

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
    ("paperproof-specimens/perturb-kit", "run_name"):  # `args.hardness`, which no rule names: a probe run asks
        ("ran", None, "returned on 6 of 6 cases"),
    ("paperproof-specimens/dynamics-maps-fork", "compute_train_dy_metrics"):
        ("ran_draft_wrong", "OUTPUT_MISDECLARED", "our draft said it returns DataFrame"),
    ("paperproof-specimens/stats-plots", "rank_hardest"):
        ("ran_draft_wrong", "OUTPUT_MISDECLARED", "returns list"),
    ("paperproof-specimens/legacy-tf-maps", "DataMapCallback"):
        ("unverified", None, "needs module tensorflow, which could not be had in the sandbox"),
    ("paperproof-specimens/stats-plots", "plot_data_map"):
        ("unverified", None, "needs module matplotlib, which could not be had in the sandbox"),
    ("paperproof-specimens/legacy-tf-maps", "read_jsonl"):  # it reads a file of the training run's logs
        ("ran", None, "returned on 5 of 5 cases"),  # the fifth: the same run with its samples reordered
    ("paperproof-specimens/dynamics-maps", "correctness_counts"):
        ("ran_violates", "VIOLATES", "correctness (count_argmax), which returns a count where the paper defines a fraction"),
    ("paperproof-specimens/dynamics-maps-fork", "stat_a"):
        ("ran_violates", "VIOLATES", "correctness (count_argmax), which returns a count where the paper defines a fraction"),
    ("paperproof-specimens/dynamics-maps-fork", "forgetting_events"):
        ("ran_violates", "VIOLATES", "never-learned samples score 0"),
    ("paperproof-specimens/dynamics-maps-fork", "variability_scores"):
        ("ran_violates", "VIOLATES", "divides by E−1 where the paper divides by E"),
    ("paperproof-specimens/dynamics-maps", "forgetting_events"):
        ("ran", "PASSES", "its contract holds"),
    # Read by hand: each of these was once given a status that blamed the code for our fixture.
    # Called once per sample: judged per call (an int), not on the list we collected.
    ("paperproof-specimens/stats-plots", "compute_forgetfulness"):
        ("ran", "PASSES", "returns int (its annotation)"),
    # Indexes two axes: one epoch's [samples, classes], not our [epochs, samples, classes].
    ("paperproof-specimens/stats-plots", "process_ood_logits"):
        ("ran", None, "nothing declared to check"),
    # A float32 layer fed our float64 scores: our dtype failed, so it was retried in float32.
    ("paperproof-specimens/stats-plots", "calibrate_scores"):
        ("ran", "PASSES", "returns torch.Tensor (its annotation)"),
    # A made-up string would have it create folders named after it.
    ("paperproof-specimens/stats-plots", "check_folder_exist"):
        ("unverified", None, "parameter `folder_name` names a folder or file"),
    # It raises NotImplementedError naming any metric but its own: once published as a violation on our 'yes';
    # now given the values it compares `metric` with, one a case.
    ("paperproof-specimens/legacy-tf-maps", "keep_high_end"):
        ("ran", "PASSES", "returns bool (its annotation)"),
    # It iterates its `str` argument as a list of folder names: our 'yes' made folders y, e, s. It returned, but
    # what it did is our string taken for paths, not a result: charged to our fixture, never a clean ran.
    ("paperproof-specimens/legacy-tf-maps", "start_rounds"):
        ("ran_fixture", None, "not clean: it created e/, s/, y/"),
    # Writes under `args.output_dir`, our made-up 'out', which is no folder: the FileNotFoundError is our
    # fixture's, not an attempt the sandbox blocked (which would make `verify` exit 1).
    ("paperproof-specimens/dynamics-maps", "save_run_config"):
        ("ran_fixture", "RAISES", "a path under our made-up `args.output_dir` = 'out', which names no folder"),
    # A Keras callback driven on our training run: with no TensorFlow here it is handed our torch model, which
    # has no `predict`; the fault is charged to our fixture, never to the code, and never counted as ran.
    ("paperproof-specimens/legacy-tf-maps", "ForgettingTracker"):
        ("ran_fixture", "RAISES", "so charged to our fixture"),
    # Written for planted hardness: a correct AUM, and a random "hardness" baseline.
    ("paperproof-specimens/hardness-bench", "aum_scores"):
        ("ran", None, "raised on one_class (ValueError: AUM needs at least two classes"),
    ("paperproof-specimens/hardness-bench", "random_hardness"):
        ("ran", None, "nothing declared to check"),
    # Per-example losses appended in the order a shuffled loader hands them over: the scores stay at their
    # positions when the samples are reordered, so they do not belong to their samples. Filed by index: faithful.
    ("paperproof-specimens/hardness-bench", "LossRecorder"):
        ("ran_violates", "VIOLATES", "scores do not belong to their samples"),
    ("paperproof-specimens/hardness-bench", "IndexedLossRecorder"):
        ("ran", None, "it declares no contract of its own, and its output was checked against the paper's definition"),
}


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: f"{k[0].split('/')[1]}::{k[1]}")
def test_specimen_gets_its_status_for_its_reason(samples, key):
    status, check, fragment = EXPECTED[key]
    record = samples[key]
    assert (record["status"], record["contract_check"]) == (status, check), record["reason"]
    assert fragment in record["reason"]


def test_a_string_the_code_refuses_by_name_gets_the_values_it_compares_with(samples):
    record = samples["paperproof-specimens/legacy-tf-maps", "keep_high_end"]
    given = [case["args"]["metric"] for case in record["cases"]]
    assert set(given) == {"'variability'", "'forgetfulness'", "'confidence'"}
    assert [c["outcome"] for c in record["cases"]] == ["returned"] * len(given)


def test_folders_made_from_our_string_are_named_in_the_reason(samples):
    record = samples["paperproof-specimens/legacy-tf-maps", "start_rounds"]
    assert "each a piece of our made-up `rounds` = 'yes'" in record["reason"]
    assert record["verification_level"] == 1 and record["contract_check"] is None


def test_a_missing_file_under_our_folder_is_not_a_sandbox_block(samples):
    record = samples["paperproof-specimens/dynamics-maps", "save_run_config"]
    assert record["blocked"] == [] and {c["outcome"] for c in record["cases"]} == {"raised"}
    assert "its error names our made-up `args.output_dir` = 'out'" in record["reason"]


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


FIDELITY = {
    # (repository, entry): [(output, metric, variant, is the paper's definition)]
    ("paperproof-specimens/dynamics-maps", "confidence_scores"): [("return value", "confidence", "mean_gold_prob", True)],
    ("paperproof-specimens/dynamics-maps", "correctness_counts"): [("return value", "correctness", "count_argmax", False)],
    ("paperproof-specimens/dynamics-maps-fork", "stat_a"): [("return value", "correctness", "count_argmax", False)],
    ("paperproof-specimens/dynamics-maps-fork", "forgetting_events"):
        [("return value", "forgetfulness", "never0_normalised", False)],
    # `args.burn_out` is sized to each case, so the 10-epoch case keeps its 10 epochs.
    ("paperproof-specimens/dynamics-maps", "compute_train_dy_metrics"): [
        ("column confidence", "confidence", "mean_gold_prob", True),
        ("column variability", "variability", "ddof0", True),
        ("column correctness", "correctness", "fraction_argmax", True),
        ("column forgetfulness", "forgetfulness", "never1000_count", True),
        ("column threshold_closeness", "threshold_closeness", "mu_one_minus_mu", True)],
    ("paperproof-specimens/stats-plots", "compute_forgetfulness"):
        [("return value", "forgetfulness", "never1000_count", True)],
    # Declared a DataFrame, returns (frame, summary): the draft is wrong, and the frame's metrics are still said.
    ("paperproof-specimens/dynamics-maps-fork", "compute_train_dy_metrics"): [
        ("item 0 column confidence", "confidence", "mean_gold_prob", True),
        ("item 0 column variability", "variability", "ddof0", True),
        ("item 0 column correctness", "correctness", "fraction_argmax", True)],
    ("paperproof-specimens/legacy-tf-maps", "confidence_from_probs"): [("return value", "confidence", "mean_gold_prob", True)],
    ("paperproof-specimens/perturb-kit", "flip_labels_uniform"): [],
    # A class: constructed, then its methods called with synthesized arguments.
    ("paperproof-specimens/dynamics-maps", "DynamicsTracker"): [
        ("key confidence", "confidence", "mean_gold_prob", True), ("key variability", "variability", "ddof0", True)],
    # Takes one sample's correctness trend: called once per sample, outputs collected.
    ("paperproof-specimens/dynamics-maps-fork", "compute_forgetfulness"):
        [("return value", "forgetfulness", "never1000_count", True)],
}


@pytest.mark.parametrize("key", sorted(FIDELITY), ids=lambda k: f"{k[0].split('/')[1]}::{k[1]}")
def test_fidelity_recognises_metrics_by_their_outputs(samples, key):
    record = samples[key]
    found = [(f["output"], f["metric"], f["matches"], f["paper"]) for f in record["fidelity"]]
    assert found == FIDELITY[key]
    for finding in record["fidelity"]:
        assert finding["cases_matched"] == finding["cases"] >= 2
        assert bool(finding["departures"]) != finding["paper"]


def test_tiers(samples):
    assert samples["paperproof-specimens/dynamics-maps", "confidence_scores"]["metamorphic_tier"] == "relational"
    # Seeded label noise does not follow a permutation of the samples: deterministic, not relational.
    assert samples["paperproof-specimens/perturb-kit", "flip_labels_uniform"]["metamorphic_tier"] == "deterministic"
    assert samples["paperproof-specimens/perturb-kit", "run_name"]["metamorphic_tier"] == "deterministic"


def test_an_option_no_rule_names_is_given_what_a_probe_run_asked_for(samples):
    (args,) = [a for a in samples["paperproof-specimens/perturb-kit", "run_name"]["arguments"] if a["param"] == "args"]
    assert args["source"] == "feedback" and "'Namespace' object has no attribute 'hardness'" in args["why"]


def test_identical_behaviour_is_linked_across_forks(samples):
    original = samples["paperproof-specimens/dynamics-maps", "correctness_counts"]
    unnamed = samples["paperproof-specimens/dynamics-maps-fork", "stat_a"]
    assert original["fingerprint"] == unnamed["fingerprint"]
    assert [b["sample_id"] for b in unnamed["behaves_like"]] == [original["sample_id"]]


def test_a_default_that_reads_a_file_is_supplied_not_evaluated(samples):
    record = samples["paperproof-specimens/legacy-tf-maps", "encode_labels"]
    assert record["status"] == "ran"
    assert any("default of `vocab`" in note and "not evaluated" in note for note in record["notes"])


def test_a_training_dynamics_dict_is_understood(samples):
    record = samples["paperproof-specimens/dynamics-maps", "compute_train_dy_metrics"]
    assert record["cases"][0]["args"]["training_dynamics"].startswith("training dynamics by sample id: 24 samples × 6 epochs")
    assert record["cases"][0]["output"].startswith("DataFrame [24, 6]")


def test_data_map_on_the_paper_whose_repositories_implement_it(bundled_site):
    page = (bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training" / "index.html").read_text()
    assert 'src="/static/data-map.svg"' in page
    other = (bundled_site / "paper" / "specimen-probing-hardness-with-image-and-label" / "index.html").read_text()
    assert "data-map.svg" not in other
    svg = (bundled_site / "static" / "data-map.svg").read_text()
    assert svg.count("<circle") == 400 and "<title" in svg
    import xml.etree.ElementTree as ET

    assert ET.fromstring(svg).tag.endswith("svg")


def test_the_shape_the_code_indexes_is_given_and_said(samples):
    record = samples["paperproof-specimens/stats-plots", "process_ood_logits"]
    assert record["cases"][0]["args"]["logits"].startswith("logits [24 samples × 3 classes]")
    assert record["cases"][0]["output"].startswith("ndarray float64 [24]")  # one score per sample
    assert any("[N, C] (one epoch)" in note and "probs[:, 0]" in note for note in record["notes"])


def test_a_retried_layout_is_kept_and_said(samples):
    record = samples["paperproof-specimens/stats-plots", "calibrate_scores"]
    assert record["cases"][0]["args"]["scores"].startswith("scores [24 samples], float32 tensor")
    assert any("mat1 and mat2" in note and "accepted `scores` as float32" in note for note in record["notes"])


def test_a_per_sample_entry_says_it_was_judged_per_call(samples):
    record = samples["paperproof-specimens/stats-plots", "compute_forgetfulness"]
    assert record["cases"][0]["output"].startswith("list int64 [24]")
    assert any("judged each call's output against its annotation" in note for note in record["notes"])
