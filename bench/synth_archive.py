"""A synthetic Papers with Code archive with the real schemas, at full size by default.

Writes `papers-with-abstracts.json.gz` (576,261 rows, the 18 columns of the real dump, methods nested
with their descriptions) and `links-between-papers-and-code.json.gz` (300,161 rows, the 10 columns),
plus `snapshot.json`. Field sizes follow the real archive: titles of 6–16 words, one to a dozen
authors, abstracts of about 1 KB (some with LaTeX, URLs, `<`, `&`, underscores), tasks drawn from a
Zipf-like vocabulary of 4,500, methods from a pool of 2,000. Links are shuffled (the real dump is not
sorted by paper), most papers with code have one repository and a few have many, popular repositories
are linked by many papers, and a few links point at papers the papers dump does not hold.

Deterministic for a seed. `--change N --drop M` rewrites an existing archive's papers dump with N
papers edited and M removed (for incremental-build measurements).

    .venv/bin/python bench/synth_archive.py OUT [--papers 576261 --links 300161 --seed 1]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

PAPERS = 576_261
LINKS = 300_161
SNAPSHOT = "2025-07-28"

_SYLLABLES = ("ka", "lo", "mi", "ne", "ra", "ti", "so", "vu", "de", "ga", "ber", "lin", "mar", "tor", "sen", "dal",
              "qui", "zan", "fel", "hu", "ya", "po", "shi", "chen", "wang", "li", "zh", "an", "el", "or")
_WORDS = ("learning model network neural data training deep method approach performance task propose results "
          "based show state-of-the-art dataset novel framework representation image language attention features "
          "graph problem information tasks existing experiments models methods architecture accuracy demonstrate "
          "learn large efficient robust semantic generation segmentation detection classification reinforcement "
          "policy agent reward optimization gradient loss function objective convex stochastic bound theoretical "
          "analysis empirical benchmark evaluation transformer convolutional recurrent embedding latent variational "
          "generative adversarial diffusion contrastive self-supervised unsupervised supervised few-shot zero-shot "
          "transfer domain adaptation generalization robustness fairness privacy federated distributed scalable "
          "sparse dense memory inference sampling prior posterior bayesian uncertainty calibration hardness samples "
          "noisy labels curriculum cartography confidence variability the of and to in for with on by we that is "
          "this our are from as which can be an these using both while also than into across".split())
_FRAMEWORKS = ("pytorch", "tf", "none", "jax", "mxnet", "paddle", "caffe2", "torch")
_AREAS = ("Computer Vision", "Natural Language Processing", "Reinforcement Learning", "General", "Graphs",
          "Audio", "Sequential")
_VENUES = ("NeurIPS", "ICML", "ICLR", "CVPR", "ACL", "EMNLP", "AAAI", "IJCAI", "ECCV", "ICCV", "KDD", "NAACL")


def _name(rng: random.Random, parts: int = 2) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        s = _sentence(rng, 8, 28)
        roll = rng.random()
        if roll < 0.06:
            s = s[:-1] + f" with $\\mathcal{{O}}(n^{rng.randint(2, 3)})$ cost."
        elif roll < 0.10:
            s = s[:-1] + f" (code: https://github.com/{_name(rng).lower()}/{_name(rng).lower()})."
        elif roll < 0.12:
            s = s[:-1] + f" & improves accuracy by {rng.randint(1, 30)}.{rng.randint(0, 9)}% (p < 0.05)."
        elif roll < 0.15:
            s = s[:-1] + f" on the {_name(rng).upper()}_{rng.randint(1, 9)} split."
        out.append(s)
        length += len(s) + 1
    return " ".join(out)


class Vocabulary:
    def __init__(self, rng: random.Random) -> None:
        self.tasks = sorted({" ".join(_name(rng, rng.randint(2, 3)) for _ in range(rng.randint(1, 3)))
                             for _ in range(4_600)})[:4_500]
        rng.shuffle(self.tasks)
        self.task_weights = list(itertools.accumulate(1.0 / (i + 1) ** 0.9 for i in range(len(self.tasks))))
        self.methods = []
        for i in range(2_000):
            name = _name(rng, rng.randint(2, 4)) + (str(i) if i % 7 == 0 else "")
            self.methods.append({
                "name": name, "full_name": f"{name} {_name(rng)}", "description": _text(rng, rng.randint(200, 1200)),
                "introduced_year": rng.choice((2000, rng.randint(1990, 2024))),
                "source_url": f"https://arxiv.org/abs/{rng.randint(1000, 2412)}.{rng.randint(10000, 99999)}v1",
                "source_title": _sentence(rng, 4, 10)[:-1],
                "code_snippet_url": rng.choice((None, f"https://github.com/{name.lower()}/{name.lower()}/blob/main/model.py#L{rng.randint(1, 900)}")),
                "main_collection": {"name": _name(rng, 3), "description": _sentence(rng, 6, 14),
                                    "parent": rng.choice((None, _name(rng, 2))), "area": rng.choice(_AREAS)},
            })
        self.method_weights = list(itertools.accumulate(1.0 / (i + 1) ** 0.8 for i in range(len(self.methods))))


def paper_rows(count: int, seed: int) -> Iterator[dict]:
    rng = random.Random(seed)
    vocab = Vocabulary(rng)
    seen: set[str] = set()
    for i in range(count):
        title = _sentence(rng, 6, 16)[:-1]
        base = "-".join(title.lower().replace("$", "").split()[:6])[:60].strip("-")
        slug, n = base, 0
        while slug in seen:
            n += 1
            slug = f"{base}-{n}"
        seen.add(slug)
        arxiv = f"{rng.randint(1000, 2507):04d}.{rng.randint(1000, 99999):05d}" if rng.random() < 0.8 else None
        year = rng.randint(2010, 2025)
        date = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if rng.random() < 0.97 else None
        venue = rng.choice(_VENUES)
        yield {
            "paper_url": f"https://paperswithcode.com/paper/{slug}",
            "arxiv_id": arxiv,
            "nips_id": None,
            "openreview_id": rng.choice((None,) * 9 + (f"{_name(rng, 4)}{rng.randint(10, 99)}",)),
            "title": title,
            "abstract": _text(rng, max(200, int(rng.gauss(1000, 300)))) if rng.random() < 0.99 else None,
            "short_abstract": None,
            "url_abs": f"https://arxiv.org/abs/{arxiv}v{rng.randint(1, 3)}" if arxiv else f"https://openreview.net/forum?id=x{i}",
            "url_pdf": f"https://arxiv.org/pdf/{arxiv}v1.pdf" if arxiv else None,
            "proceeding": f"{venue} {year} {rng.randint(1, 12)}" if rng.random() < 0.3 else None,
            "authors": [f"{_name(rng)} {_name(rng, rng.randint(2, 3))}" for _ in range(max(1, min(12, int(rng.expovariate(0.25)) + 1)))],
            "tasks": sorted(set(rng.choices(vocab.tasks, cum_weights=vocab.task_weights, k=rng.choice((0, 1, 1, 2, 2, 3, 3, 4, 5, 6))))),
            "date": date,
            "conference_url_abs": None,
            "conference_url_pdf": None,
            "conference": venue.lower() + f"-{year}" if rng.random() < 0.3 else None,
            "reproduces_paper": None,
            "methods": [vocab.methods[j] for j in sorted(set(rng.choices(range(len(vocab.methods)), cum_weights=vocab.method_weights,
                                                                         k=rng.choice((0, 0, 1, 2, 3, 4, 6, 9)))))],
        }


def link_rows(papers: list[tuple[str, str, str | None, str | None, str | None]], count: int, seed: int) -> list[dict]:
    """`papers`: (paper_url, title, arxiv_id, url_abs, url_pdf) of every paper, in dump order."""
    rng = random.Random(seed + 1)
    popular = [f"https://github.com/{_name(rng).lower()}/{_name(rng, 3).lower()}-{i}" for i in range(max(50, count // 15))]
    cumulative = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(popular))))
    rows: list[dict] = []
    missing = count // 200  # links to papers the papers dump does not hold
    with_code = rng.sample(range(len(papers)), k=min(len(papers), int(count * 0.75)))
    serial = 0
    for index in with_code:
        if len(rows) >= count - missing:
            break
        url, title, arxiv, url_abs, url_pdf = papers[index]
        repos = max(1, min(20, int(rng.expovariate(1.2)) + 1))
        for r in range(repos):
            roll = rng.random()
            if roll < 0.25:
                repo = rng.choices(popular, cum_weights=cumulative)[0]
            elif roll < 0.255:
                serial += 1
                repo = f"https://gitlab.com/{_name(rng).lower()}/project-{serial}"
            else:
                serial += 1
                repo = f"https://github.com/{_name(rng).lower()}{rng.randint(0, 99)}/{_name(rng, 3).lower()}-{serial}"
            rows.append({"paper_url": url, "paper_title": title, "paper_arxiv_id": arxiv, "paper_url_abs": url_abs,
                         "paper_url_pdf": url_pdf, "repo_url": repo, "is_official": r == 0 and rng.random() < 0.6,
                         "mentioned_in_paper": rng.random() < 0.4, "mentioned_in_github": rng.random() < 0.5,
                         "framework": rng.choice(_FRAMEWORKS)})
    while len(rows) < count:  # papers the papers dump does not hold (the real archive has some)
        serial += 1
        rows.append({"paper_url": f"https://paperswithcode.com/paper/missing-paper-{serial}", "paper_title": "Missing",
                     "paper_arxiv_id": None, "paper_url_abs": None, "paper_url_pdf": None,
                     "repo_url": f"https://github.com/ghost/repo-{serial}", "is_official": False,
                     "mentioned_in_paper": False, "mentioned_in_github": False, "framework": "none"})
    rows = rows[:count]
    rng.shuffle(rows)
    return rows


def write_array(path: Path, rows: Iterator[dict]) -> int:
    n = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=3) as out:
        out.write("[\n")
        for row in rows:
            out.write((",\n" if n else "") + json.dumps(row, ensure_ascii=False))
            n += 1
        out.write("\n]\n")
    return n


def generate(out: Path, papers: int = PAPERS, links: int = LINKS, seed: int = 1) -> None:
    out.mkdir(parents=True, exist_ok=True)
    heads: list[tuple[str, str, str | None, str | None, str | None]] = []

    def remember(rows: Iterator[dict]) -> Iterator[dict]:
        for row in rows:
            heads.append((row["paper_url"], row["title"], row["arxiv_id"], row["url_abs"], row["url_pdf"]))
            yield row

    write_array(out / "papers-with-abstracts.json.gz", remember(paper_rows(papers, seed)))
    write_array(out / "links-between-papers-and-code.json.gz", iter(link_rows(heads, links, seed)))
    (out / "snapshot.json").write_text(json.dumps({"snapshot": SNAPSHOT}) + "\n")


def mutate(out: Path, change: int, drop: int, seed: int = 1) -> tuple[list[str], list[str]]:
    """Rewrite the papers dump (streaming) with `change` papers' abstracts edited and `drop` papers removed,
    spread evenly over the dump. Returns the (changed, dropped) slugs."""
    import ijson

    path = out / "papers-with-abstracts.json.gz"
    with gzip.open(path, "rb") as handle:
        total = sum(1 for _ in ijson.items(handle, "item"))
    step = max(1, total // max(1, change + drop))
    picked = list(range(step // 2, total, step))[:change + drop]
    change_at, drop_at = set(picked[:change]), set(picked[change:])
    changed: list[str] = []
    dropped: list[str] = []

    def rows() -> Iterator[dict]:
        with gzip.open(path, "rb") as handle:
            for i, row in enumerate(ijson.items(handle, "item", use_float=True)):
                slug = row["paper_url"].rsplit("/", 1)[-1]
                if i in drop_at:
                    dropped.append(slug)
                    continue
                if i in change_at:
                    row = {**row, "abstract": (row["abstract"] or "") + f" Revised (seed {seed})."}
                    changed.append(slug)
                yield row

    tmp = path.with_name(path.name + ".tmp")
    write_array(tmp, rows())
    tmp.replace(path)
    return changed, dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--papers", type=int, default=PAPERS)
    parser.add_argument("--links", type=int, help=f"default: {LINKS:,} scaled to --papers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--change", type=int, help="edit N papers of an existing archive (and --drop M)")
    parser.add_argument("--drop", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.change is not None:
        changed, dropped = mutate(args.out, args.change, args.drop, args.seed)
        print(f"changed {len(changed)}, dropped {len(dropped)} papers in {time.perf_counter() - started:.1f} s")
        return 0
    links = args.links if args.links is not None else round(LINKS * args.papers / PAPERS)
    generate(args.out, args.papers, links, args.seed)
    sizes = {p.name: p.stat().st_size for p in sorted(args.out.iterdir())}
    print(f"wrote {args.papers:,} papers and {links:,} links to {args.out} in {time.perf_counter() - started:.1f} s: "
          + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
