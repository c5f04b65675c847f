"""The bundled site for people and programs: every page validates, links resolve, twins match their
schemas; metadata, feed, sitemaps, paging and search are what they claim."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from paperproof.build import pages as pages_module
from paperproof.build import search as search_module
from paperproof.build.pipeline import BuildConfig, build
from tests.sitecheck import check_site, load_json, parse
from tests.test_archive import LINK, PAPER, write_dump

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def html_pages(site: Path) -> list[Path]:
    return [p for p in sorted(site.rglob("*.html")) if p.relative_to(site).parts[0] != "pagefind"]


def test_every_page_of_the_bundled_site_validates(bundled_site):
    problems, checked = check_site(bundled_site)
    assert problems == []
    assert checked > 60


def test_every_kind_of_page_has_a_twin_and_a_schema(bundled_site):
    expected = {
        "index.html": ("/index.json", "/schema/index.json"),
        "papers/index.html": ("/api/papers.json", "/schema/paper-list.json"),
        "repos/index.html": ("/api/repos.json", "/schema/repo-list.json"),
        "task/index.html": ("/task.json", "/schema/task-index.json"),
        "task/image-classification/index.html": ("/task/image-classification.json", "/schema/task.json"),
        "status/ran/index.html": ("/status/ran.json", "/schema/status.json"),
        "attribution/index.html": ("/attribution.json", "/schema/attribution.json"),
        "search/index.html": ("/search.json", "/schema/search.json"),
        "repo/swaggylei+dataset-difficulty-skill/index.html": (
            "/repo/swaggylei+dataset-difficulty-skill.json", "/schema/repo.json"),
    }
    for path, (twin, schema) in expected.items():
        page = parse(bundled_site / path)
        assert (page.alternates, page.describedby) == ([twin], [schema]), path
    papers = load_json(bundled_site / "api" / "papers.json")
    assert papers["paging"]["page"] == 1 and papers["paging"]["next"] is None
    assert [p["slug"] for p in papers["papers"]] == sorted(p["slug"] for p in papers["papers"])
    repos = load_json(bundled_site / "api" / "repos.json")
    assert any(r["topic"] and r["papers"] == 0 for r in repos["repos"])  # a community repository without a paper


def test_the_paper_page_carries_citation_opengraph_and_json_ld(bundled_site):
    slug = "dataset-cartography-mapping-and-diagnosing"
    text = (bundled_site / "paper" / slug / "index.html").read_text()
    twin = load_json(bundled_site / "paper" / f"{slug}.json")
    assert f'<meta name="citation_title" content="{twin["title"]}">' in text
    assert text.count('<meta name="citation_author"') == len(twin["authors"])
    assert '<meta name="citation_pdf_url" content="https://arxiv.org/pdf/' in text
    assert '<meta property="og:type" content="article">' in text
    ld = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', text, re.S).group(1))
    assert ld["@type"] == "ScholarlyArticle" and ld["name"] == twin["title"]
    assert [a["name"] for a in ld["author"]] == twin["authors"]
    for task in twin["tasks"]:  # tasks link to their pages, which list the paper
        assert f'href="/task/{task["task_slug"]}/"' in text
        listed = load_json(bundled_site / "task" / f'{task["task_slug"]}.json')
        assert slug in [p["slug"] for p in listed["papers"]]
    assert "@misc{" + slug in text and 'href="https://arxiv.org/abs/' in text


def test_specimen_paper_shows_samples_data_map_and_repository_pages(bundled_site):
    text = (bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training" / "index.html").read_text()
    assert 'class="samples stack"' in text and 'href="/sample/' in text
    assert '<img src="/static/data-map.svg"' in text
    assert '<a class="badge official" href="/status/#links-official"' in text and "framework: " in text


def test_the_repository_page_and_its_twin_list_the_same_samples(bundled_site):
    twin = load_json(bundled_site / "repo" / "paperproof-specimens+dynamics-maps-fork.json")
    text = (bundled_site / "repo" / "paperproof-specimens+dynamics-maps-fork" / "index.html").read_text()
    rows = re.findall(r'<tr>\s*<td data-label="Entry"><a href="([^"]+)"><code>([^<]+)</code>.*?</tr>', text, re.S)
    assert rows == [(s["url"], s["entry"]) for s in twin["samples"]]
    for ref in twin["samples"]:  # each listing agrees with the sample's own record
        sample = load_json(bundled_site / ref["json_url"].lstrip("/"))
        assert {k: sample[k] for k in ("status", "contract_check", "metamorphic_tier", "fidelity")} == \
            {k: ref[k] for k in ("status", "contract_check", "metamorphic_tier", "fidelity")}
    assert any(ref["fidelity"] for ref in twin["samples"]) and any(ref["contract_check"] for ref in twin["samples"])
    assert [p["url"] for p in twin["papers"]] == re.findall(r'<li><a href="(/paper/[^"]+)">', text)


def test_sample_pages_show_code_only_when_the_licence_allows(bundled_site):
    shown = pointer = 0
    for path in sorted((bundled_site / "sample").glob("*.json")):
        sample = load_json(path)
        text = (bundled_site / "sample" / path.stem / "index.html").read_text()
        assert sample["reproduce"].split()[0] in text
        if sample["source"] is None and sample["signature"] == "":  # shipped records: the code never came along
            assert 'class="code"' not in text and "not shipped with this catalogue" in text
            assert "Read it at the source</a> (pinned commit)" in text
        elif sample["inline_ok"]:
            assert 'class="code"' in text
            shown += 1
        else:
            assert 'class="code"' not in text and "Read it at the source" in text
            pointer += 1
    assert shown and pointer


def test_sitemaps_list_every_page_and_robots_names_them(bundled_site):
    index = ET.parse(bundled_site / "sitemap.xml").getroot()
    parts = [e.text for e in index.iter(f"{SITEMAP}loc")]
    assert parts == ["/sitemaps/sitemap-1.xml"]
    urls = [e.text for e in ET.parse(bundled_site / "sitemaps" / "sitemap-1.xml").getroot().iter(f"{SITEMAP}loc")]
    files = {"/" + str(p.relative_to(bundled_site)).removesuffix("index.html") for p in html_pages(bundled_site)}
    assert set(urls) == files and len(urls) == len(set(urls))
    assert "Sitemap" in (bundled_site / "robots.txt").read_text()


def test_sitemaps_split_at_the_limit_and_use_absolute_urls_with_a_base():
    from paperproof.build.seo import robots, sitemaps
    from paperproof.build.urls import SiteUrls

    urls = SiteUrls("https://example.org/pp")
    files = sitemaps(urls, [urls.paper(f"p{i}") for i in range(5)], "2025-07-28T00:00:00+00:00", limit=2)
    assert sorted(files) == ["https://example.org/pp/sitemap.xml"] + [
        f"https://example.org/pp/sitemaps/sitemap-{n}.xml" for n in (1, 2, 3)]
    counts = [len(list(ET.fromstring(files[urls.sitemap_part(n)]).iter(f"{SITEMAP}url"))) for n in (1, 2, 3)]
    assert counts == [2, 2, 1]
    assert "<loc>https://example.org/pp/paper/p0/</loc>" in files[urls.sitemap_part(1)]
    assert "Sitemap: https://example.org/pp/sitemap.xml" in robots(urls)


def test_feed_lists_verified_papers_dated_by_the_build(bundled_site):
    feed = ET.parse(bundled_site / "feed.xml").getroot()
    index = load_json(bundled_site / "index.json")
    assert feed.find(f"{ATOM}updated").text == index["read_at"]
    assert "'updated' is" in feed.find(f"{ATOM}subtitle").text
    entries = feed.findall(f"{ATOM}entry")
    verified = [p for p in index["papers"] if any(status.startswith("ran") for status in p["statuses"])]
    assert len(entries) == len(verified) > 0
    links = [e.find(f"{ATOM}link").get("href") for e in entries]
    assert links == [p["url"] for p in index["verified"]]
    dates = [e.find(f"{ATOM}published").text for e in entries]
    assert dates == sorted(dates, reverse=True)
    assert all(e.find(f"{ATOM}updated").text == index["read_at"] for e in entries)


def test_feed_orders_by_date_then_slug_and_survives_control_characters():
    from paperproof.build.feeds import FeedPaper, atom
    from paperproof.build.urls import SiteUrls

    def paper(slug, date, ran=1):
        return FeedPaper(slug, f"T\x0b{slug}", ("A",), date, f"/paper/{slug}/", "s", 2, ran)

    xml = atom(SiteUrls(), "2025-01-01T00:00:00+00:00",
               [paper("b", "2021-01-01"), paper("a", "2021-01-01"), paper("c", None), paper("d", "2022-05-01"),
                paper("e", "2023-01-01", ran=0)])
    root = ET.fromstring(xml)
    assert [e.find(f"{ATOM}id").text.rsplit("/", 1)[-1] for e in root.findall(f"{ATOM}entry")] == ["d", "a", "b", "c"]


def test_search_index_covers_every_paper(bundled_site):
    record = load_json(bundled_site / "search.json")
    assert record["available"] is True and record["fields"] == ["title", "authors", "tasks", "abstract"]
    entry = load_json(bundled_site / "pagefind" / "1" / "pagefind-entry.json")
    assert entry["languages"]["en"]["page_count"] == sum(s["papers"] for s in record["shards"]) == 4
    assert 'role="search"' in (bundled_site / "index.html").read_text()


def small_archive(directory: Path, n: int) -> str:
    papers = [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/paper-{i}", "title": f"Paper {i}",
               "date": f"2021-01-0{i + 1}"} for i in range(n)]
    links = [{**LINK, "paper_url": p["paper_url"]} for p in papers]
    write_dump(directory, "papers-with-abstracts", papers)
    write_dump(directory, "links-between-papers-and-code", links)
    return str(directory)


def test_lists_are_paged_with_next_and_every_page_validates(tmp_path, monkeypatch):
    monkeypatch.setattr(pages_module, "PAGE_SIZE", 2)
    site = tmp_path / "site"
    build(BuildConfig(archive=small_archive(tmp_path / "archive", 5), out=site, cache=None))
    first = load_json(site / "api" / "papers.json")
    assert first["paging"] == {**first["paging"], "page": 1, "pages": 3, "total": 5, "next": "/api/papers/page-2.json",
                               "prev": None, "next_page_url": "/papers/page-2/"}
    second = load_json(site / "api" / "papers" / "page-2.json")
    third = load_json(site / "api" / "papers" / "page-3.json")
    assert second["paging"]["prev"] == "/api/papers.json" and third["paging"]["next"] is None
    slugs = [p["slug"] for page in (first, second, third) for p in page["papers"]]
    assert slugs == sorted(slugs) and len(slugs) == 5
    task = load_json(site / "task" / "image-classification.json")  # newest first, paged the same way
    assert [p["date"] for p in task["papers"]] == ["2021-01-05", "2021-01-04"]
    assert task["paging"]["next"] == "/task/image-classification/page-2.json"
    problems, _ = check_site(site)
    assert problems == []


def test_a_task_spelt_two_ways_is_one_page_named_by_its_commonest_spelling(tmp_path):
    spellings = [["Image Classification"], ["image classification"], ["Image Classification", "image classification"],
                 ["Image Classification"], ["Object Detection"]]
    papers = [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/paper-{i}", "title": f"Paper {i}",
               "date": f"2021-01-0{i + 1}", "tasks": tasks} for i, tasks in enumerate(spellings)]
    write_dump(tmp_path / "archive", "papers-with-abstracts", papers)
    write_dump(tmp_path / "archive", "links-between-papers-and-code", [])
    site = tmp_path / "site"
    build(BuildConfig(archive=str(tmp_path / "archive"), out=site, cache=None))
    task = load_json(site / "task" / "image-classification.json")
    assert task["task_name"] == "Image Classification" and task["other_names"] == ["image classification"]
    assert [p["slug"] for p in task["papers"]] == ["paper-3", "paper-2", "paper-1", "paper-0"]  # paper-2 once
    assert task["paging"]["total"] == 4
    index = {t["task_slug"]: t for t in load_json(site / "task.json")["tasks"]}
    assert {k: t["papers"] for k, t in index.items()} == {"image-classification": 4, "object-detection": 1}
    assert index["image-classification"]["task_name"] == "Image Classification"


def test_without_pagefind_the_site_is_built_without_search(tmp_path, monkeypatch):
    monkeypatch.setattr(search_module, "binary", lambda: None)
    site = tmp_path / "site"
    summary = build(BuildConfig(archive=small_archive(tmp_path / "archive", 1), out=site, cache=None))
    assert any(line.startswith("search: not built") for line in summary.lines())
    record = load_json(site / "search.json")
    assert record["available"] is False and "Pagefind" in record["reason"]
    assert not (site / "pagefind").exists() and 'role="search"' not in (site / "index.html").read_text()
    problems, _ = check_site(site)
    assert problems == []


def test_an_absolute_base_url_gives_absolute_metadata(tmp_path):
    site = tmp_path / "site"
    build(BuildConfig(archive=small_archive(tmp_path / "archive", 1), out=site, cache=None,
                      base_url="https://example.org/pp"))
    text = (site / "paper" / "paper-0" / "index.html").read_text()
    assert '<meta property="og:url" content="https://example.org/pp/paper/paper-0/">' in text
    assert "<loc>https://example.org/pp/paper/paper-0/</loc>" in (site / "sitemaps" / "sitemap-1.xml").read_text()
    assert "<id>https://example.org/pp/feed.xml</id>" in (site / "feed.xml").read_text()


# --- rendering untrusted text ---


def test_json_ld_cannot_end_its_script_element():
    from paperproof.build.render import json_script

    text = str(json_script({"name": "</script><script>alert(1)</script> & <!--"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script> & <!--"}


def test_markdown_is_sanitised_and_relative_urls_rebased():
    from paperproof.build.render import markdown_html

    text = ("# Title\n\n<script>window.x=1</script>\n\n[a](javascript:alert(1)) [b](docs/b.md) [c](#c) "
            "<img src=x onerror=\"alert(1)\"> ![i](img/i.png) [d](https://example.org/d)\n\n#### Deep")
    html = str(markdown_html(text, link_base=lambda p: f"https://h/blob/c/{p}",
                             image_url=lambda p: f"/copies/{p}" if p == "img/i.png" else None))
    assert "script" not in html and "onerror" not in html and "javascript" not in html
    assert 'href="https://h/blob/c/docs/b.md"' in html and 'src="/copies/img/i.png"' in html
    assert 'href="https://h/blob/c/x"' in html and 'href="https://example.org/d"' in html  # no copy: a link
    assert html.count("<img") == 1
    assert re.findall(r"<h(\d)>", html) == ["3", "4"]  # h1 -> h3, h4 -> h4: nested under the page, no skip
    bare = str(markdown_html("[b](docs/b.md) ![i](i.png)"))
    assert "href" not in bare and "src" not in bare


def test_headings_are_relevelled_without_skips():
    from paperproof.build.render import relevel_headings

    html = "<h3>a</h3><h5>b</h5><h6>c</h6><h2>d</h2><h4>e</h4>"
    assert re.findall(r"<h(\d)>", relevel_headings(html, 3)) == ["3", "4", "5", "3", "4"]


def test_http_url_refuses_other_schemes():
    from paperproof.build.render import http_url

    assert http_url(" https://arxiv.org/abs/1 ") == "https://arxiv.org/abs/1"
    for bad in ("javascript:alert(1)", "JaVaScRiPt:x", "data:text/html,x", "//evil.org/x", "/local", None, ""):
        assert http_url(bad) is None


# --- contrast ---


def luminance(hex_colour: str) -> float:
    value = hex_colour.lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    channels = [int(value[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_palette_meets_wcag_aa():
    from paperproof.build.render import stylesheet

    css = stylesheet()
    variables = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})", css))
    def colour(value: str) -> str:
        value = value.strip()
        return variables[value[6:-1]] if value.startswith("var(") else value

    pairs = [(variables["fg"], variables["bg"]), (variables["muted"], variables["bg"]),
             (variables["accent"], variables["bg"]), (variables["accent"], variables["code-bg"]),
             (variables["muted"], variables["code-bg"])]
    for rule in re.findall(r"\{([^}]*)\}", css):
        props = dict((k.strip(), v.strip()) for k, v in re.findall(r"([\w-]+)\s*:\s*([^;]+);?", rule))
        fg, bg = props.get("color"), props.get("background") or props.get("background-color")
        if fg and bg and (fg.startswith(("#", "var(")) and bg.startswith(("#", "var("))):
            pairs.append((colour(fg), colour(bg)))
    # Pygments' token colours on the code background (the style's own background, and ours for <pre>).
    code_bg = re.search(r"\.code\s*\{[^}]*background:\s*(#[0-9a-fA-F]{3,6})", css)
    tokens = dict(re.findall(r"(\.code \.[\w-]+) \{[^}]*?(?<![-\w])color: (#[0-9a-fA-F]{3,6})\b", css))  # last wins
    for token_colour in set(tokens.values()):
        pairs.append((token_colour, variables["code-bg"]))
        if code_bg:
            pairs.append((token_colour, code_bg.group(1)))
    assert len(pairs) > 15
    low = sorted({(fg, bg, round(contrast(fg, bg), 2)) for fg, bg in pairs if contrast(fg, bg) < 4.5})
    assert low == [], low


def test_a_paper_page_counts_what_ran_checked_and_lists_departures_most_severe_first(bundled_site):
    slug = "specimen-mapping-sample-hardness-with-training"
    twin = load_json(bundled_site / "paper" / f"{slug}.json")["verification"]
    text = (bundled_site / "paper" / slug / "index.html").read_text()
    ran = [s for s in twin["samples"] if s["status"].startswith("ran")]
    assert sum(twin["checked"].values()) == len(ran) and twin["checked"]["paper"] > 0
    assert set(twin["checked_vocabulary"]) == {"paper", "contracts", "nothing"}
    for word, n in twin["checked"].items():
        assert re.search(rf'{n} <a class="term checked-{word}"', text), word
    rows = twin["implementations"]
    ranks = [(r["repo_kind"] != "official",
              (0 if r["severity"] == "changes_ranking" else 1 if r["severity"] else 2) if r["departs_from_paper"] else 3)
             for r in rows]
    assert ranks == sorted(ranks) and (True, 0) in ranks and 3 in {rank for _, rank in ranks}  # official rows first
    for official in (False, True):
        changing = [r["rank_correlation"] for r in rows if (r["repo_kind"] == "official") == official
                    and r["severity"] == "changes_ranking" and r["rank_correlation"] is not None]
        assert changing == sorted(changing)  # the lowest rank correlation first


def test_a_sample_page_quotes_the_papers_definition_beside_what_the_code_computes(bundled_site, samples):
    record = samples["paperproof-specimens/dynamics-maps-fork", "variability_scores"]
    (finding,) = record["fidelity"]
    assert finding["cited"].startswith("Swayamdipta") and finding["definition"]
    text = (bundled_site / "sample" / record["sample_id"] / "index.html").read_text()
    assert 'class="paper-definition">The paper: Swayamdipta' in text
    assert record["checked"] == "paper"  # graded against the paper: a departure's badge says how much it matters
    assert re.search(r'class="term grade grade-departs_(rescales|ranking)"[^>]*title="Checked against the paper: ', text)
