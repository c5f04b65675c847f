"""Arguments from evidence: call sites, then the body's use (through the helpers it hands a parameter to), then
names; a stronger source names the family and the name rules choose the recipe inside it."""

from __future__ import annotations

import textwrap

from paperproof.catalogue.callsites import ArgEvidence, CallSite
from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.synth import synthesize


def _entry(code: str, name: str):
    (found,) = [e for e in extract_module(textwrap.dedent(code), repo="o/r", path="m.py") if e.name == name]
    return found


HELPER = """
    import torch

    def _bank(net, feats_from):
        out = []
        for x, y in feats_from:
            out.append(net(x))
        return torch.cat(out)

    def knn_scores(net, fsource, k):
        bank = _bank(net, fsource)
        return bank[:, :k].mean(1)
    """


def test_a_parameter_handed_to_a_helper_is_what_the_helper_uses_it_as():
    fixtures = synthesize(_entry(HELPER, "knn_scores"))
    assert fixtures.missing == [] and fixtures.cases[0].protocol is not None  # driven on the run: a loader
    (loader,) = [e for e in fixtures.evidence if e.param == "fsource"]
    assert loader.source == "use" and "handed to `_bank()`, whose body uses `feats_from` so" in loader.why
    assert {a.name: a.spec.params.get("role") for a in fixtures.cases[0].args}["fsource"] == "loader"


def test_a_call_site_names_the_family_and_the_name_keeps_its_recipe_inside_it():
    code = "def confidence_of(gold_probs, opts):\n    return gold_probs.mean(axis=0) * opts.scale\n"
    site = CallSite(path="run.py", line=7, source="script", args=[
        ArgEvidence(param="gold_probs", expression="p", origin="np.load('p.npy')", origin_line=3, kind="array"),
        ArgEvidence(param="opts", expression="args", origin="parser.parse_args()", origin_line=5, kind="namespace",
                    value={"scale": 2.5, "epochs": 3})])
    fixtures = synthesize(_entry(code, "confidence_of"), sites=[site])
    args = {a.name: a.spec for a in fixtures.cases[0].args}
    assert args["gold_probs"].kind == "gold_probs"  # the name's recipe, in the family the call site named
    assert args["opts"].kind == "namespace" and args["opts"].params["attrs"]["scale"] == 2.5  # argparse defaults
    sources = {e.param: (e.source, e.path, e.line) for e in fixtures.evidence}
    assert sources == {"gold_probs": ("call_site", "run.py", 7), "opts": ("call_site", "run.py", 7)}


def test_a_literal_at_the_call_site_is_passed_as_it_is():
    code = "def top_k(scores, kk):\n    return sorted(scores)[-kk:]\n"
    site = CallSite(path="nb.ipynb#cell-2", line=1, source="notebook", args=[
        ArgEvidence(param="kk", expression="5", origin="5", origin_line=1, kind="literal", value=5)])
    fixtures = synthesize(_entry(code, "top_k"), sites=[site])
    assert all({a.name: a.spec for a in c.args}["kk"].params == {"value": 5} for c in fixtures.cases)


def test_a_call_site_that_passes_softmax_output_is_probabilities_whatever_the_name_guesses():
    code = "def class_margin(eval_softmax, labels):\n    return eval_softmax.max(-1).values - eval_softmax[..., 0]\n"
    site = CallSite(path="m.py", line=9, source="script", args=[
        ArgEvidence(param="eval_softmax", expression="prob", origin="softmax(eval_logits)", origin_line=8,
                    kind="probs")])
    fixtures = synthesize(_entry(code, "class_margin"), sites=[site])
    assert {a.name: a.spec.kind for a in fixtures.cases[0].args}["eval_softmax"] == "probs"


def test_a_loss_called_like_a_model_keeps_the_run_object_its_name_names():
    code = """
    def grad_norms(model, loader, loss_fn):
        out = []
        for x, y in loader:
            out.append(loss_fn(model(x), y))
        return out
    """
    fixtures = synthesize(_entry(code, "grad_norms"))
    roles = {a.name: a.spec.params.get("role") for a in fixtures.cases[0].args}
    assert roles == {"model": "net", "loader": "loader", "loss_fn": "criterion"}


def test_a_parameter_handed_to_a_helper_imported_from_another_module_is_what_that_helper_uses_it_as(
        tmp_path) -> None:
    from paperproof.catalogue.classes import RepoClasses
    from paperproof.catalogue.extract import extract_repo
    from paperproof.fixtures.synth import _decider

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "norm.py").write_text("import torch.nn.functional as F\n\n"
                                              "def to_probs(raw_logits):\n    return F.softmax(raw_logits, dim=-1)\n")
    (tmp_path / "pkg" / "score.py").write_text("from pkg.norm import to_probs\n\n"
                                               "def confidence(x, y):\n    return to_probs(x).max(-1).values\n")
    (entry,) = [e for e in extract_repo(tmp_path, "o/r").entries if e.name == "confidence"]
    decider = _decider(entry, [], RepoClasses(tmp_path, entry.sys_path, "o/r"))
    spec = decider.spec(next(p for p in entry.params if p.name == "x"))
    assert not isinstance(spec, str) and spec.kind == "logits"  # the helper's F.softmax names logits, over `x`'s name
    assert decider.found["x"].why.startswith("the body uses it as logits: it is handed to `to_probs()`")
    without = _decider(entry, [])  # with no way to read the other module, the name decides
    assert without.spec(next(p for p in entry.params if p.name == "x")).kind == "scores"


RECORDER = """
    def _note_eval(log, step, loss, acc):
        log.eval_steps.append(step)
        log.eval_losses.append(loss)
        log.by_step.update({step: acc})
        return log

    def evaluate(scores, log, epoch_size):
        loss = float(scores.mean())
        return _note_eval(log, epoch_size, loss, 1.0 - loss)
    """


def test_an_options_attribute_the_code_appends_to_is_an_empty_list():
    fixtures = synthesize(_entry(RECORDER, "evaluate"))
    (log,) = [a for a in fixtures.cases[0].args if a.name == "log"]
    attrs = log.spec.params["attrs"]
    assert log.spec.kind == "namespace"
    assert (attrs["eval_steps"], attrs["eval_losses"], attrs["by_step"]) == ([], [], {})


RECORD_CALLER = """
    from tracker import SampleGrads

    def train(model, loader, epochs):
        tracker = SampleGrads(len(loader.dataset))
        for epoch in range(epochs):
            for batch in loader:
                hidden, labels = model.embed(batch["x"]), batch["y"]
                tracker.update(model_inputs={"features": hidden, "labels": labels}, ids=batch["idx"])
        return tracker.compute_scores()
    """


def test_a_dict_the_repository_builds_at_its_call_is_given_with_the_same_keys_holding_the_runs_values():
    from paperproof.catalogue.callsites import find_call_sites
    from paperproof.fixtures.values import materialize

    code = """
        class SampleGrads:
            def __init__(self, total_samples):
                self.norms = [0.0] * total_samples

            def update(self, model_inputs, ids):
                self.feats = model_inputs["features"]

            def compute_scores(self):
                return self.norms
        """
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "tracker.py").write_text(textwrap.dedent(code))
        (Path(root) / "train.py").write_text(textwrap.dedent(RECORD_CALLER))
        tracker = _entry(code, "SampleGrads").model_copy(update={"path": "tracker.py", "module": "tracker"})
        sites = find_call_sites(Path(root), [tracker])["tracker.py::SampleGrads"]
        fixtures = synthesize(tracker, root, sites=sites)
    (inputs,) = [a for a in fixtures.cases[0].method_args["update"] if a.name == "model_inputs"]
    assert inputs.spec.kind == "record" and inputs.spec.params["roles"] == {"features": "x", "labels": "targets"}
    (said,) = [e for e in fixtures.evidence if e.param == "model_inputs"]
    assert said.source == "call_site" and said.path == "train.py"
    case = fixtures.cases[0].model_dump(mode="json")
    made = materialize(inputs.spec.model_dump(mode="json"), case)
    assert set(made) == {"features", "labels"} and made["labels"].shape == (case["dims"]["N"],)
