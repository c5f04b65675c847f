"""The site in a real browser: headless Chromium opens the built site from a local HTTP server.

On the bundled site it navigates index -> paper -> repository -> sample by clicking links and runs a
search, and finds no console error. On a corpus with XSS payloads planted in archive fields (title,
authors, abstract, tasks, proceeding, URLs), a README, a docstring and a file path, it opens every
page and finds that no payload ran, the escaped ones show as text, and search results stay inert.

Needs Debian's `chromium` and `chromium-driver` (installed by .ci/run); skipped where they are absent,
except under `PAPERPROOF_REQUIRE_BROWSER=1` (set by .ci/run), where their absence fails the module.
One browser serves the whole module.
"""

from __future__ import annotations

import functools
import json
import os
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
          f"<a href=\"#\" onclick=\"{MARK}\">click</a>\n\n<style>body{{display:none}}</style>\n")
DOCSTRING = f"Score samples. {SCRIPT} {IMG} {SVG}"
PAYLOAD_DIR = 'pkg"><svg onload=window.__xss=1>'

CHECK_PAGE = """
const handlers = Array.from(document.querySelectorAll('*')).filter(
  e => Array.from(e.attributes).some(a => a.name.toLowerCase().startsWith('on'))).map(e => e.tagName);
const inline = Array.from(document.scripts).filter(s => !s.src && s.type !== 'application/ld+json').length;
const jsLinks = Array.from(document.querySelectorAll('[href],[src]')).filter(
  e => /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || '')).length;
return {xss: typeof window.__xss, handlers: handlers, inline: inline, jsLinks: jsLinks,
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
    assert readme.get_attribute("innerHTML").count("<img") == 1 and "onerror" not in readme.get_attribute("innerHTML")
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
