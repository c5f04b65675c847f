"""Calling protocols read from source: hook classes, callbacks, model classes, run functions, file readers."""

from __future__ import annotations

import textwrap

from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.protocol import read_formats, recognise, roles_of
from paperproof.fixtures.synth import synthesize

# Specimens written for these tests, in the style of research code.
HOOK_CLASS = '''
class ForgetScore(Base):
    def __init__(self, dataloader, total_samples, name="forget"):
        self.loader = dataloader
        self.counts = [0] * total_samples

    def updates(self, logits, targets, probs, indices):
        pass

    def compute_scores(self):
        return self.counts
'''
BATCH_HOOK = '''
class Margins:
    def __init__(self, save_dir="."):
        self.save_dir = save_dir

    def updates(self, y_pred, y_batch, sample_ids):
        pass

    def finalize(self):
        return None
'''
NEEDS_PROBE = '''
class Probe(Base):
    def __init__(self, dataloader):
        self.dataloader = dataloader

    def updates(self, net, device):
        for x, _, y, _ in self.dataloader:
            net(x)

    def compute_scores(self):
        return 0
'''
KERAS = '''
class MapCallback(tf.keras.callbacks.Callback):
    def __init__(self, dataset):
        self.dataset = dataset

    def on_epoch_end(self, epoch, logs=None):
        pass
'''
HF = '''
class LogitsLogger(TrainerCallback):
    def on_epoch_end(self, args, state, control, **kwargs):
        pass
'''
MODULE = '''
class TinyNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()

    def forward(self, x, embed=False):
        return x
'''
READER = '''
def read_dynamics(model_dir, id_field="guid"):
    td_dir = os.path.join(model_dir, "training_dynamics")
    out = {}
    for epoch in range(len(os.listdir(td_dir))):
        path = os.path.join(td_dir, f"dynamics_epoch_{epoch}.jsonl")
        with open(path) as handle:
            for line in handle:
                record = json.loads(line)
                out.setdefault(record[id_field], []).append(record[f"logits_epoch_{epoch}"])
                gold = record["gold"]
    return out
'''
NPY_READER = '''
def load_scores(path):
    return np.load(os.path.join(path, "el2n_scores.npy"))
'''


def entry(code: str):
    (found,) = extract_module(textwrap.dedent(code), repo="o/r", path="m.py")
    return found


def test_a_class_fed_by_a_training_loop_is_driven_through_its_hooks():
    fixtures = synthesize(entry(HOOK_CLASS))
    assert not fixtures.missing and fixtures.cases
    case = fixtures.cases[0]
    assert case.protocol["kind"] == "hooks"
    assert case.protocol["hooks"] == [["updates", "epoch"]] and case.protocol["final"] == "compute_scores"
    assert {a.name: a.spec.params.get("role") for a in case.args} == {"dataloader": "loader", "total_samples": "N"}
    assert [(a.name, a.spec.params["role"]) for a in case.method_args["updates"]] == [
        ("logits", "logits"), ("targets", "targets"), ("probs", "probs"), ("indices", "indices")]
    assert {c.case_id for c in fixtures.cases} == {"typical", "wide", "images", "two_classes", "typical~permuted"}


def test_a_hook_that_takes_a_batch_is_called_per_batch():
    recognised = recognise(entry(BATCH_HOOK))
    assert recognised is not None and recognised.hooks == [("updates", "batch")] and recognised.final == "finalize"


def test_the_batch_layout_comes_from_how_the_code_unpacks_its_loader():
    assert recognise(entry(NEEDS_PROBE)).batch == ("x", "clean", "y", "index")
    assert roles_of(("idx", "inputs", "labels")) == ("index", "x", "y")
    assert roles_of(("images", "true_label", "observed_label", "indices")) == ("x", "clean", "y", "index")
    assert roles_of(("a", "b")) == ("x", "y")


def test_callbacks_and_model_classes_are_recognised_by_their_bases():
    keras = recognise(entry(KERAS))
    assert keras.kind == "keras_callback" and keras.needs == "tensorflow" and keras.hooks == [("on_epoch_end", "epoch")]
    hf = recognise(entry(HF))
    assert hf.kind == "hf_callback" and hf.hooks == [("on_epoch_end", "epoch")]
    fixtures = synthesize(entry(MODULE))
    assert fixtures.cases[0].protocol["kind"] == "module"
    assert [c.case_id for c in fixtures.cases] == ["typical", "mnist", "cifar"]


def test_a_hook_argument_no_training_loop_gives_names_the_protocol():
    code = HOOK_CLASS.replace("def updates(self, logits, targets, probs, indices)", "def updates(self, calibration_state)")
    fixtures = synthesize(entry(code))
    assert not fixtures.cases
    (missing,) = fixtures.missing
    assert missing.param == "calibration_state"
    assert missing.reason.startswith("protocol hooks (a class fed by a training loop): `updates()` takes `calibration_state`")


def test_a_reader_gets_the_files_it_opens_in_the_format_it_reads():
    fixtures = synthesize(entry(READER))
    protocol = fixtures.cases[0].protocol
    assert protocol["kind"] == "files"
    by_parts = {tuple(f["parts"]): f for f in protocol["files"]}
    assert set(by_parts) == {("training_dynamics",), ("training_dynamics", "dynamics_epoch_{}.jsonl")}
    per_epoch = by_parts["training_dynamics", "dynamics_epoch_{}.jsonl"]
    assert per_epoch["format"] == "jsonl" and per_epoch["param"] == "model_dir"
    assert {"guid", "gold", "logits_epoch_{}"} <= set(per_epoch["keys"])
    node = __import__("ast").parse(textwrap.dedent(NPY_READER)).body[0]
    (npy,) = read_formats(node, entry(NPY_READER).params)
    assert npy["parts"] == ["el2n_scores.npy"] and npy["format"] == "npy"


def test_plain_functions_of_arrays_keep_the_shared_cases():
    fixtures = synthesize(entry("def confidence(logits, labels):\n    pass\n"))
    assert all(c.protocol is None for c in fixtures.cases) and len(fixtures.cases) == 8


def test_a_default_that_reads_a_file_when_defined_is_supplied_in_a_protocol_too():
    code = 'def select(df, model_dir, df_orig=pd.read_csv("/home/someone/train.tsv")):\n    pass\n'
    fixtures = synthesize(entry(code))
    assert fixtures.cases[0].protocol["kind"] == "files" and fixtures.supplied_defaults == ["df_orig"]
    assert [a.name for a in fixtures.cases[0].args] == ["df", "model_dir", "df_orig"]


def test_a_folder_named_by_a_string_default_is_written_under_that_name():
    code = READER.replace("def read_dynamics(model_dir, id_field=\"guid\"):", "def read_dynamics(model_dir, id_field=\"guid\", mode=\"training\"):")
    code = code.replace('"training_dynamics"', 'f"{mode}_dynamics"')
    protocol = synthesize(entry(code)).cases[0].protocol
    assert {tuple(f["parts"]) for f in protocol["files"]} == {("training_dynamics",), ("training_dynamics", "dynamics_epoch_{}.jsonl")}


def test_a_flag_saying_labels_are_one_hot_is_set_to_say_they_are_class_indices():
    code = textwrap.dedent('''
    class GoldProbs(Base):
        def __init__(self, dataloader=None, sparse_labels: bool = False, smooth=0.0):
            self.dataloader = dataloader
            self.sparse = sparse_labels

        def on_epoch_end(self, net, device="cpu"):
            pass

        def compute_scores(self):
            return None
    ''')
    (entry,) = [e for e in extract_module(code, repo="o/r", path="m.py") if e.qualname == "GoldProbs"]
    fixtures = synthesize(entry)
    given = {a.name: a.spec for a in fixtures.cases[0].args}
    assert given["sparse_labels"].params == {"value": True}
    assert given["dataloader"].kind == "run"  # a None default of a run object is given it
    assert "smooth" not in given  # other literal defaults are kept
    assert any("`sparse_labels` is given True" in c for c in fixtures.choices)


def test_code_that_reads_the_model_output_as_probabilities_gets_a_model_ending_in_softmax():
    tracker = textwrap.dedent('''
    class RowTracker:
        def __init__(self, X, y):
            self.X, self.y = X, y

        def on_epoch_end(self, net, device="cpu"):
            for i in range(len(self.X)):
                probabilities = net(self.X[i])

        @property
        def confidence(self):
            return None
    ''')
    recognised = recognise(entry(tracker))
    assert recognised is not None and recognised.kind == "hooks" and recognised.properties == ["confidence"]
    assert recognised.payload()["outputs"] == "probabilities"
    softened = tracker.replace("probabilities = net(self.X[i])", "probabilities = net(self.X[i]).softmax(-1)")
    assert "outputs" not in recognise(entry(softened)).payload()


def test_run_objects_named_for_their_part_or_split_are_the_runs_objects():
    code = textwrap.dedent('''
        class StudentAgreement:
            def __init__(self, teacher_model, valloader, dst_train, num_model=2):
                self.teacher, self.loader, self.data = teacher_model, valloader, dst_train

            def update(self, out, dataset_indices):
                pass

            def compute(self):
                return 0
    ''')
    fixtures = synthesize(entry(code))
    assert fixtures.cases, fixtures.missing
    given = {a.name: a.spec.params.get("role") for a in fixtures.cases[0].args}
    assert given == {"teacher_model": "net", "valloader": "loader", "dst_train": "dataset"}  # `num_model`: a count, left
    hook = {a.name: a.spec.params.get("role") for a in fixtures.cases[0].method_args["update"]}
    assert hook["dataset_indices"] == "indices"


def test_a_hook_given_the_models_parameters_gets_its_state_and_a_switch_typed_in_the_docstring_its_value():
    code = HOOK_CLASS.replace("def updates(self, logits, targets, probs, indices)", "def updates(self, model_params)")
    code = code.replace("def __init__(self, dataloader, total_samples, name=\"forget\"):",
                        'def __init__(self, dataloader, total_samples, per_class):\n'
                        '        """Args:\n            per_class: bool\n                whether to select per class\n        """')
    fixtures = synthesize(entry(code))
    assert not fixtures.missing, fixtures.missing
    case = fixtures.cases[0]
    assert [(a.name, a.spec.params["role"]) for a in case.method_args["updates"]] == [("model_params", "state")]
    assert {a.name: a.spec.params.get("value") for a in case.args if a.spec.kind == "literal"} == {"per_class": True}
