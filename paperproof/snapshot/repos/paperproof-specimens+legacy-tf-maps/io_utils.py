"""Reading the dumps the callback writes."""
import json


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def load_vocab(vocab_file):
    with open(vocab_file) as f:
        return {w.strip(): i for i, w in enumerate(f)}


def encode_labels(labels, vocab=load_vocab("vocab.txt")):
    """Map label strings to ids with the vocabulary shipped next to the checkpoints."""
    return [vocab[label] for label in labels]
