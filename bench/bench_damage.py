"""What finding a dump's damage costs, beside reading the dump: the synthetic papers dump read whole, then
the same dump cut at half read until the build stops (the streaming read up to the damage, then
`catalogue.damage.locate` reading it again to find the byte), plain and gzip, side by side in one run.

    .venv/bin/python bench/bench_damage.py --papers 50000 [--work DIR]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_archive import paper_rows, write_array  # noqa: E402

from paperproof.catalogue.archive import open_archive  # noqa: E402
from paperproof.catalogue.damage import ArchiveDamaged  # noqa: E402


def read_all(folder: Path) -> tuple[float, int, str | None]:
    started = time.perf_counter()
    rows, message = 0, None
    try:
        for _ in open_archive(str(folder)).papers():
            rows += 1
    except ArchiveDamaged as exc:
        message = str(exc)
    return time.perf_counter() - started, rows, message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=50_000)
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-damage-"))
    whole = work / "whole"
    whole.mkdir(parents=True, exist_ok=True)
    dump = whole / "papers-with-abstracts.json.gz"
    if not dump.exists():
        write_array(dump, paper_rows(args.papers, 1))
    data = gzip.decompress(dump.read_bytes())
    cases = {
        "plain, whole": ("papers-with-abstracts.json", data),
        "plain, cut at half": ("papers-with-abstracts.json", data[: len(data) // 2]),
        "gzip, whole": ("papers-with-abstracts.json.gz", dump.read_bytes()),
        "gzip, cut at half": ("papers-with-abstracts.json.gz", dump.read_bytes()[: dump.stat().st_size // 2]),
    }
    print(f"{args.papers:,} papers: {len(data) / 1e6:,.1f} MB of JSON, {dump.stat().st_size / 1e6:,.1f} MB gzipped")
    timings = {}
    for label, (name, content) in cases.items():
        folder = work / label.replace(", ", "-").replace(" ", "-")
        folder.mkdir(exist_ok=True)
        (folder / name).write_bytes(content)
        seconds, rows, message = read_all(folder)
        timings[label] = seconds
        print(f"{label:<20} {seconds:6.2f} s  {rows:>8,} rows" + (f"  stopped: …{message[-90:]}" if message else ""))
    for kind in ("plain", "gzip"):
        print(f"{kind}: stopping at the damage at half way took {timings[kind + ', cut at half'] / timings[kind + ', whole']:.2f}× "
              "the time of reading the whole intact dump")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
