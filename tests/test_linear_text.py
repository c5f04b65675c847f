"""Every reader of repository text takes time linear in it (issue 44): a docstring, a name, a README, a line of
source or a sample's exception message crafted for a pattern's worst case (long runs of what it almost matches,
unclosed brackets, a prefix repeated) costs at 1,000 times a normal size at most about 100 times what it costs at 10.

Each reader is timed in CPU seconds (`_cpu`) at 10x, 100x and 1,000x, side by side in the same test, and allowed `SLACK`
times the linear growth plus `FLOOR`: a busy machine cannot flip that, while a quadratic reader (10,000 times at
1,000x) fails, and is stopped by a CPU-time alarm once past its allowance rather than running for an hour."""

from __future__ import annotations

import ast
import gc
import re
import signal
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.catalogue import evidence, select
from paperproof.catalogue.entry import Entry, Param
from paperproof.catalogue.extract import extract_module
from paperproof.catalogue.fixture_case import FixtureArg, FixtureCase, FixtureSet, ValueSpec
from paperproof.catalogue.licence import identify
from paperproof.catalogue.run_result import CaseOutcome, ExceptionInfo, RunResult
from paperproof.fixtures import feedback, layout, protocol, synth
from paperproof.runner import cuda_on_cpu, legacy_numpy
from paperproof.verify import contracts, departures, made_up, verdict

SLACK = 4  # times the linear growth a reader may take
FLOOR = 0.05  # CPU seconds any size may take on top (a timer tick, a collection)
SCALES = (10, 100, 1000)
NOT_A_WORD = "x\u0301"  # ends an identifier (a combining mark is a name character, not `\w`), and a `\w` run with it


class _OverBudget(Exception):
    """The CPU-time alarm: the reader went past what a linear one could take."""


def _cpu(read: Callable[[], object], budget: float | None = None) -> float:
    """CPU seconds `read()` takes, garbage collection held off; past `budget` it is stopped (SIGPROF counts this
    process's CPU time, and the regex engine checks for signals as it runs) and the time is infinite. The time is
    this thread's (`time.thread_time`): once a process CPU timer has been armed, Linux reads the process's clock
    (`time.process_time`) to the scheduler tick only, and a 10x run of half a millisecond reads as 0 or 4 ms."""
    def stop(signum: int, frame: object) -> None:
        raise _OverBudget

    collecting = gc.isenabled()
    previous = signal.signal(signal.SIGPROF, stop) if budget else None
    gc.disable()
    start = time.thread_time()
    try:
        if budget:
            signal.setitimer(signal.ITIMER_PROF, budget)
        read()
    except _OverBudget:
        return float("inf")
    finally:
        if budget:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
        if collecting:
            gc.enable()
    return time.thread_time() - start


def growth(read: Callable[[str], object], make: Callable[[int], str]) -> dict[int, float]:
    """CPU seconds `read(make(scale))` takes at each of `SCALES` (the smallest, the median of five); a larger scale
    stops at its allowance over the smallest, so a quadratic reader reports infinity there."""
    read(make(1))  # patterns compiled, modules imported
    texts = {scale: make(scale) for scale in SCALES}
    small = sorted(_cpu(lambda: read(texts[SCALES[0]])) for _ in range(5))[2]
    took = {SCALES[0]: small}
    for scale in SCALES[1:]:
        text = texts[scale]
        over = took[scale // 10] == float("inf")  # past its allowance at the scale before: not run again
        took[scale] = float("inf") if over else _cpu(lambda: read(text), budget=allowance(small, scale))  # noqa: B023
    return took


def allowance(small: float, scale: int) -> float:
    return SLACK * scale / SCALES[0] * small + FLOOR


def _entry(source: str, **fields: object) -> Entry:
    return Entry.model_validate({"repo": "o/r", "path": "m.py", "module": "m", "name": "f", "qualname": "f",
                                 "kind": "function", "lineno": 1, "end_lineno": source.count("\n") + 1,
                                 "source": source, "closure": source, "code_sha256": "0" * 64, **fields})


def _raised(kind: str, message: str) -> RunResult:
    return RunResult(code_sha256="x", fixture_digest="y", runner_version="z", end="completed", cases=[
        CaseOutcome(case_id="a", outcome="raised", exception=ExceptionInfo(type=kind, message=message))])


_ARGS = [FixtureArg(name="trace", spec=ValueSpec(kind="literal", params={"value": 0.5})),
         FixtureArg(name="probs", spec=ValueSpec(kind="probs")),
         FixtureArg(name="opts", spec=ValueSpec(kind="namespace", params={"attrs": {"out": "yes"}})),
         FixtureArg(name="stats", spec=ValueSpec(kind="dict_str_float", params={"keys": ["conf"]}))]
_FIXTURES = FixtureSet(version="t", cases=[FixtureCase(case_id="a", seed=1, args=_ARGS)])
_OPTIONAL = {"features": _ARGS[1], "aaaa": None}


def _refine(kind: str) -> Callable[[str], object]:
    return lambda message: feedback.refine(_FIXTURES, _raised(kind, message), optional=_OPTIONAL)


def _gather(source: str) -> object:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef | ast.ClassDef)
    return evidence.gather(node)


def _spec(field: str) -> Callable[[str], object]:
    """`synth.spec_for` of a parameter whose name, or whose docstring line (its name says nothing), is the text."""
    return lambda text: synth.spec_for(Param(name=text) if field == "name" else Param(name="q", doc=text))


def _layout(doc: str) -> object:
    return layout.refine(_entry("def f(probs):\n    return probs\n", params=[Param(name="probs", doc=doc)]),
                         [_ARGS[1]])


# (what reads, the reader, the text at a scale): each text is what its patterns almost match, repeated.
READERS: list[tuple[str, Callable[[str], object], Callable[[int], str]]] = [
    ("evidence: a parameter named `_softmax` repeated", lambda name: _gather(f"def f({name}):\n    return 1\n"),
     lambda n: "_softmax_train_dyn" * 10 * n + NOT_A_WORD),
    ("evidence: a string constant of `_pred` repeated compared with labels",
     lambda text: _gather(f"def f(y):\n    return y == '{text}'\n"), lambda n: "_pred" * 40 * n + "!"),
    ("evidence: a base class of `For` repeated", lambda name: _gather(f"class A({name}):\n    pass\n"),
     lambda n: "ForNetDataset" * 15 * n + NOT_A_WORD),
    ("synth: a parameter named `prob` repeated", _spec("name"), lambda n: "probconf" * 25 * n),
    ("synth: a docstring of `probabilit` repeated", _spec("doc"), lambda n: "probabilit" * 20 * n),
    ("synth: a docstring of unclosed shapes", _spec("doc"), lambda n: "(n, k, e, " * 20 * n + "((  [ , " * 5 * n),
    ("synth: a docstring type after spaces", _spec("doc"), lambda n: " " * 200 * n + "integer-"),
    ("layout: a docstring of unclosed one-epoch shapes", _layout,
     lambda n: "(n_samples , " * 15 * n + "B " + " " * 100 * n + "x"),
    ("protocol: `prob = ` a call of `net` repeated",
     lambda text: protocol.reads_probabilities(_entry(f"def f(x):\n    prob = {text}\n")),
     lambda n: "net" * 60 * n + "[0]"),
    ("protocol: parameter roles of a long name",
     lambda name: protocol.param_spec(Param(name=name, annotation=name), in_hook=True, files=True),
     lambda n: "a_model_loader_" * 12 * n + "dset"),
    ("feedback: a message of `expected ` repeated", _refine("RuntimeError"), lambda n: "expected 2-d " * 10 * n),
    ("feedback: a message of bounds that never close", _refine("ValueError"),
     lambda n: "trace  must be greater than or equal to" * 3 * n + " trace" + " " * 100 * n + "<"),
    ("feedback: a message naming our parameters inside longer words", _refine("TypeError"),
     lambda n: "featuresfeatures aaaaaaaa.aaaa must be a numpy " * 3 * n),
    ("feedback: an attribute message of dotted types", _refine("AttributeError"),
     lambda n: "'" + "numpy.ndarray." * 10 * n + "' object has no attribute"),
    ("feedback: a key message with no closing quote", _refine("KeyError"), lambda n: "'" + "conf " * 30 * n),
    ("verdict: a message of `expected ` and `shape ` repeated",
     lambda message: verdict.at_boundary(ExceptionInfo(type="RuntimeError", message=message)),
     lambda n: "expected shapes " * 10 * n),
    ("made_up: a message of our values inside longer words",
     lambda message: made_up.refused(_FIXTURES.cases[0], ExceptionInfo(type="ValueError", message=message)),
     lambda n: "yesyes 'out out/" * 10 * n),
    ("contracts: a Returns section of unclosed `shape (`",
     lambda doc: contracts.draft(_entry("def f():\n    return 1\n", returns_doc=doc)),
     lambda n: "shape (" * 20 * n + "within [ 0" * 5 * n),
    ("contracts: a Returns section of one long type", contracts.doc_types, lambda n: "np.ndarray." * 15 * n + ":"),
    ("departures: code lines of almost-markers",
     lambda source: departures.locate(_entry(source), "never0_count"),
     lambda n: ("x = 0 " + " " * 60 + "= 1\n") * 2 * n),
    ("select: a README that names the entry inside longer words",
     lambda readme: select.score(_entry("def f():\n    pass\n", name="score_hard"), {"probability"}, readme),
     lambda n: "score_har score_hardx xscore_hard scoreHard " * 4 * n),
    ("licence: `SPDX-License-Identifier:` with no identifier, repeated", identify,
     lambda n: "SPDX-License-Identifier:" + " " * 20 * n + "@ " + "SPDX-License-Identifier: :" * 4 * n),
    ("runner: `.to(` and `np.` repeated", lambda source: (cuda_on_cpu.mentions_cuda(source), legacy_numpy.used(source)),
     lambda n: (".to(" + " " * 20 + "np.float_x numpy.") * 5 * n),
]


@pytest.mark.parametrize(("what", "read", "make"), READERS, ids=[r[0] for r in READERS])
def test_a_reader_of_repository_text_takes_time_linear_in_it(what: str, read: Callable[[str], object],
                                                             make: Callable[[int], str]) -> None:
    took = growth(read, make)
    small = took[SCALES[0]]
    for scale in SCALES[1:]:
        assert took[scale] <= allowance(small, scale), (
            f"{what}: {scale}x took {took[scale]:.3f} s of CPU against {small:.4f} s at {SCALES[0]}x, past "
            f"{SLACK} times linear growth ({len(make(scale)):,} characters)")


# Docstrings read by `catalogue.extract` for parameter lines: `:param` lines (a name, spaces without end, a word with
# no colon), which took cubic time before issue 44, and an Args section's line of the same, quadratic before.
EXTRACT_DOCSTRINGS = [(":param", lambda n: (":param a" + " " * 40 * n + "b\n") * 2),
                      ("Args:", lambda n: "Args:\n" + ("    a" + " " * 40 * n + "b\n") * 2)]


@pytest.mark.parametrize(("what", "make"), EXTRACT_DOCSTRINGS, ids=[d[0] for d in EXTRACT_DOCSTRINGS])
def test_a_docstring_read_for_parameter_lines_takes_time_linear_in_it(what: str, make: Callable[[int], str]) -> None:
    def read(doc: str) -> object:
        return extract_module(f'def f(a, b):\n    """{doc}"""\n    return a\n', repo="o/r", path="m.py")

    took = growth(read, make)
    for scale in SCALES[1:]:
        assert took[scale] <= allowance(took[SCALES[0]], scale), f"{what}: {took}"


# The plain forms of the patterns rewritten for issue 44, to check on short texts (where their backtracking costs
# nothing) that the rewritten ones match exactly what they did.
PLAIN = [
    (evidence._TAKES[0][1], r"^(\w*_)?(logits?|probs?|probabilit(y|ies)|preds?|predictions?|outputs?|y_preds?|"
                            r"pred_probs|softmax\w*|scores?)$", re.I, "match",
     ["_", "softmax", "pred", "probs", "y_", "logit", "s", "a", "!", "\n", "x\u0301"]),
    (evidence._TAKES[1][1], r"^(y|y_\w+|\w*_?labels?|\w*_?targets?|golds?|gold_\w+|truth|ground_truth)$", re.I, "match",
     ["_", "y", "label", "s", "target", "gold", "truth", "!", "\n", " "]),
    (evidence._TAKES[4][1], r"^(\w*_)?(training_dynamics|train_dyn\w*|dynamics|td)$", re.I, "match",
     ["_", "train", "_dyn", "training", "dynamics", "td", "!", "\n", "a"]),
    (evidence._PREDISH, r"^(\w*_)?(pred\w*|argmax\w*|predicted)$", re.I, "match",
     ["_", "pred", "argmax", "predicted", "!", "\n", "a", "."]),
    (evidence._MODEL_BASES, r"^(Module|Model|Layer|Sequential|PreTrainedModel|LightningModule|\w+For\w+|"
                            r"\w*(Model|Net|Network))$", 0, "match",
     ["For", "Model", "Net", "Network", "a", "!", "\n", "Module", "_", "."]),
    (evidence._DATASET_BASES, r"^(Dataset|IterableDataset|DataProcessor|Sequence|\w*Dataset|\w*Processor)$", 0, "match",
     ["Dataset", "Processor", "Sequence", "Iterable", "a", "!", "\n", "."]),
    (re.compile(synth.NAME_RULES[5].pattern), r"^\w*(prob|conf|gold)\w*_(trend|history)$", 0, "match",
     ["prob", "conf", "gold", "_", "trend", "history", "a", "!", "\n", "pro", "b", "_tr", "end"]),
    (re.compile(synth.DOC_RULES[2].pattern), r"gold[- ]label probabilit|probabilit\w* of the (gold|true)", 0, "search",
     ["probabilit", "ies", "y", " of the ", "gold", "true", " ", "a", "_", ".", "gold label ", "x"]),
    (protocol.READS_PROBABILITIES, r"\bprob\w*\s*=\s*(self\.)?\w*(net|model|network|clf|classifier)\w*\(", 0, "search",
     ["prob", "s", " ", "=", "self.", "self", ".", "net", "model", "clf", "(", "x", "_", "\n", "prob = "]),
    (verdict.FIXTURE_FAULT, r"dtype|scalar type|expected .*(Float|Double|Half|Long)|(Float|Double|Long) but found"
                            r"|mat1 and mat2|shapes? .*(cannot be|not aligned|mismatch)|size mismatch"
                            r"|must match the size|expected .*dim|too many indices|operands could not be broadcast"
                            r"|cannot reshape|invalid for input of size|expected \dD \(unbatched\)|input to conv\dd"
                            r"|number of sizes provided|dimensions of the array must be|must be square", re.I, "search",
     ["expected ", "Float", "dim", "shape", "s", " ", "shapes ", "mismatch", "\n", "x", "Long", "Expected "]),
]


@pytest.mark.parametrize(("rewritten", "plain", "flags", "how", "pieces"), PLAIN,
                         ids=[p[1][:40] for p in PLAIN])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_rewritten_pattern_matches_what_its_plain_form_matched(rewritten: re.Pattern[str], plain: str, flags: int,
                                                                 how: str, pieces: list[str], data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=10)))
    assert (getattr(rewritten, how)(text) is None) == (getattr(re.compile(plain, flags), how)(text) is None), text
