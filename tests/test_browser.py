"""The site in a real browser: headless Chromium opens the built site from a local HTTP server.

On the bundled site it navigates index -> paper -> repository -> sample by clicking links and runs a
search, and finds no console error; follows a sample table's headings and badges to their explanations
on `/status/`; finds every sample table within the page at 1280 and at 390 px wide (stacked there);
reads fixtures described by shape and seed; sees a partial `ran` that is not green; and, opened as a
file, sees the page say how to serve it. On a corpus with XSS payloads planted in archive fields (title,
authors, abstract, tasks, proceeding, URLs), a README, a docstring and a file path, it opens every
page and finds that no payload ran, the escaped ones show as text, nothing was loaded from another host (a
README's images by URL among them), and search results stay inert.

Needs Debian's `chromium` and `chromium-driver` (installed by .ci/run); skipped where they are absent,
except under `PAPERPROOF_REQUIRE_BROWSER=1` (set by .ci/run), where their absence fails the module.
One browser serves the whole module.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from paperproof.build.pipeline import BuildConfig, build
from tests.test_archive import LINK, PAPER, write_dump

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HAVE_BROWSER = Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()
if os.environ.get("PAPERPROOF_REQUIRE_BROWSER") == "1" and not HAVE_BROWSER:
    raise RuntimeError(f"PAPERPROOF_REQUIRE_BROWSER=1 but {CHROMIUM} or {CHROMEDRIVER} is missing "
                       "(apt-get install chromium chromium-driver)")
webdriver = pytest.importorskip("selenium.webdriver")
pytestmark = pytest.mark.skipif(not HAVE_BROWSER, reason="needs Debian's chromium and chromium-driver (installed by .ci/run)")

from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

MARK = "window.__xss=1"
SCRIPT = f"<script>{MARK}</script>"
IMG = f'<img src=x onerror="{MARK}">'
SVG = f'"><svg onload="{MARK}">'
TITLE = f"</script>{SCRIPT} {IMG} Payload Paper"
AUTHOR = f"{SVG} Mallory"
TASK = f"{SCRIPT} Task"
ABSTRACT = (f"Payload abstract {SCRIPT} {IMG} [click](javascript:{MARK}) <a href=\"javascript:{MARK}\">x</a> "
            f"<iframe src=\"javascript:{MARK}\"></iframe> **bold** {SVG}")
README = (f"# Evil\n\n{SCRIPT}\n\n{IMG}\n\n[link](javascript:{MARK})\n\n<svg onload=\"{MARK}\"></svg>\n\n"
          f"<a href=\"#\" onclick=\"{MARK}\">click</a>\n\n<style>body{{display:none}}</style>\n\n"
          "![tracker](https://tracker.invalid/pixel.gif) ![pixel](//tracker.invalid/p.gif)\n")
DOCSTRING = f"Score samples. {SCRIPT} {IMG} {SVG}"
PAYLOAD_DIR = 'pkg"><svg onload=window.__xss=1>'

CHECK_PAGE = """
const handlers = Array.from(document.querySelectorAll('*')).filter(
  e => Array.from(e.attributes).some(a => a.name.toLowerCase().startsWith('on'))).map(e => e.tagName);
const inline = Array.from(document.scripts).filter(s => !s.src && s.type !== 'application/ld+json').length;
const jsLinks = Array.from(document.querySelectorAll('[href],[src]')).filter(
  e => /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || '')).length;
const foreign = performance.getEntriesByType('resource').map(e => e.name).filter(
  n => !n.startsWith(location.origin + '/'));
const remote = Array.from(document.querySelectorAll('img, [srcset], video, audio, iframe, object, embed')).filter(
  e => /^\\s*(https?:)?\\/\\//i.test(e.getAttribute('src') || e.getAttribute('srcset') || e.getAttribute('data') || '')).length;
return {xss: typeof window.__xss, handlers: handlers, inline: inline, jsLinks: jsLinks, foreign: foreign, remote: remote,
        svg: Array.from(document.querySelectorAll('main svg, main iframe, main style')).filter(
          e => !e.closest('#search')).length,
        text: document.body.innerText};
"""


# --- serving and driving ---


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="module")
def serve():
    servers = []

    def start(directory: Path) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_page_load_timeout(30)
    yield browser
    browser.quit()


def console_errors(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def no_alert(browser) -> bool:
    try:
        _ = browser.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def click_link(browser, prefix: str) -> str:
    """Click the first link in main whose path starts with `prefix`; return the new page's path."""
    link = next(a for a in browser.find_elements(By.CSS_SELECTOR, "main a[href]")
                if (a.get_attribute("href") or "").split("127.0.0.1", 1)[-1].split("/", 1)[-1].startswith(prefix))
    before = browser.current_url
    link.click()
    WebDriverWait(browser, 10).until(lambda b: b.current_url != before and
                                     b.execute_script("return document.readyState") == "complete")
    return "/" + browser.current_url.split("/", 3)[3]


def search(browser, base: str, query: str) -> list[str]:
    browser.get(f"{base}/search/?q={query}")
    WebDriverWait(browser, 15).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, ".pagefind-ui__result-link")
        or b.find_elements(By.CSS_SELECTOR, ".pagefind-ui__message"))
    WebDriverWait(browser, 15).until(lambda b: b.find_elements(By.CSS_SELECTOR, ".pagefind-ui__result-link"))
    return [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".pagefind-ui__result-link")]


# --- the bundled site ---


def test_navigate_the_bundled_site_and_search_without_console_errors(bundled_site, serve, driver):
    base = serve(bundled_site)
    driver.get_log("browser")  # start clean
    driver.get(base + "/")
    assert driver.find_element(By.TAG_NAME, "h1").text == "paperproof"
    visited = [click_link(driver, "paper/specimen-mapping")]
    assert driver.find_element(By.CSS_SELECTOR, "table.samples")
    visited.append(click_link(driver, "repo/"))
    assert driver.find_element(By.TAG_NAME, "h1").text.startswith("paperproof-specimens/")
    visited.append(click_link(driver, "sample/"))
    assert driver.find_element(By.CSS_SELECTOR, "h2#code")
    assert [v.split("/")[1] for v in visited] == ["paper", "repo", "sample"]
    errors = console_errors(driver)
    assert errors == []

    results = search(driver, base, "cartography")
    assert any("/paper/dataset-cartography-mapping-and-diagnosing/" in r for r in results)
    # The header's search form (no JavaScript needed to submit it) lands on the same results.
    driver.get(base + "/")
    field = driver.find_element(By.ID, "site-search-q")
    field.send_keys("specimen")
    field.submit()
    WebDriverWait(driver, 15).until(lambda b: b.find_elements(By.CSS_SELECTOR, ".pagefind-ui__result-link"))
    assert "/search/?q=specimen" in driver.current_url
    errors = console_errors(driver)
    assert errors == []


def test_a_departure_on_a_sample_page_gives_its_lines_formulas_and_worked_case(bundled_site, serve, driver):
    """From the fork's repository page to `forgetting_events`: the departure's line is the one shown in
    the code, both formulas are there, and the worked case is the never-learned sample of the run."""
    base = serve(bundled_site)
    driver.get_log("browser")
    driver.get(base + "/repo/paperproof-specimens+dynamics-maps-fork/")
    link = next(a for a in driver.find_elements(By.CSS_SELECTOR, "main a[href*='/sample/']") if a.text == "forgetting_events")
    before = driver.current_url
    link.click()
    WebDriverWait(driver, 10).until(lambda b: b.current_url != before and
                                    b.execute_script("return document.readyState") == "complete")
    departure = driver.find_element(By.CSS_SELECTOR, "#fidelity + p + ul dl.departure")
    where = departure.find_element(By.CSS_SELECTOR, ".departure-lines").text
    assert where == "line 63 of dynamics_maps/metrics.py"
    code_lines = driver.find_element(By.CSS_SELECTOR, "section .code").text.splitlines()
    shown = next(line for line in code_lines if line.strip().startswith("63 "))
    assert "scores / n_epochs" in shown  # the line the page points at is the one that divides by E
    assert departure.find_element(By.CSS_SELECTOR, ".departure-paper").text.endswith("1000 if never correct")
    assert departure.find_element(By.CSS_SELECTOR, ".departure-code").text.endswith("/ E; 0 if never correct")
    case = departure.find_element(By.CSS_SELECTOR, ".departure-case").text
    from paperproof.fixtures.synth import CASE_PLAN
    from paperproof.fixtures.values import NEVER, case_dynamics

    _, _, seed, dims = CASE_PLAN[0]
    logits, labels = case_dynamics({"seed": seed, "dims": dims})
    never = 3  # the first samples of a run are one of each archetype, in order: easy, ambiguous, hard, never
    assert NEVER == never and not (logits.argmax(-1)[:, never] == labels[never]).any()
    flags = ", ".join(["✗"] * dims["E"])
    assert case.startswith(f"sample {never} of case typical, gold class {labels[never]}, correct per epoch [{flags}]")
    assert case.endswith("the paper scores 1000, the code 0")
    assert "least forgettable" in departure.find_element(By.CSS_SELECTOR, ".departure-effect").text
    assert console_errors(driver) == []


def test_every_departure_on_a_specimen_page_has_lines_formulas_and_a_worked_case(bundled_site, samples, serve, driver):
    """Each sample page whose twin departs from the paper shows, for every departure, its lines, both formulas
    and the worked case of its twin; one reached through a helper names the helper and its line."""
    base = serve(bundled_site)
    driver.get_log("browser")
    departing = {key: r for key, r in samples.items() if any(f["worked"] for f in r["fidelity"])}
    assert len(departing) >= 5 and any(f["worked"]["helper"] for r in departing.values() for f in r["fidelity"] if f["worked"])
    for record in departing.values():
        driver.get(f"{base}/sample/{record['sample_id']}/")
        shown = driver.find_elements(By.CSS_SELECTOR, "dl.departure")
        wanted = [f["worked"] for f in record["fidelity"] if f["worked"]]
        assert len(shown) == len(wanted), record["entry"]
        for element, w in zip(shown, wanted):
            lines = element.find_element(By.CSS_SELECTOR, ".departure-lines").text
            assert re.match(rf"lines? {w['lines'][0]}\b.* of {re.escape(record['path'])}", lines), lines
            if w["helper"]:
                assert f"its call of {w['helper']}, which departs at line {w['helper_lines'][0]} of the same file" in lines
            assert element.find_element(By.CSS_SELECTOR, ".departure-paper").text == w["paper_formula"]
            assert element.find_element(By.CSS_SELECTOR, ".departure-code").text == w["code_formula"]
            assert element.find_element(By.CSS_SELECTOR, ".departure-case").text == w["worked"]
            # a per-sample output's worked case is one sample; an evaluator's (one number) is the case itself
            # a reordering's worked case is a position of the reordered case
            head = (f"position {w['sample']} of case {w['case_id']}" if w["case_id"].endswith("~permuted") else
                    f"sample {w['sample']} of case {w['case_id']}, gold class {w['gold']}" if w["sample"] is not None
                    else f"case {w['case_id']}, ")
            assert w["worked"].startswith(head)
            assert element.find_element(By.CSS_SELECTOR, ".departure-effect").text == w["effect"]
    assert console_errors(driver) == []


def test_planted_hardness_table_map_and_paper_summary(bundled_site, serve, driver):
    """From the paper's summary to the AUM specimen's page: the summary row says it detects mislabels, the
    page's table gives its figures beside the reference and random, and the data map loads as a picture."""
    base = serve(bundled_site)
    driver.get_log("browser")
    driver.get(base + "/paper/specimen-mapping-sample-hardness-with-training/")
    unfold(driver)
    summary = driver.find_element(By.CSS_SELECTOR, "table.planted-summary")
    kinds = [th.text for th in summary.find_elements(By.CSS_SELECTOR, "thead th")][1:]
    assert kinds == ["uniform", "asymmetric", "adjacent", "near-ood", "far-ood", "atypical"]
    rows = {r.find_element(By.CSS_SELECTOR, "th").text: r for r in summary.find_elements(By.CSS_SELECTOR, "tbody tr")}
    aum = next(r for name, r in rows.items() if name.startswith("aum_scores"))
    cells = aum.find_elements(By.CSS_SELECTOR, "td")
    assert "✓" in cells[0].text and "reference" in cells[0].text
    randoms = next(r for name, r in rows.items() if name.startswith("random_hardness"))
    assert not any("✓" in c.text for c in randoms.find_elements(By.CSS_SELECTOR, "td"))
    assert "random scores" in rows
    link = aum.find_element(By.CSS_SELECTOR, "th a")
    before = driver.current_url
    link.click()
    WebDriverWait(driver, 10).until(lambda b: b.current_url != before and
                                    b.execute_script("return document.readyState") == "complete")
    table = driver.find_element(By.CSS_SELECTOR, "#planted ~ table.planted")
    heads = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads[:4] == ["Kind", "Planted", "AUROC [95%]", "AUPRC"] and "Random AUPRC" in heads
    first = [td.text for td in table.find_elements(By.CSS_SELECTOR, "tbody tr")[0].find_elements(By.TAG_NAME, "td")]
    assert first[0] == "uniform" and first[1] == "10% (20 of 1200; against 1080 clean)"
    auroc, low, high = map(float, re.match(r"^([\d.]+) \[([\d.]+), ([\d.]+)\]$", first[2]).groups())
    assert auroc > 0.9 and low <= auroc <= high  # with its 95% interval
    assert float(first[3]) > 5 * float(first[6])  # AUPRC far above random
    headline = driver.find_element(By.CSS_SELECTOR, ".planted-headline").text
    assert headline.startswith("This implementation of aum: AUPRC") and "paperproof's reference aum" in headline
    picture = driver.find_element(By.CSS_SELECTOR, "figure.planted-figure img")
    assert driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", picture) > 0
    assert console_errors(driver) == []


# --- pages a researcher reads without a manual ---


SAMPLES_PAPER = "/paper/specimen-mapping-sample-hardness-with-training/"


def unfold(browser) -> None:
    """Open every folded table of the page (a long table is in a closed `<details>`), as a reader would."""
    browser.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")


def follow(browser, selector: str) -> str:
    """Click the first element matching `selector`, unfolding it first; return the URL's path and fragment after
    the host."""
    unfold(browser)
    element = browser.find_element(By.CSS_SELECTOR, selector)
    href = element.get_attribute("href")
    element.click()
    WebDriverWait(browser, 10).until(lambda b: b.current_url == href)
    return "/" + browser.current_url.split("/", 3)[3]


def explained(browser, anchor: str) -> tuple[str, str]:
    """The term at `#anchor` on the statuses index, and the explanation that follows it."""
    return tuple(browser.execute_script(
        "const t = document.getElementById(arguments[0]); const next = t.tagName === 'DT' ? t.nextElementSibling :"
        " t.parentElement; return [t.textContent.trim(), next.textContent.trim()];", anchor))


def test_sample_table_headings_and_badges_lead_to_their_explanations(bundled_site, serve, driver):
    from paperproof.catalogue.sample import CONTRACT_CHECK_VOCABULARY, STATUS_VOCABULARY, TIER_VOCABULARY

    base = serve(bundled_site)
    driver.get(base + SAMPLES_PAPER)
    for heading in ("Status", "Contract", "Tier", "Fidelity"):
        driver.get(base + SAMPLES_PAPER)
        path = follow(driver, f"table.samples thead a[href$='#{heading.lower()}']")
        assert path == f"/status/#{heading.lower()}"
        title, section = explained(driver, heading.lower())
        assert title == heading and len(section) > len(heading) + 40
    driver.get(base + SAMPLES_PAPER)
    assert follow(driver, "table.samples td[data-label=Contract] a[href$='#contract-PASSES']") == "/status/#contract-PASSES"
    assert explained(driver, "contract-PASSES") == ("PASSES", CONTRACT_CHECK_VOCABULARY["PASSES"] + ".")
    driver.get(base + SAMPLES_PAPER)
    assert follow(driver, "table.samples td[data-label=Tier] a[href$='#tier-relational']") == "/status/#tier-relational"
    assert explained(driver, "tier-relational") == ("relational", TIER_VOCABULARY["relational"] + ".")
    driver.get(base + SAMPLES_PAPER)
    assert follow(driver, "table.samples td[data-label=Fidelity] a.term") == "/status/#fidelity-paper-s-definition"
    assert explained(driver, "fidelity-paper-s-definition")[0] == "paper's definition"
    driver.get(base + SAMPLES_PAPER)  # the badges of a code link too
    assert follow(driver, ".code-links a.badge.official") == "/status/#links-official"
    assert explained(driver, "links-official")[0] == "official"
    driver.get(base + SAMPLES_PAPER)
    assert follow(driver, ".code-links a.badge[href*='#reach-']").startswith("/status/#reach-")
    # /status/ is an index of the statuses (the header's "Statuses" goes there), each with its count and page
    driver.get(base + "/")
    assert follow(driver, "header nav a[href='/status/']") == "/status/"
    rows = driver.execute_script("return Array.from(document.querySelectorAll('#status ~ table tbody tr, "
                                 "section:has(#status) table tbody tr')).map(r => Array.from(r.cells).map(c => "
                                 "c.textContent.trim()))")
    assert [r[0] for r in rows] == list(STATUS_VOCABULARY)
    assert [r[2] for r in rows] == list(STATUS_VOCABULARY.values())
    assert sum(int(r[1]) for r in rows) == json.loads((bundled_site / "index.json").read_text())["samples"]


FIT = """
const width = document.documentElement.clientWidth;
const beyond = el => el.getBoundingClientRect().right > width + 0.5;
const samples = Array.from(document.querySelectorAll('table.samples'));
const tables = Array.from(document.querySelectorAll('main table'));
return {width: width, page: document.documentElement.scrollWidth,
        tables: tables.filter(beyond).length,
        cells: tables.flatMap(t => Array.from(t.querySelectorAll('td'))).filter(beyond).map(td => td.dataset.label),
        fidelity: samples.flatMap(t => Array.from(t.querySelectorAll('td[data-label=Fidelity]'))).length,
        rows: samples.flatMap(t => Array.from(t.querySelectorAll('tbody tr'))).length,
        stacked: tables.flatMap(t => Array.from(t.querySelectorAll('td'))).every(
          td => getComputedStyle(td).display === 'block'),
        scrolled: Array.from(document.querySelectorAll('pre.bibtex, pre.reproduce')).filter(
          p => p.scrollWidth > p.clientWidth + 1).length};
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_sample_tables_fit_the_page(bundled_site, serve, driver, width):
    base = serve(bundled_site)
    pages = sorted("/" + str(p.parent.relative_to(bundled_site)) + "/" for p in bundled_site.rglob("index.html")
                   if "<table" in p.read_text())  # paper, repository, sample, status and list pages
    assert any(p.startswith("/paper/") for p in pages) and any(p.startswith("/sample/") for p in pages)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    try:
        rows = 0
        for path in pages:
            driver.get(base + path)
            state = driver.execute_script(FIT)
            assert state["page"] <= state["width"], (path, state)  # nothing widens the page past the window
            assert (state["tables"], state["cells"], state["scrolled"]) == (0, [], 0), (path, state)
            assert state["fidelity"] == state["rows"], path  # the fidelity column is there for every row
            assert state["stacked"] == (width == 390), path  # narrow: every table's rows are blocks
            rows += state["rows"]
        assert rows > 20
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


FIRST_SCREEN = """
const verdict = document.querySelector('section.verdict');
const box = verdict.getBoundingClientRect();
const badge = verdict.querySelector('.grade');
return {top: box.top, bottom: box.bottom, left: box.left, right: box.right, screen: innerHeight,
        width: document.documentElement.clientWidth, text: verdict.innerText, badge: badge.textContent,
        shown: getComputedStyle(verdict).visibility === 'visible' && box.height > 0,
        heading: document.querySelector('h1').getBoundingClientRect().top};
"""
AGAINST_LINES = """
return Array.from(document.querySelectorAll('table.implementations td[data-label="Against the paper"]')).map(td => {
  const style = getComputedStyle(td);
  return Math.round((td.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)) /
                    parseFloat(style.lineHeight));
});
"""
VERDICT_PAPERS = ("/paper/dataset-cartography-mapping-and-diagnosing/",
                  "/paper/dissecting-sample-hardness-a-fine-grained/", SAMPLES_PAPER)


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_the_verdict_is_in_the_first_screen(bundled_site, serve, driver, width, height):
    """Both seed papers and a specimen paper: the verdict, its grade and its sentence, is on the first screen
    without scrolling, and "Against the paper" stays a short cell, unfolded, at either width."""
    from paperproof.build.paper_verdict import GRADE_LABELS

    base = serve(bundled_site)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        for path in VERDICT_PAPERS:
            twin = json.loads((bundled_site / (path.strip("/") + ".json")).read_text())
            driver.get(base + path)
            state = driver.execute_script(FIRST_SCREEN)
            assert state["screen"] == height and state["shown"], (path, state)
            assert 0 < state["heading"] < state["top"] < state["bottom"] <= height, (path, state)
            assert 0 <= state["left"] < state["right"] <= state["width"], (path, state)
            assert twin["verdict"]["text"] in state["text"], path
            assert state["badge"] == GRADE_LABELS[twin["verdict"]["grade"]], path
            unfold(driver)
            lines = driver.execute_script(AGAINST_LINES)
            assert lines and max(lines) < 10, (path, lines)
        assert twin["verdict"]["checked"] > 0
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_graded_badges_differ_and_lead_to_their_explanations(bundled_site, serve, driver):
    """Faithful, departs (rescales) and departs (changes the ranking) are three badges, none of them the
    colour of a contract violation, each explained on /status/."""
    from paperproof.build.paper_verdict import GRADE_LABELS, GRADE_MEANINGS

    base = serve(bundled_site)
    driver.get(base + SAMPLES_PAPER)
    unfold(driver)
    colours = driver.execute_script(
        "const seen = {}; document.querySelectorAll('table.samples .grade').forEach(a => { seen[a.textContent] = "
        "getComputedStyle(a).backgroundColor; }); seen.violates = getComputedStyle("
        "document.querySelector('table.samples a.status-ran_violates')).backgroundColor; return seen;")
    grades = [GRADE_LABELS[g] for g in ("faithful", "departs_rescales", "departs_ranking")]
    assert set(colours) == {*grades, "violates"}
    assert len(set(colours.values())) == 4
    for grade in ("faithful", "departs_rescales", "departs_ranking"):
        driver.get(base + SAMPLES_PAPER)
        path = follow(driver, f"table.samples td[data-label=Status] a.grade-{grade}")
        assert path.startswith("/status/#checked-")
        assert explained(driver, path.split("#")[1]) == (GRADE_LABELS[grade], GRADE_MEANINGS[grade] + ".")


def test_fixtures_read_as_shapes_with_their_seed_and_a_partial_ran_is_not_green(bundled_site, serve, driver):
    base = serve(bundled_site)
    driver.get(base + SAMPLES_PAPER)
    unfold(driver)
    sample = next(a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "table.samples td a[href*='/sample/']")
                  if a.text == "confidence_scores")
    driver.get(sample)
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "section[aria-labelledby=cases] td:nth-child(2)")]
    assert "logits = logits [6 epochs × 24 samples × 3 classes], float32 array, seed 11" in cells[0].splitlines()
    assert any("logits [1 epoch × 8 samples × 3 classes]" in c for c in cells)
    assert all("seed" in line or "the number of" in line for c in cells for line in c.splitlines())
    driver.get(base + "/status/ran/")
    badges = driver.execute_script(
        "return Array.from(document.querySelectorAll('table.samples a.status-ran')).map(a => "
        "[a.textContent, a.classList.contains('status-partial'), getComputedStyle(a).backgroundColor])")
    partial = [b for b in badges if b[1]]
    whole = [b for b in badges if not b[1]]
    assert partial and whole
    assert all(re.fullmatch(r"ran, (\d+) of (\d+)", text) for text, _, _ in partial)
    assert {colour for _, _, colour in whole} == {"rgb(217, 242, 217)"}  # the green of a clean run
    assert "rgb(217, 242, 217)" not in {colour for _, _, colour in partial}


def test_a_sample_page_says_how_it_was_loaded_and_where_each_argument_came_from(bundled_site, samples, serve, driver):
    base = serve(bundled_site)
    record = samples["paperproof-specimens/perturb-kit", "run_name"]
    driver.get(f"{base}/sample/{record['sample_id']}/")
    heading = driver.find_element(By.ID, "called")
    assert heading.text == "How it was called"
    items = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "ul.arguments li")]
    assert items == ["args, from a probe run: a probe run raised `AttributeError: 'Namespace' object has no attribute "
                     "'hardness'`, so the options hold `hardness` = 1."]
    notes = driver.find_element(By.CSS_SELECTOR, "section[aria-labelledby=code]").text
    assert "Loaded as its repository loads it: imported `perturb.cli` as its repository does" in notes


def test_opened_as_a_file_the_page_says_how_to_serve_it(bundled_site, serve, driver):
    driver.get((bundled_site / "index.html").as_uri())
    notice = driver.find_element(By.CSS_SELECTOR, ".file-notice")
    assert notice.is_displayed() and "python3 -m http.server -d site 8000" in notice.text
    driver.get(serve(bundled_site) + "/")
    assert not driver.find_element(By.CSS_SELECTOR, ".file-notice").is_displayed()


# --- the XSS corpus ---


@pytest.fixture(scope="module")
def xss_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("xss")
    paper = {**PAPER, "paper_url": "https://paperswithcode.com/paper/payload-paper", "title": TITLE,
             "authors": [AUTHOR, "A. Author"], "abstract": ABSTRACT, "tasks": [TASK, "Image Classification"],
             "proceeding": f"<svg onload=\"{MARK}\">", "url_abs": f"javascript:{MARK}",
             "url_pdf": f"javascript:{MARK}//.pdf", "arxiv_id": f"{SCRIPT}"}
    link = {**LINK, "paper_url": paper["paper_url"], "repo_url": "https://github.com/evil/payload-repo",
            "framework": SVG}
    write_dump(root / "archive", "papers-with-abstracts", [paper])
    write_dump(root / "archive", "links-between-papers-and-code", [link])
    checkout = root / "repos" / "evil+payload-repo"
    (checkout / PAYLOAD_DIR).mkdir(parents=True)
    (checkout / "README.md").write_text(README)
    (checkout / "LICENSE").write_text("SPDX-License-Identifier: MIT\n")  # so the code and docstring are shown
    source = (f'def sample_hardness(scores: list) -> float:\n    """{DOCSTRING}"""\n'
              "    return float(len(scores))\n")
    (checkout / "hardness.py").write_text(source)
    (checkout / PAYLOAD_DIR / "hardness_paths.py").write_text(source.replace("sample_hardness", "path_hardness"))
    build(BuildConfig(archive=str(root / "archive"), repos=root / "repos", out=root / "site", cache=root / "cache"))
    return root / "site"


def test_the_xss_corpus_validates(xss_site):
    from tests.sitecheck import check_site

    problems, checked = check_site(xss_site)
    assert problems == [] and checked > 10


def test_planted_payloads_never_run_and_show_as_text(xss_site, serve, driver):
    base = serve(xss_site)
    pages = sorted(p for p in xss_site.rglob("index.html") if p.relative_to(xss_site).parts[0] != "pagefind")
    texts = {}
    for page in pages:
        path = "/" + str(page.relative_to(xss_site)).removesuffix("index.html")
        driver.get(base + path)
        assert no_alert(driver), path
        state = driver.execute_script(CHECK_PAGE)
        assert state["xss"] == "undefined", path
        assert (state["handlers"], state["inline"], state["jsLinks"], state["svg"]) == ([], 0, 0, 0), path
        assert (state["foreign"], state["remote"]) == ([], 0), path  # nothing loaded from another host
        texts[path] = state["text"]
    paper = texts["/paper/payload-paper/"]
    for shown in (TITLE, AUTHOR, TASK, SVG):  # escaped fields: the payload is on the page as text
        assert shown in paper, shown
    sample_pages = [text for path, text in texts.items() if path.startswith("/sample/")]
    assert len(sample_pages) >= 2
    assert all(DOCSTRING in text for text in sample_pages)
    assert any(PAYLOAD_DIR in text for text in sample_pages)  # the path, as text
    assert TITLE in texts["/repo/evil+payload-repo/"]  # the paper's title, escaped
    driver.get(base + "/repo/evil+payload-repo/")
    readme = driver.find_element(By.CSS_SELECTOR, ".readme")
    assert "Evil" in readme.text and MARK not in readme.text  # sanitised README: payloads removed, not run
    inner = readme.get_attribute("innerHTML")
    assert "<img" not in inner and "onerror" not in inner  # `x` is no image of the checkout: a link to it
    # The JSON-LD survived the `</script>` in the title and still says the title.
    driver.get(base + "/paper/payload-paper/")
    ld = driver.execute_script("return document.querySelector('script[type=\"application/ld+json\"]').textContent")
    assert json.loads(ld)["name"] == TITLE
    assert len(driver.find_elements(By.CSS_SELECTOR, "script")) == 2  # JSON-LD and site.js, nothing injected


def test_search_results_for_payloads_stay_inert(xss_site, serve, driver):
    base = serve(xss_site)
    results = search(driver, base, "payload")
    assert any(r.endswith("/paper/payload-paper/") for r in results)
    assert no_alert(driver)
    state = driver.execute_script(CHECK_PAGE)
    assert state["xss"] == "undefined" and state["handlers"] == [] and state["inline"] == 0
    found = driver.execute_script("return document.querySelectorAll('#search img, #search svg[onload], #search iframe').length")
    assert found == 0
    assert "Payload Paper" in state["text"]
