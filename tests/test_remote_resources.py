"""No page loads anything from a host we do not serve.

A README's image from another host was kept: a fake verdict badge, or a pixel telling a server of the
repository's choice who read the page. Now an image is shown only when it is a raster file inside the
checkout, copied into the site under the SHA-256 of its bytes; any other becomes a plain link. The hostile
README here tries every way in (http, `//host`, `data:`, a link out of the checkout, an SVG with a script, a
text file named `.png`, `srcset`, `<picture>`, `<video>`, `<iframe>`, `<link>`, `<object>`, `<embed>`, CSS in
`style` and `<style>`) and goes through the real `paperproof build --repos`; `tests/sitecheck.py` then walks
every page, style sheet and SVG of the site for anything loaded from another host.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from paperproof.build.readme_images import IMAGE_BYTES, candidates, readme_images, readme_path
from paperproof.build.render import markdown_html
from tests.sitecheck import check_site, foreign
from tests.test_archive import LINK, PAPER, write_dump
from tests.test_hostile_build import GOOD

EVIL = "evil.example.org"
README = f"""# Pictures

![verified: ran](https://badges.example.org/ran.svg) ![](http://{EVIL}/pixel.gif)
![pixel](//{EVIL}/p.gif) ![inline](data:image/png;base64,iVBORw0KGgo=)
![escape](img/outside.png) ![plot](docs/plot.png) ![plot again](./docs/plot.png?raw=true)
![logo](docs/logo.svg) ![fake](docs/fake.png) ![ref][r]
[![ci](https://ci.example.org/badge.png)](https://ci.example.org/run)

[r]: https://{EVIL}/ref.png

<img src="https://{EVIL}/x.png" srcset="https://{EVIL}/2x.png 2x" alt="srcset">
<picture><source srcset="https://{EVIL}/s.webp"><img src="docs/plot.png" alt="in a picture"></picture>
<video src="https://{EVIL}/v.mp4" poster="https://{EVIL}/poster.png"></video>
<audio src="https://{EVIL}/a.mp3"></audio><iframe src="https://{EVIL}/frame"></iframe>
<object data="https://{EVIL}/o.swf"></object><embed src="https://{EVIL}/e.swf">
<link rel="stylesheet" href="https://{EVIL}/s.css"><style>@import "https://{EVIL}/i.css"; body {{ background: url(https://{EVIL}/b.png) }}</style>
<p style="background-image: url('https://{EVIL}/bg.png')">styled</p>
<svg><image href="https://{EVIL}/svg.png"/></svg>
"""
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>'


def png(colour: bytes) -> bytes:
    """A 1×1 PNG of one RGB colour."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" + colour)) + chunk(b"IEND", b""))


PLOT, OUTSIDE = png(b"\x10\x20\x30"), png(b"\xff\x00\x00")


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.png").write_bytes(OUTSIDE)
    checkout = tmp_path / "repos" / "lab+pictures"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "img").mkdir()
    (checkout / "margins.py").write_text(GOOD)
    (checkout / "README.md").write_text(README)
    (checkout / "docs" / "plot.png").write_bytes(PLOT)
    (checkout / "docs" / "logo.svg").write_text(SVG)
    (checkout / "docs" / "fake.png").write_text("<html><script>alert(1)</script></html>")
    (checkout / "img" / "outside.png").symlink_to(outside / "private.png")
    archive = tmp_path / "archive"
    paper = {**PAPER, "paper_url": "https://paperswithcode.com/paper/p-pictures", "title": "Paper pictures"}
    write_dump(archive, "papers-with-abstracts", [paper])
    write_dump(archive, "links-between-papers-and-code",
               [{**LINK, "paper_url": paper["paper_url"], "paper_title": paper["title"],
                 "repo_url": "https://github.com/lab/pictures"}])
    return archive, tmp_path / "repos"


def _build(tmp_path: Path, archive: Path, repos: Path, out: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    return subprocess.run(
        [sys.executable, "-m", "paperproof", "build", "--archive", str(archive), "--repos", str(repos),
         "--out", str(tmp_path / out), "--cache", str(tmp_path / "cache"), "--workers", "1", "--jobs", "1"],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_hostile_readme_loads_nothing_from_another_host(tmp_path: Path) -> None:
    archive, repos = _corpus(tmp_path)
    done = _build(tmp_path, archive, repos, "site")
    assert done.returncode == 0, done.stderr[-3000:]
    site = tmp_path / "site"
    problems, pages = check_site(site)
    assert problems == [] and pages > 5
    page = (site / "repo" / "lab+pictures" / "index.html").read_text()
    readme = page[page.index('<div class="readme">'):]
    # the image inside the checkout: copied under its hash, shown from there (three times, one copy)
    copy = f"/repo/lab+pictures/readme/{hashlib.sha256(PLOT).hexdigest()}.png"
    assert sorted(re.findall(r'<img [^>]*src="([^"]*)"', readme)) == [copy] * 3
    assert _tree(site / "repo" / "lab+pictures" / "readme") == {f"{hashlib.sha256(PLOT).hexdigest()}.png": PLOT}
    assert f'<img alt="plot" src="{copy}">' in readme
    # every other image is a link to where it is, its alt text (or address) the link's text
    blob = "https://github.com/lab/pictures/blob/HEAD"
    for href, text in (("https://badges.example.org/ran.svg", "verified: ran"),
                       (f"http://{EVIL}/pixel.gif", f"http://{EVIL}/pixel.gif"), (f"https://{EVIL}/p.gif", "pixel"),
                       (f"{blob}/img/outside.png", "escape"), (f"{blob}/docs/logo.svg", "logo"),
                       (f"{blob}/docs/fake.png", "fake"), (f"https://{EVIL}/ref.png", "ref"),
                       (f"https://{EVIL}/x.png", "srcset")):
        assert f'<a href="{href}" rel="nofollow noopener noreferrer">{text}</a>' in readme, href
    assert '<a href="https://ci.example.org/run" rel="nofollow noopener noreferrer">ci</a>' in readme  # a badge in a link
    assert "inline" in readme and "data:" not in readme
    for tag in ("<iframe", "<video", "<audio", "<object", "<embed", "<source", "<style", "<link", "<svg", "srcset=",
                "style="):
        assert tag not in readme, tag
    # nothing of the file outside the checkout, the SVG or the fake PNG was copied
    everything = b"".join(_tree(site).values())
    assert OUTSIDE not in everything and b"alert(" not in everything
    # the same inputs, the same bytes
    again = _build(tmp_path, archive, repos, "site-again")
    assert again.returncode == 0, again.stderr[-3000:]
    assert _tree(tmp_path / "site-again" / "repo") == _tree(site / "repo")


def test_the_site_check_finds_every_way_a_page_loads_from_another_host(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "static").mkdir(parents=True)
    vectors = [f'<img src="https://{EVIL}/a.png">', f'<img srcset="/ok.png 1x, //{EVIL}/b.png 2x">',
               f'<script src="http://{EVIL}/c.js"></script>', f'<link rel="stylesheet" href="https://{EVIL}/d.css">',
               f'<link rel="icon" href="https://{EVIL}/e.ico">', f'<link rel="preload" href="https://{EVIL}/f">',
               f'<iframe src="https://{EVIL}/g"></iframe>', f'<video poster="https://{EVIL}/h.png"></video>',
               f'<audio src="https://{EVIL}/i.mp3"></audio>', f'<object data="https://{EVIL}/j"></object>',
               f'<embed src="https://{EVIL}/k">', f'<picture><source srcset="https://{EVIL}/l.webp"></picture>',
               f'<p style="background: url(https://{EVIL}/m.png)">x</p>', f'<style>@import "https://{EVIL}/n.css";</style>',
               f'<table background="https://{EVIL}/o.png"></table>', f'<svg><image href="https://{EVIL}/p.png"/></svg>',
               f'<base href="https://{EVIL}/">', f'<img src="ftp://{EVIL}/q.png">']
    fine = ['<a href="https://elsewhere.example.org/">a link</a>', '<img src="/static/r.png">', '<img src="s.png">',
            '<link rel="alternate" href="https://elsewhere.example.org/feed">', '<img src="data:image/png;base64,AA">',
            '<img src="https://catalogue.example.org/static/t.png">']
    (site / "index.html").write_text("<!doctype html><html lang=en><body>" + "".join(vectors + fine) + "</body></html>")
    (site / "static" / "style.css").write_text(f"a {{ background: url('https://{EVIL}/u.png') }} b {{ x: url(/ok.png) }}")
    (site / "static" / "map.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg"><image href="https://{EVIL}/v.png"/></svg>')
    problems, _ = check_site(site, hosts={"catalogue.example.org"})
    loaded = [p for p in problems if "from another host" in p]
    assert len(loaded) == len(vectors) + 2, "\n".join(loaded)
    assert all(EVIL in p for p in loaded)
    assert foreign(f"//{EVIL}/x", set()) and not foreign("/x", set()) and not foreign("data:image/png,x", set())


def test_images_by_every_kind_of_source() -> None:
    """Without a build: what the sanitiser does with each source, given where the copies are."""
    copies = {"docs/plot.png": "/repo/x/readme/abc.png"}
    html = str(markdown_html(README, link_base=lambda p: f"https://h/blob/c/{p}",
                             image_url=lambda p: copies.get(readme_path(p) or "")))
    assert re.findall(r'<img [^>]*src="([^"]*)"', html) == ["/repo/x/readme/abc.png"] * 3
    assert EVIL not in "".join(re.findall(r'src="([^"]*)"', html))
    abstract = str(markdown_html(f"An abstract ![fig](https://{EVIL}/fig.png) and ![rel](fig.png)."))
    assert "<img" not in abstract and f'<a href="https://{EVIL}/fig.png"' in abstract and "rel" in abstract


def test_only_raster_files_inside_the_checkout_under_the_caps_are_copied(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "plot.png").write_bytes(PLOT)
    (root / "docs" / "copy.PNG").write_bytes(PLOT)
    (root / "docs" / "logo.svg").write_text(SVG)
    (root / "docs" / "fake.png").write_text("<html></html>")
    (root / "docs" / "big.png").write_bytes(PLOT + bytes(IMAGE_BYTES))
    (tmp_path / "outside.png").write_bytes(OUTSIDE)
    (root / "docs" / "out.png").symlink_to(tmp_path / "outside.png")
    (root / "docs" / "in.png").symlink_to("plot.png")
    os.mkfifo(root / "docs" / "fifo.png")
    (root / "docs" / "twin.png").write_bytes(PLOT)
    os.link(root / "docs" / "twin.png", root / "docs" / "hard.png")  # one file, two names: maybe from outside
    readme = " ".join(f"![x](docs/{n})" for n in ("plot.png", "copy.PNG", "logo.svg", "fake.png", "big.png",
                                                     "out.png", "in.png", "fifo.png", "hard.png", "none.png"))
    readme += f" ![up](../outside.png) ![abs](/docs/plot.png) ![web](https://{EVIL}/w.png) <img src='docs/in.png'>"
    assert candidates(readme)[:3] == ["docs/plot.png", "docs/copy.PNG", "docs/fake.png"]
    found = readme_images(root, readme)
    name = f"{hashlib.sha256(PLOT).hexdigest()}.png"
    assert [(i.path, i.name) for i in found] == [("docs/plot.png", name), ("docs/copy.PNG", name), ("docs/in.png", name)]
    assert readme_path("./a/../b/c%20d.png?raw=1#x") == "b/c d.png"
    assert readme_path("../x.png") is None and readme_path("//h/x.png") is None and readme_path("data:x") is None


@pytest.mark.parametrize("src", [f"http://{EVIL}/a.png", f"https://{EVIL}/a.png", f"//{EVIL}/a.png",
                                 f"HTTPS://{EVIL}/a.png", f" https://{EVIL}/a.png "])
def test_no_remote_image_survives(src: str) -> None:
    html = str(markdown_html(f'text <img src="{src}" alt="a"> ![b]({src.strip()})',
                             link_base=lambda p: p, image_url=lambda p: None))
    assert "<img" not in html and html.count("<a href=") == 2
