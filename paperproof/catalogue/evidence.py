"""What an entry's code does, read from its `ast`, so selection can pick by behaviour, not by name.

A researcher picks a hardness metric by what it computes: it takes per-sample predictions (logits,
probabilities, a data loader, a model, one sample's trend over epochs), works on them with the
operations these metrics are made of (softmax, the gold label's probability, argmax against the
label, a spread or mean along an axis, gradients, margins, per-sample losses) and returns or records
one value per sample. What speaks against an entry is read the same way: a model definition, a
training loop, an entry point or argument parser, an abstract base whose methods do nothing,
plotting, file I/O, dataset-level scores. Nothing here looks at the entry's own name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

# Parameters by what they hold, as research code names them. A name pattern with a `\w` run opens with
# `(?=\w*+$)`: a name of word characters only, the only text it can match, checked once. Without it a `\w*` tail
# (`softmax\w*`) rescanned the rest of the text from every `_` before it: quadratic on a string constant of `_pred`
# repeated and a non-word character (`_Subtrees` reads constants too).
_TAKES = (
    ("predictions", re.compile(r"^(?=\w*+$)(\w*_)?(logits?|probs?|probabilit(y|ies)|preds?|predictions?|outputs?|"
                               r"y_preds?|pred_probs|softmax\w*|scores?)$", re.I)),
    ("labels", re.compile(r"^(?=\w*+$)(y|y_\w+|\w*_?labels?|\w*_?targets?|golds?|gold_\w+|truth|ground_truth)$", re.I)),
    ("a data loader", re.compile(r"^(?=\w*+$)(\w*_)?(data_?loader|loader|dataset|dl)$", re.I)),
    ("a model", re.compile(r"^(model|net|network|classifier|learner)$", re.I)),
    ("training dynamics", re.compile(r"^(?=\w*+$)(\w*_)?(training_dynamics|train_dyn\w*|dynamics|td)$", re.I)),
    ("one sample's trend", re.compile(r"^(?=\w*+$)(\w*_)?(trend|history)$", re.I)),
)
_LABELISH = _TAKES[1][1]
_PREDISH = re.compile(r"^(?=\w*+$)(\w*_)?(pred\w*|argmax\w*|predicted)$", re.I)
_PROBISH = re.compile(r"prob|logit|softmax|output|pred|score|conf", re.I)
_LABEL_KEYS = frozenset({"gold", "label", "labels", "target", "targets", "y"})

_REDUCTIONS = frozenset({"sum", "mean", "std", "var", "max", "min", "amax", "amin", "norm", "nanmean", "nanstd",
                         "median", "logsumexp", "average", "count_nonzero"})
_HOOKS = frozenset({"update", "updates", "on_epoch_end", "on_batch_end", "on_train_batch_end", "on_epoch_begin",
                    "on_step_end", "record", "accumulate", "add", "log", "step", "__call__", "observe", "collect",
                    "on_train_epoch_end", "track"})
LIBRARIES = frozenset({"aum", "cleanlab", "data_iq", "dataiq", "datamaps", "datamap"})
_PLOT_MODULES = frozenset({"plt", "pyplot", "sns", "seaborn", "matplotlib", "plotly", "px", "go", "bokeh"})
_PLOT_CALLS = frozenset({"savefig", "scatterplot", "kdeplot", "lineplot", "histplot", "barplot", "heatmap",
                         "subplots", "imshow"})
_IO_CALLS = frozenset({"open", "to_csv", "read_csv", "to_json", "read_json", "to_pickle", "read_pickle", "savez",
                       "save", "load", "dump", "dumps", "makedirs", "listdir", "mkdir", "remove", "rmtree",
                       "load_state_dict", "from_pretrained", "save_pretrained", "loadtxt", "savetxt", "glob"})
_IO_MODULES = frozenset({"json", "pickle", "os", "shutil", "csv", "h5py", "joblib"})
_AGGREGATE_CALLS = frozenset({"accuracy_score", "f1_score", "precision_score", "recall_score", "roc_auc_score",
                              "average_precision_score", "matthews_corrcoef", "pearsonr", "spearmanr",
                              "simple_accuracy", "acc_and_f1", "classification_report", "confusion_matrix",
                              "roc_curve", "precision_recall_curve", "auc", "kendalltau", "glue_compute_metrics",
                              "compute_metrics", "pearson_and_spearman"})
_MODEL_BASES = re.compile(r"^(?=\w*+$)(Module|Model|Layer|Sequential|PreTrainedModel|LightningModule|\w+For\w+|"
                          r"\w*(Model|Net|Network))$")  # the guard of `_TAKES`: `For` repeated rescanned the rest
_DATASET_BASES = re.compile(r"^(?=\w*+$)(Dataset|IterableDataset|DataProcessor|Sequence|\w*Dataset|\w*Processor)$")


SPREAD, MEAN = "a spread over epochs (std)", "a mean along an axis"
WEAK = frozenset({SPREAD, MEAN})  # common outside hardness code too: they count half
PLOTTING, FILE_IO = "plotting", "file I/O"
AGGREGATE = "dataset-level scores (accuracy, F1, AUROC, correlation)"


class Evidence(BaseModel):
    """What the code of one entry does, as phrases a page can print, and what speaks against it.

    `does` names the operations hardness metrics are made of; `takes` what its parameters hold;
    `per_sample` how it yields one value per sample; `against` what scores it down; `excluded`
    why it is never a sample to pick (a model definition, a training loop, an entry point);
    `calls` the bare names it calls, `returns_calls` those whose result it returns, and `bases`
    its base classes, which selection resolves against the rest of the repository.
    """

    model_config = ConfigDict(frozen=True)

    does: list[str] = Field(default_factory=list)
    takes: list[str] = Field(default_factory=list)
    per_sample: str | None = None
    against: list[str] = Field(default_factory=list)
    excluded: str | None = None
    calls: list[str] = Field(default_factory=list)
    returns_calls: list[str] = Field(default_factory=list)
    bases: list[str] = Field(default_factory=list)


def _tail(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


# What a node's subtree holds, as bits: a name (a `Name`, an attribute, a string constant) that reads as a prediction,
# as labels, as probabilities (or one bound to a softmax), one bound to a maximum; a call of `log`; a labels
# expression (a labels name or attribute, or `record["gold"]`).
_PRED, _LABEL, _PROB, _MAX, _LOG, _LABEL_EXPR = 1, 2, 4, 8, 16, 32


class _Subtrees:
    """What each node's subtree holds (`_PRED` ...), and the head of each call's dotted name, made in one pass from
    the leaves up. Asking each node walked its subtree: quadratic in the nesting of an expression (`m - a - b - ...`
    of a few thousand terms took seconds per entry)."""

    def __init__(self, nodes: list[ast.AST], softmaxed: set[str], maxima: set[str]) -> None:
        self.flags: dict[int, int] = {}
        heads: dict[int, tuple[str, bool]] = {}  # id -> (first part of its dotted name, whether it has a dot)
        for node in reversed(nodes):  # `ast.walk` is breadth-first: every node comes after its parent
            found = 0
            for child in ast.iter_child_nodes(node):
                found |= self.flags[id(child)]
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
                node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
            if name is not None:
                found |= (_PRED if _PREDISH.match(name) or name == "argmax" else 0) \
                    | (_LABEL if _LABELISH.match(name) or name in _LABEL_KEYS else 0) \
                    | (_PROB if _PROBISH.search(name) or name in softmaxed else 0) | (_MAX if name in maxima else 0)
                if not isinstance(node, ast.Constant) and _LABELISH.match(name):
                    found |= _LABEL_EXPR
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and node.slice.value in _LABEL_KEYS:
                found |= _LABEL_EXPR
            if isinstance(node, ast.Call) and _tail(node.func) == "log":
                found |= _LOG
            self.flags[id(node)] = found
            if isinstance(node, ast.Name):
                heads[id(node)] = (node.id, False)
            elif isinstance(node, ast.Attribute):
                heads[id(node)] = (heads.get(id(node.value), ("", False))[0], True)
            elif isinstance(node, ast.Call):
                head, dotted = heads.get(id(node.func), ("", False))
                heads[id(node)] = (head if dotted else "()", dotted)  # `f()` is no module: its head is never one
        self.heads = {key: head for key, (head, _) in heads.items()}

    def has(self, node: ast.AST, bits: int) -> bool:
        return bool(self.flags[id(node)] & bits)

    def hits(self, node: ast.AST) -> bool:
        """`prediction == label`: the argmax prediction compared with the gold label."""
        return isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops) \
            and self.has(node, _PRED) and self.has(node, _LABEL)

    def head(self, func: ast.expr) -> str:
        """The first part of the dotted name a call calls (`np` of `np.linalg.norm`), "" when it has none."""
        return self.heads.get(id(func), "")


def _autograd_grad(func: ast.expr) -> bool:
    """A call's dotted name ends `autograd.grad` (`torch.autograd.grad`)."""
    if not (isinstance(func, ast.Attribute) and func.attr == "grad"):
        return False
    value = func.value
    return isinstance(value, ast.Name) and value.id.endswith("autograd") or \
        isinstance(value, ast.Attribute) and value.attr.endswith("autograd")


def _shifted(left: ast.expr, right: ast.expr) -> bool:
    """`x[1:] - x[:-1]`: one sequence against itself shifted by one step."""
    if not (isinstance(left, ast.Subscript) and isinstance(right, ast.Subscript)):
        return False
    if ast.unparse(left.value) != ast.unparse(right.value):
        return False
    return isinstance(left.slice, ast.Slice) and isinstance(right.slice, ast.Slice) and \
        ast.unparse(left.slice) != ast.unparse(right.slice)


def _assigned_from(nodes: list[ast.AST], tails: frozenset[str]) -> set[str]:
    """Names bound (directly or by unpacking) to the result of a call whose name is in `tails`."""
    names: set[str] = set()
    for sub in nodes:
        if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) and _tail(sub.value.func) in tails:
            names |= {n.id for t in sub.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _axis_given(call: ast.Call) -> bool:
    if any(k.arg in ("axis", "dim") and not (isinstance(k.value, ast.Constant) and k.value.value is None)
           for k in call.keywords):
        return True
    # torch style `.sum(1)` / `.mean(-1)`: an integer positional argument to a method.
    return isinstance(call.func, ast.Attribute) and any(
        isinstance(a, ast.Constant) and isinstance(a.value, int) or
        isinstance(a, ast.UnaryOp) and isinstance(a.operand, ast.Constant) for a in call.args[:1])


def _trivial(body: list[ast.stmt]) -> bool:
    """A body that does nothing: docstring, pass, `...`, return None/constant, raise NotImplementedError."""
    for stmt in body:
        if isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Return) and (stmt.value is None or isinstance(stmt.value, ast.Constant)):
            continue
        if isinstance(stmt, ast.Raise) and "NotImplemented" in ast.unparse(stmt):
            continue
        return False
    return True


def _self_attr(node: ast.AST) -> bool:
    """`self.x` or `self.x[...]`, possibly nested."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _records(method: ast.FunctionDef) -> bool:
    """The method accumulates into an attribute of the instance (append, extend, item store, stacking)."""
    for node in ast.walk(method):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("append", "extend", "update", "add") and _self_attr(node.func.value):
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Subscript) and _self_attr(target):
                return True
            if isinstance(node, ast.AugAssign) and _self_attr(target):
                return True
            if isinstance(node, ast.Assign) and _self_attr(target) and isinstance(node.value, ast.Call) and \
                    ast.unparse(target) in ast.unparse(node.value):
                return True  # self.x = np.hstack([self.x, new])
    return False


def _param_names(args: ast.arguments) -> list[str]:
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")]


def _takes(names: list[str]) -> list[str]:
    return [what for what, pattern in _TAKES if any(pattern.match(n) for n in names)]


def gather(node: ast.FunctionDef | ast.ClassDef, imports: Sequence[str] = ()) -> Evidence:
    """Evidence for a top-level function or class (its methods included)."""
    does: list[str] = []
    against: list[str] = []
    excluded: str | None = None

    def found(phrase: str, into: list[str] = does) -> None:
        if phrase not in into:
            into.append(phrase)

    calls: set[str] = set()
    nodes = list(ast.walk(node))  # walked once, read by every test below
    tails = {_tail(c.func) for c in nodes if isinstance(c, ast.Call)}
    maxima = _assigned_from(nodes, frozenset({"max", "amax", "topk", "kthvalue"}))
    softmaxed = _assigned_from(nodes, frozenset({"softmax", "log_softmax", "sigmoid"}))
    below = _Subtrees(nodes, softmaxed, maxima)
    for sub in nodes:
        if isinstance(sub, ast.Call):
            tail, head = _tail(sub.func), below.head(sub.func)
            if isinstance(sub.func, ast.Name):
                calls.add(sub.func.id)
            if "softmax" in tail.lower() or tail in ("sigmoid",):
                found("softmax")
            if tail in ("gather", "take_along_axis", "masked_select", "boolean_mask", "one_hot"):
                found("the gold label's probability")
            # `where(labels == preds, ...)`: the label against what the model gave; `where(target == 1)` only picks
            # a class's rows, as a data loader balancing its classes does
            if tail in ("where",) and any(isinstance(a, ast.Compare) and isinstance(a.ops[0], ast.Eq) and below.has(a, _LABEL)
                                          and below.has(a, _PRED | _PROB | _MAX) for a in sub.args):
                found("the gold label's probability")
            if tail in ("std", "var", "nanstd", "nanvar"):
                found(SPREAD)
            elif tail in ("mean", "nanmean", "average") and _axis_given(sub):
                found(MEAN)
            if tail in ("grad", "vmap", "jacrev", "jacobian") or _autograd_grad(sub.func):
                found("per-sample gradients")
            if tail in ("topk", "kthvalue"):
                found("margins between classes")
            if tail in ("cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss", "log_loss",
                        "binary_cross_entropy", "sparse_categorical_crossentropy", "BCEWithLogitsLoss"):
                found("a cross-entropy loss")
            if tail in ("entropy", "kl_div"):
                found("entropy")
            if tail == "diff" or tail == "zip" and len(sub.args) == 2 and _shifted(*sub.args):
                found("changes between consecutive epochs")
            if tail == "cosine_similarity":
                found("similarity to class prototypes")
            if head in _PLOT_MODULES or tail in _PLOT_CALLS:
                found(PLOTTING, against)
            if tail in _IO_CALLS or (head in _IO_MODULES and tail not in ("join", "exists", "basename", "dirname")):
                found(FILE_IO, against)
            if tail in _AGGREGATE_CALLS or tail in ("sum", "mean") and not _axis_given(sub) and any(
                    below.hits(a) for a in [*sub.args, sub.func.value if isinstance(sub.func, ast.Attribute) else sub.func]):
                found(AGGREGATE, against)
            if tail in ("ArgumentParser", "add_argument", "parse_args"):
                excluded = "parses command-line arguments"
        elif isinstance(sub, ast.Attribute) and sub.attr == "grad" and isinstance(sub.ctx, ast.Load):
            found("per-sample gradients")
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load) and below.has(sub.slice, _LABEL_EXPR) \
                and not below.has(sub.value, _LABEL) and below.has(sub.value, _PROB):
            found("the gold label's probability")
        elif below.hits(sub):
            found("argmax against the label")
        elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub) and _shifted(sub.left, sub.right):
            found("changes between consecutive epochs")
        elif maxima and isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub) and below.has(sub, _MAX):
            found("margins between classes")
        elif "log" in tails and isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult) and below.has(sub, _LOG):
            found("entropy")
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            names = [a.name for a in sub.names] if isinstance(sub, ast.Import) else [sub.module or ""]
            for name in names:
                if name.split(".")[0] in LIBRARIES:
                    found(f"the {name.split('.')[0]} library")
    for name in imports:
        if name.split(".")[0] in LIBRARIES:
            found(f"the {name.split('.')[0]} library")

    bases = [ast.unparse(b) for b in node.bases] if isinstance(node, ast.ClassDef) else []
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
        defined = {m.name for m in methods}
        params = [p for m in methods if m.name == "__init__" or m.name in _HOOKS for p in _param_names(m.args)]
        base_tails = {b.split(".")[-1] for b in bases}
        if any(_MODEL_BASES.match(b) for b in base_tails) and defined & {"forward", "call", "build"}:
            excluded = "a model definition (a network class with forward/call)"
        elif any(_DATASET_BASES.match(b) for b in base_tails) or {"__getitem__", "__len__"} <= defined:
            excluded = "a dataset or data processor"
        elif methods and all(_trivial(m.body) for m in methods if m.name != "__init__" and not _is_property(m)) \
                and any(m.name != "__init__" for m in methods):
            excluded = "an abstract base: its methods do nothing"
        hooks = [m for m in methods if m.name in _HOOKS and _records(m)]
        if any(m.name in ("__call__", "forward", "call") and _batch_reduction(m) for m in methods):
            found(AGGREGATE, against)  # a loss: what it is called on comes back as one number for the batch
        per_sample = (f"records outputs in `{hooks[0].name}` and keeps a score per sample" if hooks else None)
        if _trains(tails):
            excluded = excluded or "a training loop (backward pass and optimiser step, or fit)"
    else:
        params = _param_names(node.args)
        per_sample = _function_per_sample(node, nodes, params)
        if _trains(tails):
            excluded = "a training loop (backward pass and optimiser step, or fit)"
        if node.name == "main":
            excluded = "the program's entry point"
        elif _returns_model(node, tails):
            excluded = "builds a model"
    # What it reads off other objects counts as taken: `self.run.gold_labels_probabilities`.
    called = {id(c.func) for c in nodes if isinstance(c, ast.Call)}
    read = [n.attr for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
            and id(n) not in called and not (isinstance(n.value, ast.Name) and n.value.id == "self")]
    takes = _takes(params)
    if "predictions" not in takes and any(_TAKES[0][1].match(a) for a in read):
        takes.insert(0, "predictions")
    if per_sample and "one sample's trend" in takes and not does:
        does.append("a reduction of one sample's trend over epochs")
    returned = sorted({r.value.func.id for r in nodes if isinstance(r, ast.Return)
                       and isinstance(r.value, ast.Call) and isinstance(r.value.func, ast.Name)})
    return Evidence(does=does, takes=takes, per_sample=per_sample, against=against, excluded=excluded,
                    calls=sorted(calls), returns_calls=returned if isinstance(node, ast.FunctionDef) else [],
                    bases=bases)


def _is_property(method: ast.FunctionDef) -> bool:
    return any(_tail(d) in ("property", "cached_property") for d in method.decorator_list)


def _trains(tails: set[str]) -> bool:
    return ("backward" in tails and bool(tails & {"step", "zero_grad"})) or ("fit" in tails and "compile" in tails) \
        or ("fit" in tails and bool(tails & {"Adam", "SGD", "AdamW"}))


def _returns_model(node: ast.FunctionDef, tails: set[str]) -> bool:
    text = ast.unparse(node.returns) if node.returns else ""
    return bool(re.search(r"\b(Model|Module)\b", text)) or "compile" in tails and bool(tails & {"Model", "Sequential"})


def _batch_reduction(method: ast.FunctionDef) -> bool:
    """Whether every value a method returns is a mean or sum over everything (`torch.mean(...)`, `x.sum()`, no axis):
    one number for the whole batch, as a loss gives."""
    returns = [r.value for r in ast.walk(method) if isinstance(r, ast.Return) and r.value is not None]
    return bool(returns) and all(isinstance(v, ast.Call) and _tail(v.func) in ("mean", "sum", "nanmean")
                                 and not _axis_given(v) for v in returns)


_ALLOCATORS = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"})


def _allocated_per_sample(nodes: list[ast.AST], params: list[str], returns: list[ast.expr]) -> bool:
    """Whether it returns an array it allocated with one slot per label it was given: `np.zeros(len(y))`,
    `np.zeros(n)` after `n = len(y_train)`, `torch.zeros_like(labels)`, `np.zeros(labels.shape[0])`."""
    labels = {p for p in params if _LABELISH.match(p)}
    if not labels:
        return False

    def counts_labels(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Call) and _tail(expr.func) == "len" and expr.args:
            return isinstance(expr.args[0], ast.Name) and expr.args[0].id in labels
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
            return isinstance(expr.value.value, ast.Name) and expr.value.value.id in labels \
                and isinstance(expr.slice, ast.Constant) and expr.slice.value == 0
        return isinstance(expr, ast.Name) and expr.id in sizes

    assigned = [(t.id, a.value) for a in nodes if isinstance(a, ast.Assign) for t in a.targets if isinstance(t, ast.Name)]
    sizes: set[str] = set()
    for name, value in assigned:  # `n = len(y_train)`: in order, so a size may be named from one before it
        if counts_labels(value):
            sizes.add(name)
    arrays = set()
    for name, value in assigned:
        if isinstance(value, ast.Call) and _tail(value.func) in _ALLOCATORS and value.args:
            first = value.args[0]
            if _tail(value.func).endswith("_like"):
                if isinstance(first, ast.Name) and first.id in labels:
                    arrays.add(name)
            elif counts_labels(first):
                arrays.add(name)
    return any(isinstance(r, ast.Name) and r.id in arrays for r in returns)


def _function_per_sample(node: ast.FunctionDef, nodes: list[ast.AST], params: list[str]) -> str | None:
    returns = [r.value for r in nodes if isinstance(r, ast.Return) and r.value is not None]
    for value in returns:
        for call in ast.walk(value):
            if isinstance(call, ast.Call) and _tail(call.func) in _REDUCTIONS and _axis_given(call):
                return "returns one value per sample (a reduction along an axis)"
            if isinstance(call, ast.Call) and _tail(call.func) == "DataFrame":
                return "returns a table with one row per sample"
    for value in returns:
        for sub in ast.walk(value):
            if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Tuple) and sub.slice.elts and \
                    isinstance(sub.slice.elts[0], ast.Slice) and sub.slice.elts[0].lower is None:
                return "returns one value per sample (a column of a per-sample array)"
    if _allocated_per_sample(nodes, params, returns):
        return "returns one value per sample (an array with a slot per label it was given)"
    trend = [p for p in params if _TAKES[5][1].match(p)] or [
        a.arg for a in node.args.args if a.annotation is not None and re.match(
            r"^(List|list|Sequence|Iterable)\[(float|int|bool)\]$", ast.unparse(a.annotation))]
    if trend and returns:
        scalar = node.returns is not None and ast.unparse(node.returns) in ("int", "float", "bool")
        reduced = any(isinstance(c, ast.Call) and _tail(c.func) in ("sum", "len", "mean", "std", "var", "max", "min")
                      for v in returns for c in ast.walk(v))
        counted = any(isinstance(a, ast.AugAssign) for a in nodes)
        if scalar or reduced or counted:
            return "returns one value for the sample"
    return None
