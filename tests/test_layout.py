"""Arguments shaped by the code's own use of them, read with `ast`; the alternatives worth a retry."""

from __future__ import annotations

import numpy as np

from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.layout import alternatives
from paperproof.fixtures.synth import synthesize
from paperproof.fixtures.values import case_dynamics, materialize


def entry(code: str):
    (found,) = extract_module(code, repo="o/r", path="m.py")
    return found


def value(fixtures, name, case=0):
    case = fixtures.cases[case]
    arg = next(a for a in case.args if a.name == name)
    return materialize(arg.spec.model_dump(), case.model_dump())


def test_indexing_two_axes_gives_one_epoch_of_samples_by_classes():
    code = ("import numpy as np\n"
            "def ood(logits):\n"
            "    z = np.asarray(logits, dtype=np.float64)\n"
            "    p = np.exp(z - z.max(axis=1, keepdims=True))\n"
            "    p = p / p.sum(axis=1, keepdims=True)\n"
            "    return p[:, 0] - p[:, 1:].max(axis=1)\n")
    fixtures = synthesize(entry(code))
    got = value(fixtures, "logits")
    dims = fixtures.cases[0].dims
    assert got.shape == (dims["N"], dims["C"])
    logits, _ = case_dynamics(fixtures.cases[0].model_dump())
    assert np.allclose(got, logits[-1], atol=1e-6)  # the last recorded epoch
    assert any("[N, C] (one epoch)" in c and "p[:, 0]" in c for c in fixtures.choices)


def test_three_axes_keep_the_default_layout():
    fixtures = synthesize(entry("def f(logits, labels):\n    return logits[:, :, 0]\n"))
    assert value(fixtures, "logits").ndim == 3 and fixtures.choices == []


def test_shape_unpacking_says_the_rank():
    fixtures = synthesize(entry("def f(correct):\n    n, = correct.shape\n    return correct\n"))
    assert value(fixtures, "correct").ndim == 1


def test_torch_layers_ask_for_float32_and_view_for_a_tensor():
    code = ("import torch\n"
            "def head(scores):\n"
            "    layer = torch.nn.Linear(1, 1)\n"
            "    return layer(scores.view(-1, 1))\n")
    fixtures = synthesize(entry(code))
    got = value(fixtures, "scores")
    assert type(got).__name__ == "Tensor" and str(got.dtype) == "torch.float32"
    assert any("float32" in c for c in fixtures.choices) and any("scores.view" in c for c in fixtures.choices)


def test_a_folder_name_gets_no_made_up_string():
    fixtures = synthesize(entry("import os\ndef check_folder_exist(folder_name: str):\n    os.makedirs(folder_name)\n"))
    assert not fixtures.cases
    assert "folder or file" in fixtures.missing[0].reason


def test_namespace_bounds_are_sized_to_each_case():
    fixtures = synthesize(entry("def f(training_dynamics, args):\n    return args.burn_out\n"))
    for index, case in enumerate(fixtures.cases):
        assert value(fixtures, "args", index).burn_out == case.dims["E"]


def test_alternatives_change_one_layout_or_dtype_at_a_time():
    fixtures = synthesize(entry("def f(logits, labels):\n    pass\n"))
    found = alternatives(fixtures)
    words = [w for w, _ in found]
    assert words[0] == "`logits` as [N, E, C]" and "`logits` as [N, C] (one epoch)" in words
    assert "`logits` as float64" in words
    for _, alt in found:
        changed = [a for a, b in zip(alt.cases[0].args, fixtures.cases[0].args) if a != b]
        assert len(changed) == 1 and len(alt.cases) == len(fixtures.cases)


def test_a_parameter_documented_as_one_epoch_gets_one_epoch():
    code = ('def f(probs, labels):\n    """Margins.\n\n    Args:\n'
            '        probs: softmax outputs, shape (n_samples, n_classes)\n        labels: gold labels\n    """\n'
            '    return probs\n')
    fixtures = synthesize(entry(code))
    assert value(fixtures, "probs").shape == (fixtures.cases[0].dims["N"], fixtures.cases[0].dims["C"])
    assert any("its docstring says" in c for c in fixtures.choices)


def test_double_precision_code_gets_float64():
    code = "import torch\ndef f(logits: torch.Tensor):\n    head = torch.nn.Linear(3, 1).double()\n    return head(logits)\n"
    got = value(synthesize(entry(code)), "logits")
    assert str(got.dtype) == "torch.float64"


def test_a_string_the_code_refuses_by_name_gets_the_values_it_compares_with():
    code = ('def order(metric: str) -> bool:\n    if metric == "variability":\n        return False\n'
            '    elif metric.lower() in ("confidence", "correctness"):\n        return True\n'
            '    raise NotImplementedError(f"Filtering based on {metric} not implemented!")\n')
    fixtures = synthesize(entry(code))
    assert [value(fixtures, "metric", i) for i in range(4)] == ["variability", "confidence", "correctness", "variability"]
    assert any("the code compares it with ('variability', 'confidence', 'correctness')" in c for c in fixtures.choices)


def test_a_string_compared_without_a_refusal_keeps_our_odd_values():
    code = 'def str2bool(v: str) -> bool:\n    if v.lower() in ("yes", "true"):\n        return True\n    return v\n'
    fixtures = synthesize(entry(code))
    assert value(fixtures, "v", 2) == "maybe" and fixtures.choices == []


def test_values_read_per_sample_beside_the_dynamics_are_keyed_by_the_same_ids():
    code = ("import numpy as np\n"
            "def summarise(training_dynamics, tags, source_row):\n"
            "    out = []\n"
            "    for uid, rec in training_dynamics.items():\n"
            "        mean = float(np.mean(rec['logits']))\n"
            "        out.append((uid, mean, tags[uid]['negation'], tags[uid]['overlap'], source_row[uid]))\n"
            "    return out\n")
    fixtures = synthesize(entry(code))
    assert fixtures.missing == []
    dynamics, tags, rows = (value(fixtures, name) for name in ("training_dynamics", "tags", "source_row"))
    assert list(tags) == list(dynamics) == list(rows)
    assert all(set(v) == {"negation", "overlap"} and set(v.values()) <= {0, 1} for v in tags.values())
    assert list(rows.values()) == list(range(len(dynamics)))
    assert any("`tags` is given as a dict keyed by the ids of `training_dynamics`" in c for c in fixtures.choices)


def test_a_parameter_read_by_another_key_is_a_mapping_of_that_key_not_keyed_by_sample():
    code = ("def pick(training_dynamics, lookup):\n"
            "    return [lookup['fixed'] for guid in training_dynamics]\n")
    fixtures = synthesize(entry(code))
    assert fixtures.missing == []
    assert set(value(fixtures, "lookup")) == {"fixed"}  # what the body reads, not the ids of the dynamics
    (found,) = [e for e in fixtures.evidence if e.param == "lookup"]
    assert found.source == "use" and "`lookup['fixed']` (line 2)" in found.why


def test_a_mask_may_be_tried_as_a_flag_per_epoch_and_sample():
    fixtures = synthesize(entry("def first_forgotten(mask):\n    return mask.argmin(0)\n"))
    found = dict(alternatives(fixtures))
    alt = found["`mask` as per-epoch flags [E, N]"]
    assert alt.cases[0].args[0].spec.kind == "correct" and alt.cases[0].args[0].spec.params["layout"] == "EN"
    flags = value(alt, "mask")
    assert flags.shape == (alt.cases[0].dims["E"], alt.cases[0].dims["N"]) and set(np.unique(flags)) <= {0, 1}
    assert "`mask` as per-epoch flags [N, E]" in found
