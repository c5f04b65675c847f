"""The command layer: parse arguments, call one stage function, print what happened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paperproof import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperproof", description="A static catalogue of papers and the code behind them, verified by running it.")
    parser.add_argument("--version", action="version", version=f"paperproof {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    b = commands.add_parser("build", help="build the catalogue site (the bundled snapshot by default)")
    b.add_argument("--archive", help="a directory of archive dumps or parquet folders, or a Hugging Face organisation id")
    b.add_argument("--repos", type=Path, help="a directory of checkouts (owner+name/, owner/name/) or owner+name.tar.gz files")
    b.add_argument("--out", type=Path, default=Path("site"), help="where to write the site (default: site/)")
    b.add_argument("--base-url", default="", help="URL prefix of the published site (default: site-relative links)")
    b.add_argument("--workers", type=int, help="sandbox workers (default: one per core)")
    b.add_argument("--cache", type=Path, default=Path(".paperproof-cache"), help="run cache directory")
    b.add_argument("--no-cache", action="store_true", help="run every sample even when a cached result exists")

    v = commands.add_parser("verify", help="verify the functions of one local repository before publishing it")
    v.add_argument("path", type=Path, help="a checkout of the repository")
    v.add_argument("--json", action="store_true", help="print a JSON array of sample records")
    v.add_argument("--entry", action="append", default=[], metavar="PATH::NAME", help="only this entry (repeatable)")
    v.add_argument("--all", action="store_true", help="verify every entry, not only the most relevant")
    v.add_argument("--workers", type=int)

    args = parser.parse_args(argv)
    if args.command == "build":
        return _build(args)
    return _verify(args)


def _build(args: argparse.Namespace) -> int:
    from paperproof.build.pipeline import BuildConfig, build

    config = BuildConfig(archive=args.archive, repos=args.repos, out=args.out, base_url=args.base_url,
                         workers=args.workers, cache=None if args.no_cache else args.cache)
    try:
        summary = build(config)
    except (FileNotFoundError, NotADirectoryError) as exc:
        print(f"paperproof: {exc}", file=sys.stderr)
        return 2
    for line in summary.lines():
        print(line)
    print(f"open {config.out / 'index.html'} in a browser, or serve it: python -m http.server -d {config.out}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from paperproof.build.verify import verify_path

    if not args.path.is_dir():
        print(f"paperproof: {args.path} is not a directory; give the path of a checkout", file=sys.stderr)
        return 2
    samples = verify_path(args.path, entries=args.entry, everything=args.all, workers=args.workers)
    if args.json:
        import json

        print(json.dumps([s.model_dump(mode="json") for s in samples], indent=2, ensure_ascii=False))
    else:
        for s in samples:
            print(f"{s.status:<16} {s.path}::{s.entry}\n{'':<16} {s.reason}")
    return 0
