"""The specimen corpus in one table, for the README: entries extracted, selected and run, by status,
tier and contract check. Runs the build's own stages on the bundled snapshot.

    .venv/bin/python bench/specimen_table.py            # prints a Markdown table
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from paperproof.build.pipeline import (
    BuildConfig,
    collect_paper_terms,
    read_links,
    repository_source,
    resolve_repositories,
    run_settings,
    select_entries,
)
from paperproof.build.summary import BuildSummary
from paperproof.catalogue.archive import open_archive
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.sample import CONTRACT_CHECK_VOCABULARY, STATUS_VOCABULARY, TIER_VOCABULARY
from paperproof.verify.stage import run_and_judge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        config = BuildConfig(cache=Path(cache), workers=args.workers)
        archive = open_archive(None)
        repos = resolve_repositories(read_links(archive), repository_source(config))
        summary = BuildSummary()
        repos = select_entries(repos, collect_paper_terms(archive, read_links(archive), repos), config.per_repo,
                               summary)
        repos = run_and_judge(repos, run_settings(config)).repos
    statuses, tiers, checks = list(STATUS_VOCABULARY), list(TIER_VOCABULARY), list(CONTRACT_CHECK_VOCABULARY)
    head = ["repository", "extracted", "selected", "run", *statuses, *(f"tier {t}" for t in tiers),
            *checks, "fidelity: paper", "fidelity: departs"]
    rows, totals = [], Counter()
    for key in sorted(repos):
        work = repos[key]
        if not work.record.has_source:
            continue
        samples = work.samples
        extracted = len(extract_repo(Path(work.record.snapshot), work.record.repo).entries)
        count = Counter()
        count["extracted"], count["selected"] = extracted, len(samples)
        count["run"] = sum(1 for s in samples if s.cases)  # sent to the sandbox (fixtures existed)
        count.update(s.status for s in samples)
        count.update(f"tier {s.metamorphic_tier}" for s in samples if s.metamorphic_tier)
        count.update(s.contract_check for s in samples if s.contract_check)
        count.update("fidelity: departs" if f.departures else "fidelity: paper" for s in samples for f in s.fidelity)
        totals.update(count)
        rows.append([work.record.repo.split("/")[-1], *(str(count[h]) for h in head[1:])])
    rows.append(["**all**", *(f"**{totals[h]}**" for h in head[1:])])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
