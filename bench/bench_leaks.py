"""What the last check before publishing costs (`build.leaks`): reading back every file a build wrote.

Writes a tree shaped like the site (files of about 5 KB, 100 to a folder) with the build's own
`write_file`, then scans it for the secrets of an environment of four secret-looking variables, and
prints both times and their ratio, measured side by side in one run:

    .venv/bin/python bench/bench_leaks.py [--files 50000] [--dir /dev/shm/x]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paperproof.build.leaks import Secrets  # noqa: E402
from paperproof.plumbing.files import write_file  # noqa: E402

ENVIRON = {"GITHUB_TOKEN": "ghp_" + "a1" * 18, "HF_TOKEN": "hf_" + "b2" * 15,
           "AWS_SECRET_ACCESS_KEY": "c3" * 20, "DB_PASSWORD": "d4" * 8}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-leaks-"))
    rng = random.Random(0)
    words = [("".join(rng.choice("abcdefghij<>/= ") for _ in range(8))) for _ in range(512)]
    pages = [(" ".join(rng.choice(words) for _ in range(rng.randint(300, 900)))).encode() for _ in range(64)]
    try:
        started = time.perf_counter()
        for i in range(args.files):
            folder = work / f"d{i // 100:05d}"
            if i % 100 == 0:
                folder.mkdir()
            write_file(folder / f"f{i % 100}.html", pages[i % len(pages)])
        written = time.perf_counter() - started
        size = sum(len(pages[i % len(pages)]) for i in range(args.files))
        secrets = Secrets(ENVIRON)
        started = time.perf_counter()
        read = secrets.check_tree(work)
        scanned = time.perf_counter() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"files: {args.files:,}, {size / 1e6:.1f} MB, {len(secrets.forms)} secret forms looked for")
    print(f"write with write_file: {written:.2f} s ({args.files / written:,.0f} files/s)")
    print(f"leak check:            {scanned:.2f} s ({read / scanned:,.0f} files/s, {size / 1e6 / scanned:.0f} MB/s)")
    print(f"check / write: {scanned / written:.2f}")
    print(f"at 2,226,005 files: about {2_226_005 / (read / scanned):.0f} s of checking")


if __name__ == "__main__":
    main()
