"""Research code run as its own repository runs it (`tests/research/`, a specimen of ours in that style): its `src/`
package imports itself, module globals built by running code exist, arguments come from the repository's call sites
(script, notebook) and the body's use, and a tracker's hooks are driven as the repository's training loop drives
them. Each sample says how it was loaded and where each argument came from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paperproof.catalogue.sample import Sample
from paperproof.verify.checkout import verify_path

SPECIMEN = Path(__file__).resolve().parent / "research"


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sample]:
    checkout = tmp_path_factory.mktemp("research") / "noisetrack"
    shutil.copytree(SPECIMEN, checkout)
    found = verify_path(checkout, everything=True, workers=2, planted=False)
    return {s.entry: s for s in found}


def _evidence(sample: Sample) -> dict[str, tuple[str, str]]:
    return {a.param: (a.source, a.why) for a in sample.arguments}


def test_a_src_package_imports_itself_and_its_globals_built_by_a_loop_exist(samples: dict[str, Sample]) -> None:
    norm = samples["error_norm"]  # `from noisetrack.registry import NORMS`, filled by a loop at import
    assert norm.status == "ran" and norm.reason.startswith("returned on 8 of 8 cases"), norm.reason
    assert norm.loaded == "module"
    assert any("imported `noisetrack.distances` as its repository does" in n for n in norm.notes)


def test_a_module_whose_top_level_cannot_run_is_defined_from_its_closure_and_says_why(
        samples: dict[str, Sample]) -> None:
    legacy = samples["legacy_margin"]
    assert legacy.loaded == "closure" and legacy.status == "ran"
    assert any("importing `noisetrack.legacy` raised FileNotFoundError" in n and "defined from its closure" in n
               for n in legacy.notes)


def test_arguments_come_from_the_repositorys_call_sites(samples: dict[str, Sample]) -> None:
    temper = _evidence(samples["temper"])  # `temper(..., args)` in scripts/train.py: its argparse defaults
    assert temper["hp"][0] == "call_site" and "parser.parse_args()" in temper["hp"][1]
    assert samples["temper"].status == "ran"
    flags = samples["flag_top"]  # `flag_top(scores, 7)` in a notebook cell
    (budget,) = [a for a in flags.arguments if a.param == "budget_k"]
    assert (budget.source, budget.path, budget.line) == ("call_site", "notebooks/explore.ipynb#cell-3", 2)
    assert budget.url is not None and budget.url.endswith("notebooks/explore.ipynb")
    assert flags.status == "ran" and all(c.args["budget_k"] == "7" for c in flags.cases)


def test_arguments_no_name_rule_knows_come_from_the_bodys_use(samples: dict[str, Sample]) -> None:
    norm = _evidence(samples["error_norm"])
    assert norm["gold_idx"] == ("use", "the body uses it as integer indices: "
                                       "`np.eye(prob_mtx.shape[1])[gold_idx]` (line 3)")
    assert norm["prob_mtx"][0] == "use"
    assert _evidence(samples["LossTracker"])["n_items"][0] == "use"


def test_hooks_are_driven_as_the_repositorys_own_loop_drives_them(samples: dict[str, Sample]) -> None:
    tracker = samples["LossTracker"]  # record() per batch, close_epoch() per epoch, hardness() after the loop
    assert tracker.status == "ran", tracker.reason
    (driven,) = [n for n in tracker.notes if n.startswith("Driven")]
    assert "as its repository's own loop drives it (scripts/train.py:" in driven
    assert "record() per batch, close_epoch() per epoch, then hardness" in driven
    assert all(c.output is not None and c.output.startswith("ndarray float64 [") for c in tracker.cases)


def test_a_probe_run_gives_what_the_codes_own_exception_asked_for(samples: dict[str, Sample]) -> None:
    weights = samples["floor_weights"]  # reads `cfg.floor`, which no rule of ours knows
    assert weights.status == "ran", weights.reason
    (cfg,) = [a for a in weights.arguments if a.param == "cfg"]
    assert cfg.source == "feedback"
    assert "'Namespace' object has no attribute 'floor'" in cfg.why and "`floor` = 1" in cfg.why


def test_a_class_that_trains_itself_is_fit_on_an_object_its_repository_builds(samples: dict[str, Sample]) -> None:
    method = samples["MeanMarginMethod"]  # `fit(source: BatchSource)` inherited from its base, then compute_scores()
    assert method.status == "ran", method.reason
    assert method.reason.startswith("returned on 5 of 5 cases"), method.reason
    assert any("`source` is built as its repository builds it: `BatchSource(…)` (src/noisetrack/batches.py:16)" in n
               for n in method.notes)
    assert any("`fit()` is inherited from HardnessMethod (src/noisetrack/methods/base.py:" in n for n in method.notes)
    assert any(n.startswith("It trains its model itself") for n in method.notes)
    assert method.checked != "paper"  # no run of ours saw its training: never compared with a paper's formula
    assert all(c.output is not None and c.output.startswith("ndarray float64 [") for c in method.cases)


def test_an_estimator_is_fit_on_the_runs_inputs_and_labels(samples: dict[str, Sample]) -> None:
    counter = samples["ForgetCounter"]  # `fit(X, y)`, then scores()
    assert counter.status == "ran", counter.reason
    assert {c.case_id for c in counter.cases} >= {"typical", "typical~permuted"}
    assert any(n.startswith("It trains its model itself: given a real training run's untrained model") and
               "fit() trained it in its own loop, then scores" in n for n in counter.notes)


def test_a_function_of_several_models_gets_the_runs_model_after_each_epoch(samples: dict[str, Sample]) -> None:
    vote = samples["snapshot_disagreement"]  # `models`: a list of models, `loader`: the ordered loader
    assert vote.status == "ran", vote.reason
    assert all(c.args["models"].startswith("run(role=nets") for c in vote.cases)
    assert all(c.output is not None and c.output.startswith("ndarray float64 [") for c in vote.cases)


def test_code_written_for_scikit_learn_is_given_a_classifier_with_its_methods(samples: dict[str, Sample]) -> None:
    oof = samples["oof_confidence"]  # calls `model.fit` / `model.predict_proba` on copies of it
    assert oof.status == "ran", oof.reason
    (model,) = [a for a in oof.arguments if a.param == "model"]
    assert model.source == "feedback" and "'MLP' object has no attribute 'fit'" in model.why
    assert all(c.args["model"].startswith("run(role=estimator") for c in oof.cases)


def test_a_device_that_defaults_to_a_gpu_is_given_the_runners(samples: dict[str, Sample]) -> None:
    agree = samples["snapshot_agreement"]  # `device="cuda"` by default, as code written on a GPU machine has it
    assert agree.status == "ran", agree.reason
    assert any("`device` is given the runner's device: its default 'cuda' names a GPU." in n for n in agree.notes)


def test_a_tracker_is_readied_by_its_own_reset_before_training(samples: dict[str, Sample]) -> None:
    log = samples["MarginLog"]  # `reset()` makes the list `update()` fills; no loop of the repository calls it
    assert log.status == "ran", log.reason
    (driven,) = [n for n in log.notes if n.startswith("Driven")]
    assert "reset() once before training, update() per epoch, then scores" in driven


def test_the_evidence_for_a_built_argument_names_its_class(samples: dict[str, Sample]) -> None:
    (source,) = [a for a in samples["MeanMarginMethod"].arguments if a.param == "source"]
    assert source.source == "annotation" and "`BatchSource` (src/noisetrack/batches.py:16)" in source.why


def test_code_written_for_a_gpu_runs_on_the_cpu_and_says_so(samples: dict[str, Sample]) -> None:
    margin = samples["gpu_margin"]  # `.cuda()` and `device="cuda"`, unconditionally
    assert margin.status == "ran" and margin.reason.startswith("returned on 8 of 8 cases"), margin.reason
    assert margin.device == "cpu"
    assert any("moves tensors to a GPU" in n and "left each tensor on the CPU" in n for n in margin.notes)
    assert not any("moves tensors to a GPU" in n for n in samples["error_norm"].notes)


def test_code_written_for_numpy_1_runs_with_its_removed_names_and_says_so(samples: dict[str, Sample]) -> None:
    tail = samples["tail_share"]  # `np.Inf` in a module global, `np.float` and `np.product` in the body
    assert tail.status == "ran" and tail.reason.startswith("returned on"), tail.reason
    assert "raised" not in tail.reason
    (note,) = [n for n in tail.notes if "NumPy has since removed" in n]
    assert "`np.float`" in note and "`np.product`" in note


def test_an_argument_only_handed_to_a_helper_of_another_module_is_what_that_helper_uses_it_as(
        samples: dict[str, Sample]) -> None:
    gold = samples["gold_confidence"]  # `to_probs(x)`, imported from noisetrack.normalise: `F.softmax(raw_logits)`
    assert gold.cases[0].args["x"].startswith("logits")  # the helper's use names the kind, over the name `x`
    source, why = _evidence(gold)["x"]  # then a probe run found it wants a tensor, as F.softmax does
    assert source == "feedback" and why.endswith("so it is given as a torch tensor")
    assert gold.status == "ran" and gold.reason.startswith("returned on 8 of 8 cases"), gold.reason


def test_a_hook_is_passed_its_loops_counter_as_the_repositorys_loop_passes_it(samples: dict[str, Sample]) -> None:
    staged = samples["StagedConfidence"]  # `tracker.on_round_end(net, iteration=r)` in `for r in range(1, ...)`
    assert staged.status == "ran", staged.reason
    assert "`iteration` is given the run's epoch, counted from 1, as its repository's loop passes its counter." \
        in staged.notes
    typical = next(c for c in staged.cases if c.case_id == "typical")
    assert typical.output == "ndarray int64 [4] in [1, 4]"  # rounds 1..4 of a 4-epoch run, not 1 each time


def test_a_layout_the_code_takes_further_is_probed_from_there(samples: dict[str, Sample]) -> None:
    forgotten = samples["epochs_until_forgotten"]  # `flags.shape[1]`: two axes; `torch.vstack`: a tensor
    assert forgotten.status == "ran" and "raised" not in forgotten.reason, forgotten.reason
    assert forgotten.cases[0].args["flags"].startswith("correct")
    (note,) = [n for n in forgotten.notes if n.startswith("With our first layout")]
    assert "the code accepted `flags` as per-epoch flags" in note and "so it is given as a torch tensor" in note


def test_a_docstring_shape_over_the_classes_gives_the_runs_class_matrix_and_prior(samples: dict[str, Sample]) -> None:
    prior = samples["clean_prior"]  # `(K, )` and a column-stochastic `(K, K)`, in numpy-style docstring lines
    assert prior.status == "ran", prior.reason
    typical = next(c for c in prior.cases if c.case_id == "typical")
    assert typical.args["transition"].startswith("given label × the run's last prediction")
    assert "each column summing to 1" in typical.args["transition"]
    assert typical.args["observed_prior"].startswith("each class's share of the labels")
    assert {a.param: a.source for a in prior.arguments} == {"observed_prior": "docstring", "transition": "docstring"}


def test_what_divides_an_array_is_given_a_number(samples: dict[str, Sample]) -> None:
    sharp = samples["sharpened"]  # `logits / temperature`
    assert sharp.status == "ran", sharp.reason
    assert next(c for c in sharp.cases if c.case_id == "typical").args["temperature"] == "0.5"
    assert _evidence(sharp)["temperature"][0] == "use"


def test_a_dict_built_at_the_loops_call_is_given_with_its_keys_holding_the_runs_values(
        samples: dict[str, Sample]) -> None:
    norms = samples["HeadGradNorm"]  # `scorer.update(batch_inputs={"features": xb, "labels": yb}, ...)` per batch
    assert norms.status == "ran", norms.reason
    source, why = _evidence(norms)["batch_inputs"]
    assert source == "call_site" and "`features` (the run's inputs), `labels` (the run's labels)" in why
    (arg,) = [a for a in norms.arguments if a.param == "batch_inputs"]
    assert arg.path == "scripts/gradnorm_loop.py"
