"""Selection against a hand-labelled list: precision and recall@8 of hardness entries, side by side
with the vocabulary-only ranking that selection used before code evidence.

    .venv/bin/python bench/bench_select.py CHECKOUTS [--labels bench/hardness_entries.csv]

CHECKOUTS holds one folder per repository, named `owner+name` (as `--repos` takes them). The list
names, per repository and commit, the entries that compute per-sample hardness (label `hardness`,
made by reading the code) and a few that must not be taken (`not_hardness`). Precision: of the entries
selected on hardness evidence, the share that the list calls hardness. Recall@8: per repository, the
labelled hardness entries among all selected, at most 8, over min(labelled, 8), summed over
repositories. The baseline ranks every entry by vocabulary alone and keeps 8, as before.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.select import DEFAULT_PER_REPO, score, select


def read_labels(path: Path) -> dict[str, dict[tuple[str, str], str]]:
    labels: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            labels[row["repo"]][row["path"], row["qualname"]] = row["label"]
    return labels


def baseline(entries, limit: int):
    order = sorted(range(len(entries)), key=lambda i: (-score(entries[i], set(), "")[0], i))[:limit]
    return [entries[i] for i in sorted(order)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", type=Path)
    parser.add_argument("--labels", type=Path, default=Path(__file__).with_name("hardness_entries.csv"))
    args = parser.parse_args()
    labels = read_labels(args.labels)
    k = DEFAULT_PER_REPO
    head = ["repository", "extracted", "labelled", "selected", "on evidence", "true", "false", "recall@8",
            "traps taken (on evidence)", "baseline: hardness of 8", "baseline recall@8"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    total = defaultdict(int)
    for repo in sorted(labels):
        root = args.checkouts / repo.replace("/", "+")
        if not root.is_dir():
            print(f"| {repo} | not in {args.checkouts} |" + " |" * (len(head) - 2))
            continue
        entries = extract_repo(root, repo).entries
        truth = labels[repo]
        hard = {key for key, label in truth.items() if label == "hardness"}
        traps = {key for key, label in truth.items() if label == "not_hardness"}
        chosen = select(entries, set(), "", k)
        keys = {(s.entry.path, s.entry.qualname) for s in chosen}
        flagged = {(s.entry.path, s.entry.qualname) for s in chosen if s.link_basis == "hardness_evidence"}
        old = {(e.path, e.qualname) for e in baseline(entries, k)}
        row = {
            "extracted": len(entries), "labelled": len(hard), "selected": len(chosen), "on evidence": len(flagged),
            "true": len(flagged & hard), "false": len(flagged - hard), "recall_num": min(len(keys & hard), k),
            "recall_den": min(len(hard), k), "traps taken": len(keys & traps), "traps on evidence": len(flagged & traps), "old_hard": len(old & hard),
            "old_n": len(old), "old_num": min(len(old & hard), k),
        }
        for name, value in row.items():
            total[name] += value
        print(f"| {repo} | {row['extracted']} | {row['labelled']} | {row['selected']} | {row['on evidence']} | "
              f"{row['true']} | {row['false']} | {row['recall_num']}/{row['recall_den']} | {row['traps taken']} ({row['traps on evidence']}) | "
              f"{row['old_hard']}/{row['old_n']} | {row['old_num']}/{row['recall_den']} |")
    precision = total["true"] / total["on evidence"] if total["on evidence"] else 0.0
    recall = total["recall_num"] / total["recall_den"] if total["recall_den"] else 0.0
    old_precision = total["old_hard"] / total["old_n"] if total["old_n"] else 0.0
    old_recall = total["old_num"] / total["recall_den"] if total["recall_den"] else 0.0
    print()
    print(f"precision (selected on hardness evidence): {total['true']}/{total['on evidence']} = {precision:.1%}")
    print(f"recall@8: {total['recall_num']}/{total['recall_den']} = {recall:.1%}")
    print(f"hardness among all selected: {total['true']}/{total['selected']}; traps taken: {total['traps taken']}, of them on evidence: {total['traps on evidence']}")
    print(f"baseline (vocabulary only, 8 a repository): hardness among selected {total['old_hard']}/{total['old_n']} "
          f"= {old_precision:.1%}, recall@8 {total['old_num']}/{total['recall_den']} = {old_recall:.1%}")


if __name__ == "__main__":
    main()
