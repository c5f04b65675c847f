"""Random weights in place of pretrained ones: a driver that builds a torchvision model with ImageNet weights, a
Hugging Face model and tokenizer from a hub name, or a Keras application with `weights="imagenet"` gets the same
architecture randomly initialised (a tiny one of the same family, for transformers), runs in the sandbox, and its
record says what was replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from paperproof.catalogue.observed import observations
from paperproof.fixtures.pretrained import SPECIALS, TINY, family, vocab_size, vocabulary
from paperproof.runner import environment
from tests.test_environment import _registry_reachable, needs_registry  # noqa: F401 - its condition names it
from tests.test_standins import observe_specimen


def test_a_hub_names_family_is_read_from_its_words_and_a_local_folder_is_left_alone(tmp_path):
    assert family("bert-base-uncased") == "bert"
    assert family("google-bert/bert-base-multilingual-cased") == "bert"
    assert family("distilbert-base-uncased-finetuned-sst-2-english") == "distilbert"
    assert family("cardiffnlp/twitter-roberta-base-sentiment") == "roberta"
    assert family("google/flan-t5-base") == "t5"
    assert family("microsoft/deberta-v3-base") == "deberta-v2" and family("microsoft/deberta-base") == "deberta"
    assert family("TinyLlama/TinyLlama-1.1B-Chat-v1.0") == "llama" and family("Qwen/Qwen2.5-0.5B") == "qwen2"
    assert family("google/vit-base-patch16-224") == "vit" and family("microsoft/resnet-50") == "resnet"
    assert family("someone/finbert") is None and family("facebook/opt-125m") is None  # not on the list
    local = tmp_path / "bert-base-uncased"
    local.mkdir()
    assert family(str(local)) is None and family(local) is None  # the repository's own checkpoint
    assert set(SPECIALS) <= set(TINY)
    assert vocab_size("bert") == 5 + len(vocabulary()) and vocab_size("gpt2") == 1 + len(vocabulary())
    assert {"brilliant", "dull", "the", "##e", "e", "."} <= set(vocabulary())


# A stand-in Keras laid out as Keras 3 is: constructors in `keras.src.applications`, re-exported by the public
# module, each downloading ImageNet's weights unless told otherwise.
KERAS_APPLICATIONS = {
    "keras/__init__.py": "",
    "keras/src/__init__.py": "",
    "keras/src/applications/__init__.py": "",
    "keras/src/applications/resnet.py": textwrap.dedent('''
        import os


        def ResNet(stack, include_top=True, weights="imagenet", input_shape=None, classes=1000):
            if weights is not None and not os.path.exists(weights):
                raise OSError(f"URL fetch failure on {weights}")
            return {"stack": stack, "include_top": include_top, "weights": weights, "input_shape": input_shape,
                    "classes": classes}


        def ResNet50(include_top=True, weights="imagenet", input_shape=None, classes=1000):
            return ResNet("50", include_top, weights, input_shape=input_shape, classes=classes)


        def preprocess_input(x):
            return x
    '''),
    "keras/applications/__init__.py": "from keras.src.applications.resnet import ResNet50  # noqa: F401\n",
}
KERAS_DRIVER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from paperproof.fixtures import pretrained, standins
    standins.install(pretrained.AFTER_IMPORT)
    import keras.applications
    built = [keras.applications.ResNet50(), keras.applications.ResNet50(False, "imagenet", (32, 32, 3)),
             keras.applications.ResNet50(weights=sys.argv[2])]
    print(json.dumps({"built": built, "used": standins.used}))
""")


def test_a_keras_application_asked_for_imagenet_weights_is_built_with_random_ones(tmp_path):
    for name, text in KERAS_APPLICATIONS.items():
        (tmp_path / "libs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "libs" / name).write_text(text)
    own = tmp_path / "weights.h5"
    own.write_text("the repository's own weights")
    done = subprocess.run([sys.executable, "-c", KERAS_DRIVER, str(tmp_path / "libs"), str(own)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["built"] == [
        {"stack": "50", "include_top": True, "weights": None, "input_shape": None, "classes": 1000},
        {"stack": "50", "include_top": False, "weights": None, "input_shape": [32, 32, 3], "classes": 1000},
        {"stack": "50", "include_top": True, "weights": str(own), "input_shape": None, "classes": 1000},  # a file
    ]
    assert seen["used"] == ["keras.applications.ResNet50 weights='imagenet' (random weights)"] * 2


HUB_LOCAL = textwrap.dedent("""
    import json, sys
    from paperproof.fixtures import pretrained, standins
    standins.install(pretrained.AFTER_IMPORT)
    import torch
    print(json.dumps([torch.hub.load(sys.argv[1], "tiny", source="local"), standins.used]))
""")


def test_a_torch_hub_model_of_another_repository_is_left_alone(tmp_path):
    (tmp_path / "hubconf.py").write_text("dependencies = []\n\n\ndef tiny():\n    return 'its own tiny model'\n")
    done = subprocess.run([sys.executable, "-c", HUB_LOCAL, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["its own tiny model", []]


SPECIMEN = {
    "energy.py": '''import numpy as np


def free_energy(logits, temperature=1.0):
    """Negative free energy of each sample's logits: low for inputs the model finds unfamiliar."""
    z = logits / temperature
    top = z.max(axis=1, keepdims=True)
    return (top + np.log(np.exp(z - top).sum(axis=1, keepdims=True)))[:, 0] * temperature
''',
    "scripts/score_pretrained.py": '''import numpy as np
import torch
import torchvision
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from energy import free_energy

torch.manual_seed(0)
images = torch.rand(8, 3, 64, 64)
backbone = torchvision.models.resnet18(weights="IMAGENET1K_V1").eval()
with torch.no_grad():
    image_logits = backbone(images)
print("images", free_energy(image_logits.numpy()))

reviews = ["a moving and brilliant film", "dull , tedious and far too long", "i would watch it again",
           "the plot was clumsy but the acting was superb"]
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
classifier = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2).eval()
batch = tokenizer(reviews, padding=True, truncation=True, max_length=32, return_tensors="pt")
with torch.no_grad():
    text_logits = classifier(**batch).logits
print("reviews", free_energy(text_logits.numpy()))
''',
}
REPLACED = sorted(["torchvision.models.resnet18 weights='IMAGENET1K_V1' (random weights)",
            "transformers.AutoTokenizer.from_pretrained('bert-base-uncased') (planted bert vocabulary of "
            f"{vocab_size('bert')} tokens)",
            "transformers.AutoModelForSequenceClassification.from_pretrained('bert-base-uncased') (random bert: 2 "
            "layers, hidden 32)"])  # as the record lists them: sorted


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@needs_registry
def test_a_script_that_loads_pretrained_resnet_and_bert_runs_on_random_weights(tmp_path):
    run = observe_specimen(tmp_path, "energyscores", SPECIMEN, {"torchvision", "transformers", "tokenizers"})
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == REPLACED, run.replaced
    seen = observations([run])["energy.py::free_energy"]
    assert seen.per_sample and seen.replaced == REPLACED


ENTRY_POINTS = textwrap.dedent("""
    import json, sys
    sys.path.append(sys.argv[1])  # as the sandbox child does
    from paperproof.fixtures import pretrained, standins, stubs
    stubs.install([])
    standins.install(pretrained.AFTER_IMPORT)
    import torch, torchvision
    from transformers import (AutoConfig, AutoImageProcessor, AutoModelForImageClassification, AutoTokenizer,
                              BertForSequenceClassification, GPT2LMHeadModel)
    models = torchvision.models
    built = {
        "pretrained": models.resnet18(pretrained=True).fc.out_features,
        "get_model": models.get_model("mobilenet_v3_small", weights="DEFAULT").classifier[-1].out_features,
        "hub": type(torch.hub.load("pytorch/vision:v0.10.0", "resnet18", pretrained=True)).__name__,
        "enum": models.densenet121(weights=models.DenseNet121_Weights.IMAGENET1K_V1).classifier.out_features,
        "classes": models.resnet18(num_classes=7).fc.out_features,
    }
    bert = BertForSequenceClassification.from_pretrained("bert-base-cased", num_labels=5, hidden_dropout_prob=0.3)
    config = AutoConfig.from_pretrained("roberta-base", num_labels=3)
    gpt2 = GPT2LMHeadModel.from_pretrained("openai-community/gpt2")
    tokens = AutoTokenizer.from_pretrained("gpt2")("a brilliant film", return_tensors="pt")
    processor = AutoImageProcessor.from_pretrained("google/vit-base-patch16-224")
    vit = AutoModelForImageClassification.from_pretrained("google/vit-base-patch16-224", num_labels=10)
    pixels = processor(images=[torch.randint(0, 255, (3, 300, 200), dtype=torch.uint8)] * 2, return_tensors="pt")
    built.update(vit=list(vit(**pixels).logits.shape), bert=[bert.config.num_labels, bert.config.hidden_dropout_prob, bert.config.num_hidden_layers,
                       bert.training], roberta=[type(config).__name__, config.num_labels, config.hidden_size],
                 gpt2=list(gpt2(**tokens).logits.shape))
    try:
        BertForSequenceClassification.from_pretrained("someone/finbert-tone")
        built["unlisted"] = "answered"
    except Exception as exc:
        built["unlisted"] = type(exc).__name__
    print(json.dumps({"built": built, "used": standins.used}))
""")


@needs_registry
def test_each_way_of_asking_for_pretrained_weights_gets_random_ones(tmp_path):
    root = tmp_path / "energyscores"  # the environment of the script above: torchvision and transformers
    _write(root, SPECIMEN)
    env = environment.prepare(root, Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs")))
    offline = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", ENTRY_POINTS, str(env.path)], capture_output=True, text=True,
                          timeout=300, env=offline)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["built"] == {"pretrained": 1000, "get_model": 1000, "hub": "ResNet", "enum": 1000, "classes": 7,
                             "vit": [2, 10], "bert": [5, 0.3, 2, False], "roberta": ["RobertaConfig", 3, 32],
                             "gpt2": [1, 3, vocab_size("gpt2")], "unlisted": "OSError"}
    assert seen["used"] == [
        "torchvision.models.resnet18 weights='IMAGENET1K_V1' (random weights)",
        "torchvision.models.mobilenet_v3_small weights='IMAGENET1K_V1' (random weights)",
        "torch.hub.load('pytorch/vision:v0.10.0', 'resnet18') (the installed torchvision's resnet18)",
        "torchvision.models.resnet18 weights='IMAGENET1K_V1' (random weights)",
        "torchvision.models.densenet121 weights='IMAGENET1K_V1' (random weights)",
        "transformers.BertForSequenceClassification.from_pretrained('bert-base-cased') (random bert: 2 layers, "
        "hidden 32)",
        "transformers.AutoConfig.from_pretrained('roberta-base') (tiny roberta configuration)",
        "transformers.GPT2LMHeadModel.from_pretrained('openai-community/gpt2') (random gpt2: 2 layers, hidden 32)",
        f"transformers.AutoTokenizer.from_pretrained('gpt2') (planted gpt2 vocabulary of {vocab_size('gpt2')} tokens)",
        "transformers.AutoImageProcessor.from_pretrained('google/vit-base-patch16-224') (a vit image processor's "
        "defaults)",
        "transformers.AutoModelForImageClassification.from_pretrained('google/vit-base-patch16-224') (random vit: 2 "
        "layers, hidden 32)",
    ]


KERAS_SPECIMEN = {
    "features.py": '''import numpy as np


def feature_norms(features):
    """The norm of each sample's pooled features: small for inputs far from what the backbone has learnt."""
    return np.linalg.norm(features.reshape(len(features), -1), axis=1)
''',
    "examples/resnet_features.py": '''import numpy as np
import tensorflow as tf

from features import feature_norms

backbone = tf.keras.applications.ResNet50(weights="imagenet", include_top=False, input_shape=(32, 32, 3),
                                          pooling="avg")
images = np.random.default_rng(0).random((6, 32, 32, 3)).astype("float32") * 255.0
features = backbone(tf.keras.applications.resnet50.preprocess_input(images), training=False).numpy()
print(features.shape, feature_norms(features))
''',
}


@needs_registry
def test_a_script_that_builds_resnet50_with_imagenet_weights_through_keras_runs_on_random_ones(tmp_path):
    # TensorFlow's CPU wheel is large: the first run installs it for minutes
    run = observe_specimen(tmp_path, "resnetfeatures", KERAS_SPECIMEN, {"tensorflow-cpu"})
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["keras.applications.ResNet50 weights='imagenet' (random weights)"]
    seen = observations([run])["features.py::feature_norms"]
    assert seen.per_sample and seen.returns.endswith("[6]")
