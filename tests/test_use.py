"""What a parameter is, from how the body uses it (not from its name)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from paperproof.fixtures.use import read


def _kinds(source: str) -> dict[str, str | None]:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.ClassDef))
    names = {a.arg for n in ast.walk(node) if isinstance(n, ast.FunctionDef) for a in n.args.args} - {"self"}
    return {name: use.kind for name, use in read(node, names).items()}


@pytest.mark.parametrize(("source", "expected"), [
    ("""
     def score_run(dst_train, net_a, dev):
         net_a.eval()
         for inputs, targets in dst_train:
             out = net_a(inputs.to(dev))
     """, {"dst_train": "iterable_of_tuples", "net_a": "model"}),
    ("""
     def per_batch(batch_input):
         for item in batch_input:
             x, y, idx = item
     """, {"batch_input": "iterable_of_tuples"}),
    ("""
     def flips(loss_mtx, q):
         drops = loss_mtx[:, 1:] > loss_mtx[:, :-1]
         return drops.sum(axis=1) / q.n_epochs
     """, {"loss_mtx": "array", "q": "namespace"}),
    ("""
     def by_guid(diag_stats):
         return {k: v['conf'] for k, v in diag_stats.items()}
     """, {"diag_stats": "mapping"}),
    ("""
     def ce(outs, gold):
         return torch.nn.functional.cross_entropy(outs, gold, reduction='none')
     """, {"outs": "logits", "gold": "labels"}),
    ("""
     def fit(sched, seconds):
         for _ in range(seconds):
             sched.step()
     """, {"sched": "optimizer", "seconds": "int"}),
    ("""
     def table(frame_in):
         return frame_in.groupby('label').mean()
     """, {"frame_in": "dataframe"}),
    ("""
     class Tracker:
         def __init__(self, src_loader, n_out):
             self.src_loader = src_loader
         def update(self):
             for x, y in self.src_loader:
                 pass
     """, {"src_loader": "iterable_of_tuples", "n_out": None}),
    ("""
     def sharpen(raw, temp, base):
         return (raw / temp).softmax(1) - base
     """, {"temp": "number", "base": "arith"}),  # a divisor is a number; what is subtracted may be an array
])
def test_use_names_the_kind_whatever_the_parameter_is_called(source: str, expected: dict[str, str | None]) -> None:
    kinds = _kinds(source)
    assert {name: kinds[name] for name in expected} == expected


def test_each_finding_says_the_line_that_shows_it() -> None:
    node = ast.parse("def f(masks):\n    total = 0\n    return masks[:, 0].sum()\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    found = read(node, {"masks"})["masks"]
    assert found.kind == "array" and found.rank == 2
    assert found.why == "`masks[:, 0]` (line 3)"


def test_namespace_attributes_are_listed_for_the_fixture() -> None:
    node = ast.parse("def f(opts):\n    return opts.lr * opts.warmup_steps + opts.lr\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    assert read(node, {"opts"})["opts"].attrs == ["lr", "warmup_steps"]
