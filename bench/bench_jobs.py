"""Benchmark: the render jobs as named tuples (`build.renderer.PaperJob`, `ListJob`) against plain tuples.

Chunks of jobs as the build sends them (a paper's row, source, two code links and the record of one
repository; a list page of 1,000 listings of 593 bytes, the size measured at 50,000 papers), pickled
and unpickled as `multiprocessing` does, side by side in one run. Prints microseconds per job and the
named/plain ratio.

    .venv/bin/python bench/bench_jobs.py [--chunks 200]
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperproof.build.links import Link  # noqa: E402
from paperproof.build.renderer import ListJob, PaperJob  # noqa: E402
from paperproof.catalogue.archive import archive_source  # noqa: E402
from paperproof.catalogue.repo_url import normalise_repo_url  # noqa: E402
from paperproof.catalogue.repos import record_without_source  # noqa: E402


def paper_jobs(count: int) -> list[PaperJob]:
    source = archive_source()
    key = normalise_repo_url("https://github.com/example/project")
    record = record_without_source(key, "no source: the build was given no --repos")
    jobs = []
    for n in range(count):
        slug = f"paper-{n}"
        links = [Link(slug, key.url, True, True, False, "pytorch"), Link(slug, key.url + "-fork", None, None, None, None)]
        row = f'{{"paper_url":"https://paperswithcode.com/paper/{slug}","title":"{slug}","abstract":"{"x" * 1200}"}}'
        jobs.append(PaperJob(slug, row, source, links, {key.key: record}, {key.key: ()}))
    return jobs


def list_jobs(count: int) -> list[ListJob]:
    rows = [f'{{"slug":"paper-{n}","title":"{"t" * 560}"}}' for n in range(1000)]
    return [ListJob("task", f'{{"page":{n}}}', rows, ("task", "Task", [])) for n in range(count)]


def once(chunks: list[list], send=list, receive=list) -> float:
    """Microseconds per job to pickle and unpickle the chunks."""
    started = time.perf_counter()
    for chunk in chunks:
        receive(pickle.loads(pickle.dumps(send(chunk), protocol=pickle.HIGHEST_PROTOCOL)))
    return (time.perf_counter() - started) / sum(len(c) for c in chunks) * 1e6


def best_of(rounds: int, *runs) -> list[float]:
    """Each run's best time over `rounds`, the runs taking turns (so a busy moment does not favour one)."""
    best = [float("inf")] * len(runs)
    for _ in range(rounds):
        for i, run in enumerate(runs):
            best[i] = min(best[i], run())
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200)
    args = parser.parse_args()
    for name, jobs, size in (("paper", paper_jobs(128 * args.chunks), 128), ("list page", list_jobs(4 * args.chunks), 4)):
        named = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        plain = [[tuple(job) for job in chunk] for chunk in named]
        kind = type(jobs[0])
        a, b, c = best_of(7, lambda n=named: once(n), lambda p=plain: once(p),
                          lambda n=named, k=kind: once(n, lambda sent: [tuple(j) for j in sent],
                                                       lambda got: [k._make(t) for t in got]))
        print(f"{name} jobs, µs a job to pickle and unpickle: named {a:.2f}, plain {b:.2f}, named sent as plain "
              f"{c:.2f}; named/plain {a / b:.2f}, sent as plain/plain {c / b:.2f}")


if __name__ == "__main__":
    main()
