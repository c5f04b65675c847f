"""Driving an entry through the calling protocol it declares, on a real training run.

Runs inside the sandbox child. A case with a `protocol` (see `fixtures.protocol`) is not one call
of arrays: the runner builds the run's objects (`fixtures.training`), constructs the entry's class
with them, trains, calling each hook when a training loop would (per batch, per epoch, at the
end), and then asks for the final score; readers get the run's files written first, in their own
format, in the sample's private scratch directory. What comes back is the per-sample output.
"""

from __future__ import annotations

import os
import types

from paperproof.fixtures import run_files, training
from paperproof.fixtures.values import materialize


class NeedsFramework(ModuleNotFoundError):
    """The protocol needs a framework this runner does not have (a Keras callback without tensorflow)."""


def _hook_value(role: str, run: training.Run, info: dict, device: str, scratch: str):
    if role in ("logits", "targets", "probs", "indices", "x") and info.get("logits") is not None:
        torch = training._torch()
        logits, targets, indices = info["logits"], info["targets"], info["indices"]
        return {"logits": logits, "targets": targets, "probs": torch.softmax(logits, dim=1),
                "indices": indices, "x": info.get("x")}[role]  # a batch's indices: `training.train` always gives them
    if role in ("logits", "targets", "probs", "indices"):
        logits, targets, probs, indices = run.outputs()
        return {"logits": logits, "targets": targets, "probs": probs, "indices": indices}[role]
    if role == "x":
        return training._torch().from_numpy(run.data.x)
    if role == "epoch":
        return max(run.epoch, 0)
    if role == "loss":
        return info.get("loss", 0.0)
    return _object(role, run, device, scratch)


def _object(role: str, run: training.Run, device: str, scratch: str):
    spec = run.spec
    objects = {
        "net": lambda: run.net, "nets": lambda: _checkpoint_models(run), "estimator": lambda: _estimator(run),
        "loader": lambda: run.loader, "dataset": lambda: run.loader.dataset,
        "optimizer": lambda: run.optimizer, "criterion": lambda: run.criterion, "device": lambda: device,
        "state": lambda: run.net.state_dict(),  # the model's parameters as they are now (`update_model(model_params)`)
        "N": lambda: spec.n, "C": lambda: spec.classes, "E": lambda: spec.epochs, "B": lambda: spec.batch_size,
        "logs": lambda: {"loss": 1.0 / (run.epoch + 2), "accuracy": 0.5},
        "dir": lambda: scratch, "file": lambda: os.path.join(scratch, "run.jsonl"),
    }
    if role not in objects:
        raise ValueError(f"no run object for role {role!r}")
    return objects[role]()


def _estimator(run: training.Run):
    from paperproof.fixtures import estimator

    return estimator.fitted(run)


def _checkpoint_models(run: training.Run) -> list:
    """The run's model as it was after each epoch so far (its checkpoints), in evaluation mode: what code that
    takes a list of models (an ensemble over training, VoG's snapshots) is given; the model itself before any."""
    import copy

    out = []
    states: list[dict | None] = [*run.checkpoints] or [None]
    for state in states:
        net = copy.deepcopy(run.net)
        if state is not None:
            net.load_state_dict(state)
        out.append(net.eval())
    return out


def _contained(value, container: str | None):
    """A tensor as the list or array a parameter's annotation asks for."""
    if container is None or not hasattr(value, "detach"):
        return value
    array = value.detach().cpu().numpy()
    return array.tolist() if container == "list" else array


def _arguments(args: list[dict], case: dict, run: training.Run, info: dict, device: str, scratch: str,
               override: dict | None = None):
    positional, keywords = [], {}
    for arg in args:
        spec = arg["spec"]
        if spec["kind"] == "construct":  # an object of the repository's own class, built by its constructor
            value = _construct(spec["params"], case, run, info, device, scratch, override)
        elif spec["kind"] == "record":  # a dict the repository builds at its call: the run's values under its keys
            value = {key: _contained(_hook_value(role, run, info, device, scratch), spec["params"].get("container"))
                     for key, role in spec["params"]["roles"].items()}
        elif spec["kind"] == "run" and override and spec["params"]["role"] in override:
            value = override[spec["params"]["role"]]
        elif spec["kind"] == "run":
            value = _contained(_hook_value(spec["params"]["role"], run, info, device, scratch),
                               spec["params"].get("container"))
            if spec["params"]["role"] == "epoch":  # counted from where the repository's loop counts
                value += int(spec["params"].get("start", 0))
        else:
            value = materialize(spec, case, device)
        if arg.get("positional"):
            positional.append(value)
        else:
            keywords[arg["name"]] = value
    return positional, keywords


def _construct(params: dict, case: dict, run: training.Run, info: dict, device: str, scratch: str, override):
    """`Class(*args)` of the repository, imported from its module as the repository imports it."""
    import importlib

    cls = getattr(importlib.import_module(params["module"]), params["name"])
    positional, keywords = _arguments(params["args"], case, run, info, device, scratch, override)
    return cls(*positional, **keywords)


def _scratch(case: dict) -> str:
    """A fresh folder for this case under the sample's private working directory."""
    path = os.path.join(os.getcwd(), "paperproof-run", str(case["case_id"]).replace("~", "-"))
    os.makedirs(path, exist_ok=True)
    return path


def drive(target, case: dict, device: str = "cpu"):
    """Run the case's protocol on a fresh training run and return what the entry produced."""
    protocol = case["protocol"]
    if protocol.get("needs"):
        try:
            if getattr(__import__(protocol["needs"]), "__paperproof_stub__", False):
                raise ImportError(protocol["needs"])
        except ImportError:
            raise NeedsFramework(f"No module named {protocol['needs']!r} (needed to run a {protocol['kind']})",
                                 name=protocol["needs"]) from None
    kind = protocol["kind"]
    spec = training.RunSpec.from_case(case)
    scratch = _scratch(case)
    os.chdir(scratch)  # what it writes to relative paths (`workspace/`, a cache of its own) stays with this case
    run = training.start(spec)
    if kind == "module":
        return _module(target, case, run, device, scratch)
    if kind in ("hooks", "hf_callback", "fits"):
        return _hooks(target, case, run, device, scratch, hf=kind == "hf_callback")
    if kind == "keras_callback":
        return _keras(target, case, run, device, scratch)
    training.train(spec, run=run)
    opened = {}
    if kind == "files":
        files = protocol.get("files", [])
        logits, labels = run.dynamics()
        run_files.write(scratch, [f for f in files if not f.get("file")], logits, labels)
        for f in (f for f in files if f.get("file")):  # the parameter is the file itself
            opened[f["param"]] = os.path.join(scratch, f"{f['param']}.{f.get('format') or 'jsonl'}")
            run_files.write(scratch, [{**f, "parts": [os.path.basename(opened[f["param"]])]}], logits, labels)
    positional, keywords = _arguments(case["args"], case, run, {}, device, scratch)
    keywords.update({name: path for name, path in opened.items() if name in keywords})
    return target(*positional, **keywords)


def _module(cls, case: dict, run: training.Run, device: str, scratch: str):
    """A model class: built with its arguments, evaluated on one batch of the run's inputs."""
    torch = training._torch()
    positional, keywords = _arguments(case["args"], case, run, {}, device, scratch)
    net = cls(*positional, **keywords)
    net.eval()
    with torch.no_grad():
        return net(torch.from_numpy(run.data.x[: run.spec.batch_size]))


def _hf_arguments(run: training.Run, info: dict) -> tuple[list, dict]:
    state = types.SimpleNamespace(epoch=float(run.epoch + 1), global_step=info.get("step", 0), log_history=[],
                                  max_steps=run.spec.epochs * len(run.train_loader), num_train_epochs=run.spec.epochs)
    args = types.SimpleNamespace(num_train_epochs=run.spec.epochs, per_device_train_batch_size=run.spec.batch_size,
                                 output_dir=".", seed=run.spec.seed)
    control = types.SimpleNamespace(should_training_stop=False, should_save=False, should_evaluate=False, should_log=False)
    return [args, state, control], {"model": run.net, "train_dataloader": run.train_loader,
                                    "eval_dataloader": run.loader, "optimizer": run.optimizer}


def chosen_epochs(epochs: int) -> set[int]:
    """The epochs a hook its repository calls "at chosen epochs" (`if epoch in CHECKPOINTS`) is called at here:
    the first, the middle and the last."""
    return {0, epochs // 2, max(epochs - 1, 0)}


def _hooks(cls, case: dict, run: training.Run, device: str, scratch: str, hf: bool):
    """Construct, train calling each hook at its cadence, then ask for the final score. A class that trains
    itself (`fits`) has its `fit()` called once instead, and our loop does not train."""
    protocol = case["protocol"]
    positional, keywords = _arguments(case["args"], case, run, {}, device, scratch)
    instance = cls(*positional, **keywords)
    cadence = {method: when for method, when in protocol.get("hooks", [])}
    method_args = case.get("method_args", {})

    def listener(event: str, current: training.Run, info: dict) -> None:
        for method, when in cadence.items():
            due = (when == "batch" and event == "batch_end") or (when == "epoch" and event == "epoch_end") \
                or (when == "end" and event == "train_end") \
                or (when == "chosen" and event == "epoch_end" and current.epoch in chosen_epochs(current.spec.epochs))
            if method == "on_train_end":
                due = event == "train_end"
            if not due:
                continue
            if hf:
                args, kwargs = _hf_arguments(current, info)
                getattr(instance, method)(*args, **kwargs)
            else:
                args, kwargs = _arguments(method_args.get(method, []), case, current, info, device, scratch)
                getattr(instance, method)(*args, **kwargs)

    for method, when in cadence.items():  # called once before training, as its repository's loop does (`init()`)
        if when == "start":
            args, kwargs = _arguments(method_args.get(method, []), case, run, {}, device, scratch)
            getattr(instance, method)(*args, **kwargs)
    before = _listing(scratch)
    if protocol["kind"] != "fits":  # a class that trains itself did so in its `fit()`, on the run's objects and data
        training.train(run.spec, listener, run=run)
    value = _final(instance, protocol, case, run, device, scratch)
    return value if value is not None else _written_table(scratch, before, run.spec.n)


TABLES = (".csv", ".tsv", ".npy", ".json", ".jsonl")


def _listing(folder: str) -> set[str]:
    return {os.path.join(root, name) for root, _, names in os.walk(folder) for name in names}


def _written_table(folder: str, before: set[str], n: int):
    """What a final method that returns nothing left instead: the first table it wrote into the folder it was
    given (`finalize()` writing `aum_values.csv`), its rows put in sample order when it has an id column
    holding every sample once. None when it wrote none."""
    written = sorted(p for p in _listing(folder) - before if p.endswith(TABLES))
    if not written:
        return None
    path = written[0]
    if path.endswith(".npy"):
        import numpy as np

        return np.load(path, allow_pickle=False)
    import pandas as pd

    table = pd.read_csv(path, sep="\t" if path.endswith(".tsv") else ",") if path.endswith((".csv", ".tsv")) \
        else pd.read_json(path, lines=path.endswith(".jsonl"))
    for column in table.columns:
        if str(column).lower() in run_files.ID_KEYS and len(table) == n and sorted(table[column].tolist()) == list(range(n)):
            return table.sort_values(column, kind="stable").reset_index(drop=True)
    return table


def _final(instance, protocol: dict, case: dict, run: training.Run, device: str, scratch: str, override=None):
    """The final method's answer, else the scores it left, else the callback's properties."""
    method_args = case.get("method_args", {})
    final = protocol.get("final")
    value = None
    if final:
        member = getattr(instance, final)
        if callable(member):
            args, kwargs = _arguments(method_args.get(final, []), case, run, {}, device, scratch, override)
            value = member(*args, **kwargs)
        else:
            value = member
    if value is None:
        for name in ("scores", "_scores"):
            if name != final and hasattr(type(instance), name) or name in getattr(instance, "__dict__", {}):
                value = getattr(instance, name)
                if value is not None:
                    break
    if value is None and protocol.get("properties"):  # a callback's results are its properties
        value = {name: getattr(instance, name) for name in protocol["properties"]}
    return value


def _keras(cls, case: dict, run: training.Run, device: str, scratch: str):
    """A Keras callback: a small Keras model fitted on the same planted data (`fixtures.keras_run`, as the parent
    trains it again), the callback given to `fit`."""
    from paperproof.fixtures import keras_run

    spec = run.spec
    model = keras_run.model(spec, run.data)
    dataset = keras_run.dataset(spec, run.data)
    override = {"net": model, "dataset": dataset, "loader": dataset, "optimizer": model.optimizer}
    positional, keywords = _arguments(case["args"], case, run, {}, device, scratch, override)
    instance = cls(*positional, **keywords)
    keras_run.fit(spec, run.data, model, [instance])
    return _final(instance, case["protocol"], case, run, device, scratch, override)
