"""The command layer: parse arguments, call one stage function, print what happened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paperproof import __version__


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "build":
        return _build(args)
    if args.command == "harvest":
        return _harvest(args)
    return _verify(args)


DEFAULT_ENVIRONMENTS = Path(".paperproof-cache/envs")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paperproof", description="A static catalogue of papers and the code behind them, verified by running it.")
    parser.add_argument("--version", action="version", version=f"paperproof {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    b = commands.add_parser("build", help="build the catalogue site (the bundled snapshot by default)")
    b.add_argument("--archive", help="a directory of archive dumps or parquet folders, or a Hugging Face organisation id")
    sources = b.add_mutually_exclusive_group()
    sources.add_argument("--repos", type=Path, help="a directory of checkouts (owner+name/, owner/name/) or owner+name.tar.gz files")
    sources.add_argument("--store", type=Path, help="a harvest store written by `paperproof harvest`")
    b.add_argument("--out", type=Path, default=Path("site"), help="where to write the site (default: site/)")
    b.add_argument("--base-url", default="", help="URL prefix of the published site (default: site-relative links)")
    b.add_argument("--workers", type=int, help="sandbox workers (default: one per core)")
    b.add_argument("--cache", type=Path, default=Path(".paperproof-cache"), help="run cache directory")
    b.add_argument("--no-cache", action="store_true", help="run every sample even when a cached result exists")
    b.add_argument("--scheduler", metavar="ADDRESS", help="run samples on a Dask distributed cluster (default: a local pool)")
    b.add_argument("--jobs", type=int, help="render processes (default: one per core)")
    b.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when the site on disk is stale (a build would change it), 0 when not")
    b.add_argument("--environments", type=Path, metavar="DIR",
                   help="install each repository's missing imports from wheels (uv) into cached environments under DIR")

    v = commands.add_parser("verify", help="verify the functions of one local repository before publishing it")
    v.add_argument("path", type=Path, help="a checkout of the repository")
    v.add_argument("--json", action="store_true", help="print a JSON array of sample records")
    v.add_argument("--entry", action="append", default=[], metavar="PATH::NAME", help="only this entry (repeatable)")
    v.add_argument("--all", action="store_true", help="verify every entry, not only the most relevant")
    v.add_argument("--workers", type=int)
    v.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE", type=_limit,
                   help="a sandbox limit for each sample, e.g. wall_seconds=5 (repeatable)")
    v.add_argument("--environments", type=Path, default=DEFAULT_ENVIRONMENTS, metavar="DIR",
                   help=f"where the checkout's missing imports are installed from wheels, cached (default: {DEFAULT_ENVIRONMENTS})")
    v.add_argument("--no-install", action="store_true", help="install nothing: imports the runner lacks get stand-ins")

    h = commands.add_parser("harvest", help="ask GitHub about every linked repository and store pinned snapshots")
    h.add_argument("--archive", help="a directory of archive dumps or parquet folders, or a Hugging Face organisation id")
    h.add_argument("--store", type=Path, default=Path(".paperproof-store"), help="the harvest store (default: .paperproof-store/)")
    h.add_argument("--api-url", default="https://api.github.com", help="REST API base URL (GitHub Enterprise: https://HOST/api/v3)")
    h.add_argument("--concurrency", type=int, default=4, help="repositories asked about at once (default: 4)")
    h.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default: 30)")
    h.add_argument("--retries", type=int, default=3, help="retries on 5xx, timeouts and broken answers (default: 3)")
    h.add_argument("--max-wait", type=float, default=300.0,
                   help="longest rate-limit wait in seconds before stopping to resume later (default: 300)")
    return parser


def _limit(text: str) -> tuple[str, float]:
    """`NAME=VALUE` for a field of `runner.sandbox.Limits`."""
    from dataclasses import fields

    from paperproof.runner.sandbox import Limits

    name, _, value = text.partition("=")
    kinds = {f.name: f.type for f in fields(Limits)}
    if name not in kinds:
        raise argparse.ArgumentTypeError(f"unknown limit {name!r}; one of {', '.join(kinds)}")
    try:
        return name, float(value) if kinds[name] in (float, "float") else int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"limit {name} needs a number, got {value!r}") from None


def _build(args: argparse.Namespace) -> int:
    from paperproof.build.pipeline import BuildConfig, build
    from paperproof.plumbing.locks import Busy

    config = BuildConfig(archive=args.archive, repos=args.repos, out=args.out, base_url=args.base_url,
                         workers=args.workers, cache=None if args.no_cache else args.cache, store=args.store,
                         scheduler=args.scheduler, jobs=args.jobs, check=args.check, environments=args.environments)
    try:
        summary = build(config)
    except (FileNotFoundError, NotADirectoryError, Busy, ValueError) as exc:
        print(f"paperproof: {exc}", file=sys.stderr)
        return 2
    for line in summary.lines():
        print(line)
    if config.check:
        return 1 if summary.pages.get("stale") else 0
    print(f"open {config.out / 'index.html'} in a browser, or serve it: python -m http.server -d {config.out}")
    return 0


def _harvest(args: argparse.Namespace) -> int:
    """Exit 0 when every repository is settled, 75 (try again later) when the API's rate limit stopped it."""
    import os

    from paperproof.catalogue.harvest import HarvestConfig, harvest
    from paperproof.plumbing.locks import Busy

    config = HarvestConfig(archive=args.archive, store=args.store, api_url=args.api_url, concurrency=args.concurrency,
                           timeout=args.timeout, retries=args.retries, max_wait=args.max_wait,
                           token=os.environ.get("GITHUB_TOKEN") or None)
    try:
        summary = harvest(config)
    except (FileNotFoundError, NotADirectoryError, Busy, ValueError) as exc:
        print(f"paperproof: {exc}", file=sys.stderr)
        return 2
    for line in summary.lines():
        print(line)
    if summary.complete:
        return 0
    return 2 if summary.resume_after is None else 75


def _verify(args: argparse.Namespace) -> int:
    from paperproof.verify.checkout import verify_path

    if not args.path.is_dir():
        print(f"paperproof: {args.path} is not a directory; give the path of a checkout", file=sys.stderr)
        return 2
    samples = verify_path(args.path, entries=args.entry, everything=args.all, workers=args.workers,
                          limits=dict(args.limit) or None, environments=None if args.no_install else args.environments)
    if args.json:
        import json

        print(json.dumps([s.model_dump(mode="json") for s in samples], indent=2, ensure_ascii=False))
    else:
        for s in samples:
            print(f"{s.status:<16} {s.path}::{s.entry}\n{'':<16} {s.reason}")
    return 0
