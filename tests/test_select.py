"""Selection shows a repository's metrics before its utilities, and says why each was chosen."""

from __future__ import annotations

from paperproof.catalogue.extract import extract_module
from paperproof.catalogue.select import paper_terms, select

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
