"""Selection shows a repository's metrics before its utilities, and says why each was chosen."""

from __future__ import annotations

from paperproof.catalogue.extract import extract_module
from paperproof.catalogue.select import left_out, paper_terms, select

CODE = '''
def str2bool(v):
    return v

def read_tsv(path):
    return path

def parse_row(row):
    return row

def compute_forgetfulness(correctness_trend):
    """Count forgetting events of one example."""
    return 0

def dataset_split(rows):
    return rows

def cartography_plot(df):
    return df

def normalise(x):
    return x
'''


def test_metrics_rank_above_utilities_and_the_result_keeps_file_order():
    entries = extract_module(CODE, repo="o/r", path="m.py")
    readme = "Use `cartography_plot` to draw the map."
    chosen = select(entries, paper_terms("We split each dataset by hardness.", ["Data Maps"]), readme, limit=3)
    names = [s.entry.name for s in chosen]
    assert names == ["compute_forgetfulness", "dataset_split", "cartography_plot"]
    basis = {s.entry.name: s.link_basis for s in chosen}
    assert basis == {"compute_forgetfulness": "metric_vocabulary", "dataset_split": "paper_terms",
                     "cartography_plot": "readme_mention"}


def test_paper_terms_drop_short_and_common_words():
    terms = paper_terms("We propose a method which maps training dynamics.", ["Out-of-Distribution Generalization"])
    assert {"training", "dynamics", "generalization", "distribution"} <= terms
    assert "propose" not in terms and "which" not in terms and "maps" not in terms


# Written for these tests in the style of research code: a hardness function under a name that says
# nothing, a model class and an entry point named like metrics, and utilities that crowd the limit.
RESEARCH = '''
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def f1(logits, labels):
    """Statistic of each example over the run."""
    p = F.softmax(torch.as_tensor(logits, dtype=torch.float64), dim=-1)
    idx = torch.as_tensor(labels).long().view(1, -1, 1).expand(p.shape[0], -1, 1)
    return p.gather(-1, idx).squeeze(-1).std(dim=0, unbiased=False).numpy()


class ForgettingNet(nn.Module):
    """Forgetting-aware network: variability and confidence heads."""

    def __init__(self, n_in, n_classes):
        super().__init__()
        self.fc = nn.Linear(n_in, n_classes)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)


def main():
    """Compute forgetting, confidence and variability scores for a run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--logits")
    args = parser.parse_args()
    print(f1(np.load(args.logits), np.load(args.logits)))


def read_scores(path):
    """Load saved hardness scores."""
    with open(path) as handle:
        return json.load(handle)


def score_name(metric):
    return f"{metric}_score"


def hardness_threshold(scores, q=0.9):
    return float(np.quantile(scores, q))


def noisy_fraction(flags):
    return float(np.mean(flags))


def confidence_bins(n=10):
    return np.linspace(0, 1, n + 1)


def margin_label(v):
    return "low" if v < 0 else "high"


def ambiguous_region(conf, var):
    return (conf > 0.3) & (conf < 0.7) & (var > 0.2)


def metric_names():
    return ["confidence", "variability", "correctness", "forgetfulness"]


def loss_string(loss):
    return f"{loss:.3f}"
'''


def test_a_hardness_function_named_f1_is_chosen_for_its_code_and_a_model_or_main_never():
    entries = extract_module(RESEARCH, repo="o/r", path="lib.py")
    chosen = select(entries, set(), "", limit=8)
    by_name = {s.entry.name: s for s in chosen}
    assert "f1" in by_name and by_name["f1"].link_basis == "hardness_evidence"
    assert "softmax" in by_name["f1"].why and "gold label" in by_name["f1"].why
    assert "ForgettingNet" not in by_name and "main" not in by_name
    assert len(chosen) == 8  # the rest of the limit is filled, but never with those two
    reasons = dict((e.name, why) for e, why in left_out(entries, chosen))
    assert "model definition" in reasons["ForgettingNet"]
    assert "entry point" in reasons["main"]


HCM_TEMPLATE = '''
class Score{i}(Base):
    def __init__(self, dataloader, name="s{i}"):
        self.dataloader = dataloader
        self.values = []

    def updates(self, logits, targets):
        probs = F.softmax(logits, dim=1)
        self.values.append(probs[torch.arange(len(targets)), targets] * {i})

    def compute_scores(self):
        self._scores = np.mean(self.values, axis=0)
        return self._scores
'''


def test_the_limit_follows_the_repository_every_hardness_class_is_kept():
    source = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n\nclass Base:\n" \
             "    def updates(self):\n        pass\n\n    def compute_scores(self):\n        pass\n"
    source += "".join(HCM_TEMPLATE.format(i=i) for i in range(12))
    source += "".join(f"\n\ndef metric_helper_{i}(x):\n    return x\n" for i in range(5))
    entries = extract_module(source, repo="o/r", path="hardness.py")
    chosen = select(entries, set(), "", limit=8)
    assert [s.entry.name for s in chosen] == [f"Score{i}" for i in range(12)]
    assert all("records outputs in `updates`" in s.why for s in chosen)
    assert "abstract base" in dict((e.name, w) for e, w in left_out(entries, chosen))["Base"]


def test_an_entry_that_hands_its_work_to_a_hardness_entry_is_chosen_for_it():
    source = RESEARCH + '''

class Wrapper:
    def __init__(self, dataloader):
        self.dataloader = dataloader

    def compute_scores(self):
        return f1(self.run.logits, self.run.labels)
'''
    entries = extract_module(source, repo="o/r", path="lib.py")
    chosen = {s.entry.name: s for s in select(entries, set(), "", limit=2)}
    assert chosen["Wrapper"].link_basis == "hardness_evidence"
    assert "calls `f1` of this repository" in chosen["Wrapper"].why


def test_no_limit_keeps_every_entry_with_its_reason():
    entries = extract_module(RESEARCH, repo="o/r", path="lib.py")
    chosen = select(entries, set(), "", limit=None)
    assert [s.entry.name for s in chosen] == [e.name for e in entries]
    assert all(s.why for s in chosen)



def test_the_fields_valuation_and_attribution_names_come_first_among_the_entries_that_fill_the_limit():
    code = ('def make_grid(a, b):\n    return a, b\n\n\n'
            'def shapley_values(utilities, n):\n    """Monte Carlo value of each training point."""\n'
            '    return utilities\n\n\n'
            'def is_integer(x):\n    """Whether x is an integer."""\n    return int(x) == x\n')
    entries = extract_module(code, repo="o/r", path="lib.py")
    assert [s.entry.name for s in select(entries, set(), "", limit=1)] == ["shapley_values"]
