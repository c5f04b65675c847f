"""The command layer: parse arguments, call one stage function, print what happened.

Everything it prints goes out through `_say`, the warnings and a crash's traceback too: checked first for
the builder's secrets (`build.leaks`), then written with every control character a repository may have put
in a name, path, message or output escaped (`plumbing.terminal`), one line of ours per line.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import traceback
import warnings
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import TextIO

from paperproof import __version__
from paperproof.plumbing.terminal import shown


def main(argv: list[str] | None = None) -> int:
    from paperproof.plumbing import host_process

    host_process.shield()  # nothing this command starts may read its environment or memory
    sys.excepthook = _crashed
    warnings.showwarning = _warned
    # A repository's own `1if x` or `"\d"` makes `ast.parse` warn about its code on every read; nothing to act on here.
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    args = parser().parse_args(argv)
    _OUTPUT[0] = f"the output of {args.command}"
    refused = _refused(args)  # a usage error answers at once: before the stages (and torch) are imported
    if refused is not None:
        _say(f"paperproof: {refused}", err=True)
        return 2
    from paperproof.build.leaks import Leak
    from paperproof.plumbing import interrupts

    published = _published(args)
    with interrupts.caught():  # Ctrl-C and SIGTERM end every process started, then unwind to here
        try:
            if args.command == "build":
                return _build(args)
            if args.command == "harvest":
                return _harvest(args)
            if args.command == "mcp":
                return _mcp(args)
            return _verify(args)
        except Leak as exc:  # what was to be printed held a secret: nothing of it was printed
            _say(f"paperproof: {exc}", err=True, checked=False)
            return 2
        except KeyboardInterrupt as interrupt:
            return _interrupted(args, interrupt, published)


_OUTPUT = ["the output of paperproof"]  # what a leak found in what `_say` was given is called (the command's)


def _say(*lines: str, err: bool = False, checked: bool = True, more: Iterable[tuple[str, bool]] = ()) -> None:
    """Print `lines` (to stderr with `err`), then each (line, to stderr) of `more`: all of them checked for the
    builder's secrets before any is written (`leaks.Leak`, and nothing printed), each written as one line
    with its control characters escaped (`plumbing.terminal.shown`)."""
    out = [(line, err) for line in lines] + list(more)
    if checked:
        from paperproof.build.leaks import taken

        taken().check_text("\n".join(line for line, _ in out), _OUTPUT[0])
    for line, to_stderr in out:
        stream: TextIO = sys.stderr if to_stderr else sys.stdout
        stream.write(shown(line) + "\n")
    sys.stdout.flush()


def _crashed(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    """An uncaught exception's traceback, through `_say` (its message may quote a repository)."""
    lines = "".join(traceback.format_exception(kind, value, tb)).rstrip("\n").split("\n")
    try:
        _say(*lines, err=True)
    except Exception as exc:  # noqa: BLE001 - a secret in it, or no stream left: say no more than its kind
        (sys.__stderr__ or sys.stderr).write(f"paperproof: stopped by {kind.__name__} ({type(exc).__name__} "
                                             "printing it)\n")


def _warned(message: Warning | str, category: type[Warning], filename: str, lineno: int,
            file: TextIO | None = None, line: str | None = None) -> None:
    """A warning, through `_say`: `ast.parse` warns about a repository's modules. Never with the source line:
    `linecache` would read the file name (relative to the checkout) from this process's working folder."""
    text = warnings.formatwarning(message, category, filename, lineno, line or "").rstrip("\n")
    try:
        _say(*text.split("\n"), err=True)
    except Exception:  # noqa: BLE001 - a warning that would print a secret is not printed
        pass


BUILD_HELP = """\
exit status:
  0  built (or, with --check, the site on disk is what a build would write)
  1  --check only: the site on disk is stale
  2  bad usage or setup: a missing archive, an --out or --cache that is not paperproof's, a build running
  3  an input could not be read to its end (cut short, corrupt): nothing was published, the site is as it was
  130 interrupted (Ctrl-C; 143 for SIGTERM): every worker is ended, the site is as it was unless the build
      had published it, and the runs finished are kept in --cache; one line says which

environment:
  SOURCE_DATE_EPOCH     date the site by this time (seconds since 1970) instead of the archive snapshot
  PAGEFIND_BINARY_PATH  the Pagefind binary for search (default: the one of the pagefind[bin] package)
  HF_TOKEN, HF_HOME     read by the datasets library when --archive is a Hugging Face organisation id

examples:
  paperproof build                                        # the bundled catalogue into site/
  paperproof build --archive /data/pwc --repos /data/checkouts --out site
  paperproof build --archive pwc-archive --store .paperproof-store --base-url https://example.org/catalogue
  paperproof build --check                                # exit 1 when site/ is stale

Serve the site to browse it (root-relative links need a web server):
  python3 -m http.server -d site 8000    then open http://localhost:8000/
"""

VERIFY_HELP = """\
exit status:
  0  nothing found: every sample ran clean, or was charged to our fixture or our drafted contract
  1  a contract violation, a departure from a paper's definition, or an attempt the sandbox blocked
  2  bad usage: PATH is not a folder, an --entry names no entry, a bad --limit
  130 interrupted (Ctrl-C; 143 for SIGTERM): every worker is ended, no verdict; one line says what was kept

The closing summary (counts by status, then each finding once, as `path:line entry: reason`: a contract
violation, a departure from a paper's definition, an attempt the sandbox blocked; and, when most samples
were cut short by their budget, the --limit to give them more) goes to stdout, or, with --json, to stderr,
so that stdout holds only the JSON array.

environment: none read (the sandbox passes only PATH, LANG, LC_ALL, CUDA_VISIBLE_DEVICES and TMPDIR to the code).

examples:
  paperproof verify .                                      # the most relevant entries of this checkout
  paperproof verify . --entry dynamics_maps/metrics.py::confidence --json
  paperproof verify . --all --limit wall_seconds=5
"""

HARVEST_HELP = """\
exit status:
  0  every repository is settled
  2  bad usage, or the harvest stopped for another reason (it says which)
  75 GitHub's rate limit stopped it: run it again after the time it names, and it resumes
  130 interrupted (Ctrl-C; 143 for SIGTERM): what was settled is kept in --store, and a rerun resumes

environment:
  GITHUB_TOKEN  a GitHub token (no scope needed for public repositories): 5,000 requests an hour instead of 60

examples:
  GITHUB_TOKEN=... paperproof harvest --archive /data/pwc --store .paperproof-store
  paperproof harvest --from-checkouts /tmp/checkouts --results-only   # remake the bundled shipped records
  paperproof harvest --archive /data/pwc --api-url https://github.example.org/api/v3
"""

MCP_HELP = """\
exit status:
  0  the client closed the connection
  2  bad usage: --site is not a site paperproof built

An MCP client starts it and speaks JSON-RPC on its stdin and stdout; it writes its log to stderr.
Client configuration and the tools: docs/programs.md.

examples:
  paperproof mcp --site site
"""


class _Help(argparse.RawDescriptionHelpFormatter):
    """Each option's default after its help (where it has one the help does not already give), and the epilog
    (exit status, environment, examples) as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, [], "", argparse.SUPPRESS) or "default" in text:
            return text
        return f"{text} (default: %(default)s)"


# The user's cache, never the working folder: `verify .` runs in the checkout, which would then choose what is
# read back as an environment it installed.
DEFAULT_ENVIRONMENTS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "paperproof" / "envs"
DEFAULT_VERIFY_CACHE = DEFAULT_ENVIRONMENTS.parent  # verify's run results, under its runs/ as a build's are


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paperproof", description="A static catalogue of papers and the code behind them, verified by running it.",
                                     epilog="Run `paperproof COMMAND --help` for a command's options, exit status, "
                                            "environment variables and examples.")
    parser.add_argument("--version", action="version", version=f"paperproof {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    b = commands.add_parser("build", help="build the catalogue site (the bundled snapshot by default)",
                            description=textwrap.fill("Build the catalogue site: every paper, repository and sample as a page and "
                                        "a JSON twin, published atomically into --out.", 100),
                            epilog=BUILD_HELP, formatter_class=_Help)
    b.add_argument("--archive", help="a directory of archive dumps or parquet folders, or a Hugging Face organisation id "
                                     "(default: the bundled snapshot)")
    sources = b.add_mutually_exclusive_group()
    sources.add_argument("--repos", type=Path, help="a directory of checkouts (owner+name/, owner/name/) or owner+name.tar.gz "
                                                    "files; added to the bundled specimens' own when --archive is not given")
    sources.add_argument("--store", type=Path, help="a harvest store written by `paperproof harvest`")
    b.add_argument("--out", type=Path, default=Path("site"),
                   help="where to write the site: a new or empty folder, or a site paperproof built")
    b.add_argument("--base-url", default="", help="URL prefix of the published site (default: none, site-relative links)")
    b.add_argument("--workers", type=int, help="sandbox workers (default: one per core)")
    b.add_argument("--cache", type=Path, default=Path(".paperproof-cache"),
                   help="run results and site manifests: a new or empty folder, or a cache paperproof made")
    b.add_argument("--no-cache", action="store_true", help="run every sample even when a cached result exists")
    b.add_argument("--scheduler", metavar="ADDRESS", help="run samples on a Dask distributed cluster (default: a local pool)")
    b.add_argument("--jobs", type=int, help="render processes (default: one per core)")
    b.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 when the site on disk is stale (a build would change it), 0 when not")
    b.add_argument("--allow-partial", action="store_true",
                   help="when a dump cannot be read to its end, build from the rows before the damage; the summary and "
                        "the front page say the catalogue is partial")
    b.add_argument("--environments", type=Path, metavar="DIR",
                   help="install each repository's missing imports from wheels (uv) into cached environments under DIR")

    v = commands.add_parser("verify", help="verify the functions of one local repository before publishing it",
                            description=textwrap.fill("Extract the entries of one checkout, run them in the sandbox on synthesized "
                                        "fixtures and check them as a build would; print one record per sample.", 100),
                            epilog=VERIFY_HELP, formatter_class=_Help)
    v.add_argument("path", type=Path, help="a checkout of the repository")
    v.add_argument("--json", action="store_true", help="print a JSON array of sample records (and nothing else) on stdout")
    v.add_argument("--entry", action="append", default=[], metavar="PATH::NAME",
                   help="only this entry (repeatable); naming no entry of the checkout is an error")
    v.add_argument("--all", action="store_true", help="verify every entry, not only the most relevant")
    v.add_argument("--workers", type=int, help="sandbox workers (default: one per core)")
    v.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE", type=_limit,
                   help="a sandbox limit for each sample, e.g. wall_seconds=5 (repeatable)")
    v.add_argument("--environments", type=Path, default=DEFAULT_ENVIRONMENTS, metavar="DIR",
                   help=f"where the checkout's missing imports are installed from wheels, cached (default: {DEFAULT_ENVIRONMENTS})")
    v.add_argument("--no-install", action="store_true", help="install nothing: imports the runner lacks get stand-ins")
    v.add_argument("--cache", type=Path, default=DEFAULT_VERIFY_CACHE, metavar="DIR",
                   help="run results kept by what decides them (the entry's code and the modules it imports, the "
                        "checkout's other files, the limits, the environment, paperproof's verdict code), so an "
                        f"unchanged rerun starts no sandbox (default: {DEFAULT_VERIFY_CACHE})")
    v.add_argument("--no-cache", action="store_true", help="run every sample in the sandbox; read and keep no result")

    h = commands.add_parser("harvest", help="ask GitHub about every linked repository and store pinned snapshots",
                            description=textwrap.fill("Ask the GitHub REST API about every repository the archive links, and store "
                                        "a pinned, checked snapshot of each in a content-addressed store.", 100),
                            epilog=HARVEST_HELP, formatter_class=_Help)
    h.add_argument("--archive", help="a directory of archive dumps or parquet folders, or a Hugging Face organisation id "
                                     "(default: the bundled snapshot)")
    h.add_argument("--store", type=Path, default=Path(".paperproof-store"), help="the harvest store")
    h.add_argument("--api-url", default="https://api.github.com", help="REST API base URL (GitHub Enterprise: https://HOST/api/v3)")
    h.add_argument("--concurrency", type=int, default=4, help="repositories asked about at once")
    h.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    h.add_argument("--retries", type=int, default=3, help="retries on 5xx, timeouts and broken answers")
    h.add_argument("--max-wait", type=float, default=300.0,
                   help="longest rate-limit wait in seconds before stopping to resume later")
    h.add_argument("--from-checkouts", type=Path, metavar="DIR",
                   help="verify the linked repositories checked out under DIR (owner+name/, each with a .git naming "
                        "its commit) instead of asking GitHub; with --results-only")
    h.add_argument("--results-only", action="store_true",
                   help="write verification records without any source (code sha256, statuses, fixtures, outputs) "
                        "into --into, the bundled snapshot's by default, instead of storing snapshots")
    h.add_argument("--into", type=Path, help="where --results-only writes the records (default: the package's "
                                             "bundled paperproof/snapshot/results)")
    h.add_argument("--workers", type=int, help="sandbox workers for --from-checkouts (default: one per core)")
    h.add_argument("--cache", type=Path, default=Path(".paperproof-cache"),
                   help="run results reused by --from-checkouts (a build's cache)")
    h.add_argument("--environments", type=Path, default=DEFAULT_ENVIRONMENTS, metavar="DIR",
                   help=f"where --from-checkouts installs each checkout's missing imports (default: {DEFAULT_ENVIRONMENTS})")

    m = commands.add_parser("mcp", help="serve a built site to MCP clients over stdio (papers, samples, code, search)",
                            description=textwrap.fill("An MCP server over stdio that answers from the JSON twins of a built "
                                        "site: a paper by arXiv id or slug, its samples, code by sha256, search.", 100),
                            epilog=MCP_HELP, formatter_class=_Help)
    m.add_argument("--site", type=Path, default=Path("site"), help="a site `paperproof build` wrote")
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


def _refused(args: argparse.Namespace) -> str | None:
    """A usage error in the paths `build` and `harvest` are given, told in a moment: before the stages (and
    torch) are imported. The stages check again, should a path change meanwhile. `verify` checks its own."""
    if args.command not in ("build", "harvest"):
        return None
    wrong = _archive_refused(args.archive)
    if wrong is not None:
        return wrong
    if args.command == "harvest":
        if args.from_checkouts is None and not args.results_only:
            return None
        if args.from_checkouts is None or not args.results_only:
            return ("--from-checkouts DIR and --results-only go together: records are made from checkouts, and "
                    "their source is never stored")
        return None if args.from_checkouts.is_dir() else f"--from-checkouts {args.from_checkouts}: not a directory"
    if args.repos is not None and not args.repos.is_dir():
        return f"--repos {args.repos}: not a directory"
    if args.store is not None and not (args.store / "records").is_dir():
        return f"--store {args.store}: no harvest store here (run paperproof harvest --store {args.store})"
    from paperproof.build.guard import NotOurs, check_cache, check_out

    try:
        if not args.check:
            check_out(args.out)
        if not args.no_cache:
            check_cache(args.cache)
    except NotOurs as exc:
        return str(exc)
    return None


def _archive_refused(location: str | None) -> str | None:
    """Why `--archive` names no archive, or None: a path (it has a slash, or starts with `.` or `~`) must be a
    folder; a bare name is a Hugging Face organisation id, which only the stage can look up."""
    if location is None:
        return None
    path = Path(location)
    if path.is_dir():
        return None
    if path.exists():
        return f"--archive {location}: not a folder; it takes a folder of dumps or parquet folders, or a Hugging " \
               "Face organisation id"
    if "/" in location or location.startswith((".", "~")):
        return f"--archive {location}: no such directory"
    return None


def _published(args: argparse.Namespace) -> bytes | None:
    """The id of the site on disk that `build` replaces (its marker), to tell after an interrupt whether a new
    one was published; None for other commands, or where there is no site."""
    if args.command != "build" or args.check:
        return None
    from paperproof.build.manifest import MARKER

    try:
        return (args.out / MARKER).read_bytes()
    except OSError:
        return None


def _interrupted(args: argparse.Namespace, interrupt: KeyboardInterrupt, published: bytes | None) -> int:
    """One line on Ctrl-C or SIGTERM, once the command's processes are ended and it has unwound: what stopped
    and what was kept. Exits 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM."""
    import threading

    from paperproof.plumbing import interrupts

    how = f"ended by {interrupt}" if isinstance(interrupt, interrupts.Terminated) else "interrupted (Ctrl-C)"
    try:
        _say(f"paperproof: {how}: {_kept(args, published)}", err=True)
    except Exception:  # noqa: BLE001 - a secret in a path given: the line without them
        _say(f"paperproof: {how}", err=True, checked=False)
    status = interrupts.exit_status(interrupt)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stderr.flush()
        os._exit(status)  # a thread still blocked in a request or a read would hold the exit up, for nothing
    return status


def _kept(args: argparse.Namespace, published: bytes | None) -> str:
    """What an interrupted command leaves, in words: the site, the cached runs, the store."""
    if args.command == "build":
        if args.check:
            site = "nothing was written (--check)"
        elif _published(args) != published:
            site = f"{args.out} holds the site this build published"
        else:
            site = f"nothing was published: {args.out} is as it was"
        return site + ("" if args.no_cache else
                       f"; the runs finished so far are kept in {args.cache}, and the next build starts from them")
    if args.command == "verify":
        kept = [] if args.no_cache else [f"the runs finished so far are kept in {args.cache}"]
        if not args.no_install:
            kept.append(f"what was installed is kept in {args.environments}")
        return f"no verdict; {args.path} was not changed" + "".join(f"; {k}" for k in kept)
    if args.command == "harvest" and args.results_only:
        return (f"the records written so far are kept in {args.into or 'the bundled results'}, the runs finished so "
                f"far in {args.cache}")
    if args.command == "harvest":
        return f"the repositories settled so far are kept in {args.store}: run the same command again to resume"
    return "stopped"


def _build(args: argparse.Namespace) -> int:
    from paperproof.build.leaks import Leak
    from paperproof.build.pipeline import BuildConfig, build
    from paperproof.catalogue.damage import ArchiveDamaged
    from paperproof.plumbing.locks import Busy

    config = BuildConfig(archive=args.archive, repos=args.repos, out=args.out, base_url=args.base_url,
                         workers=args.workers, cache=None if args.no_cache else args.cache, store=args.store,
                         scheduler=args.scheduler, jobs=args.jobs, check=args.check, allow_partial=args.allow_partial,
                         environments=args.environments)
    try:
        summary = build(config)
    except ArchiveDamaged as exc:
        _say(f"paperproof: {exc}",
             f"paperproof: nothing was published: {config.out} is as it was. Fetch the file again, or pass "
             "--allow-partial to build from the rows before the damage (the site then says it is partial).", err=True)
        return 3
    except Leak as exc:
        _say(f"paperproof: {exc}", err=True, checked=False)
        return 2
    except (FileNotFoundError, NotADirectoryError, Busy, ValueError) as exc:
        _say(f"paperproof: {exc}", err=True)
        return 2
    if config.check:
        _say(*summary.lines())
        return 1 if summary.is_stale else 0
    _say(*summary.lines(), f"to browse it, serve it (its links are root-relative, so opened as a file it has no "
         f"styles and dead links): python3 -m http.server -d {config.out} 8000, then open http://localhost:8000/")
    return 0


def _harvest(args: argparse.Namespace) -> int:
    """Exit 0 when every repository is settled, 75 (try again later) when the API's rate limit stopped it."""
    import os

    if args.from_checkouts is not None or args.results_only:
        return _results(args)

    from paperproof.catalogue.harvest import HarvestConfig, harvest
    from paperproof.plumbing.locks import Busy

    config = HarvestConfig(archive=args.archive, store=args.store, api_url=args.api_url, concurrency=args.concurrency,
                           timeout=args.timeout, retries=args.retries, max_wait=args.max_wait,
                           token=os.environ.get("GITHUB_TOKEN") or None)
    from paperproof.build import leaks

    leaks.take()  # the token lives in the harvest's client only, not in an environment anything inherits
    try:
        summary = harvest(config)
    except (FileNotFoundError, NotADirectoryError, Busy, ValueError) as exc:
        _say(f"paperproof: {exc}", err=True)
        return 2
    _say(*summary.lines())
    if summary.complete:
        return 0
    return 2 if summary.resume_after is None else 75


def _results(args: argparse.Namespace) -> int:
    """`harvest --from-checkouts DIR --results-only`: exit 0 when written, 2 for bad usage or a refused checkout."""
    from paperproof.build.regenerate import regenerate
    from paperproof.build.shipped import bundled_results
    from paperproof.verify.stage import RunSettings

    # absolute: the sandbox's processes do not run in this folder
    settings = RunSettings(workers=args.workers, cache=args.cache.resolve(), environments=args.environments.resolve())
    try:
        summary = regenerate(args.from_checkouts, args.into or bundled_results(), archive=args.archive,
                             settings=settings)
    except (FileNotFoundError, NotADirectoryError, ValueError) as exc:
        _say(f"paperproof: {exc}", err=True)
        return 2
    _say(*summary.lines())
    return 2 if summary.refused else 0


def _mcp(args: argparse.Namespace) -> int:
    """Serve the site until the client closes stdin; exit 2 when --site is not a site paperproof built (said
    before the SDK is imported)."""
    from paperproof.serve.mcp_site import SiteReader

    try:
        reader = SiteReader(args.site)
    except FileNotFoundError as exc:
        _say(f"paperproof: {exc}", err=True)
        return 2
    from paperproof.serve.mcp_server import serve

    serve(reader)
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Exit 0 when nothing was found, 1 for a violation, a departure or a blocked attempt, 2 for bad usage
    (or for output that would carry a secret of the environment or of a host file)."""
    from collections import Counter

    from paperproof.build import leaks

    leaks.take()
    if not args.path.is_dir():
        _say(f"paperproof: {args.path} is not a directory; give the path of a checkout", err=True)
        return 2
    if not args.no_install and args.environments.resolve().is_relative_to(args.path.resolve()):
        _say(f"paperproof: --environments {args.environments} lies inside the checkout {args.path}, which would "
             "choose what is read back as installed; give a folder outside it", err=True)
        return 2
    if not args.no_cache and (refused := _verify_cache_refused(args.cache, args.path)):
        _say(f"paperproof: {refused}", err=True)
        return 2
    from paperproof.verify.checkout import NoSuchEntry, verify_checkout  # after the usage errors: it imports torch
    from paperproof.verify.findings import budget_hint, drivers_line, findings, summary

    try:
        verified = verify_checkout(args.path, entries=args.entry, everything=args.all, workers=args.workers,
                                   limits=dict(args.limit) or None,
                                   environments=None if args.no_install else args.environments,
                                   cache=None if args.no_cache else args.cache.resolve())
    except NoSuchEntry as exc:
        _say(f"paperproof: {exc}", err=True)
        return 2
    samples = verified.samples
    if args.json:
        import json

        # structural newlines only: JSON writes a string's own as `\n`
        lines = json.dumps([s.model_dump(mode="json") for s in samples], indent=2, ensure_ascii=False).split("\n")
    else:
        lines = [line for s in samples for line in (f"{s.status:<16} {s.path}::{s.entry}", f"{'':<16} {s.reason}")]
    found = findings(samples)
    counts = Counter(s.status for s in samples)
    closing = [f"verified {len(samples)} sample(s) of {args.path}: "
               + (", ".join(f"{status} {n}" for status, n in sorted(counts.items())) or "no entry to verify")]
    closing.append(f"sandbox runs: {verified.ran}, from cache: {verified.from_cache}"
                   + ("" if not args.no_cache else " (--no-cache)"))
    closing += drivers_line(verified.drivers, samples)
    closing += summary(found)  # each finding once, as `path:line entry: reason`
    hint = budget_hint(samples)
    if hint is not None:
        closing.append(hint)
    _say(*lines, more=[(line, args.json) for line in closing])  # a secret in any of it: nothing printed, exit 2
    return 1 if found else 0


def _verify_cache_refused(cache: Path, checkout: Path) -> str | None:
    """Why verify's `--cache` cannot hold its results, or None (it is then tagged as paperproof's): inside the
    checkout, the checkout would choose what is read back as a result; a folder of other files is not ours."""
    if cache.resolve().is_relative_to(checkout.resolve()):
        return (f"--cache {cache} lies inside the checkout {checkout}, which would choose what is read back as a "
                "result; give a folder outside it, or --no-cache")
    from paperproof.build.guard import NotOurs, check_cache, claim_cache

    try:
        check_cache(cache)
        claim_cache(cache)
    except NotOurs as exc:
        return str(exc)
    except OSError as exc:
        return f"--cache {cache}: cannot be made ({exc.strerror})"
    return None
