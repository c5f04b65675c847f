"""`paperproof mcp`: a real MCP session over stdio, with the SDK's own client (`stdio_client`, `ClientSession`),
against a site built here. The server is started exactly as docs/programs.md tells a client to start it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.test_code_pages import OTHER, OTHER_SLUG, sample_twins, small_site

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv whose `paperproof` the docs' configuration names
TOOLS = {"get_paper", "get_paper_samples", "get_code", "search"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_site(tmp_path_factory.mktemp("mcp"), checkouts=True)


def documented_server(site: Path) -> StdioServerParameters:
    """The `mcpServers` entry of docs/programs.md, pointed at `site`."""
    doc = (ROOT / "docs" / "programs.md").read_text()
    block = re.search(r"<!-- mcp-config -->\n```json\n(.*?)```", doc, re.DOTALL)
    assert block is not None
    entry = json.loads(block.group(1))["mcpServers"]["paperproof"]
    args = list(entry["args"])
    args[args.index("--site") + 1] = str(site)
    return StdioServerParameters(command=str(BIN / entry["command"]), args=args)


def session(site: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    """The tools the server lists and the result of each call, in one session."""
    async def run() -> tuple[list[str], list[Any]]:
        with open(site.parent / "server.log", "w") as errlog:
            async with stdio_client(documented_server(site), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    listed = await client.list_tools()
                    results = [await client.call_tool(name, args) for name, args in calls]
        return [tool.name for tool in listed.tools], results

    return anyio.run(run)


def payload(result: Any) -> dict:
    assert not result.is_error, result.content
    text = json.loads(result.content[0].text)
    assert result.structured_content == text  # the same record, as structure and as text
    return text


def test_a_client_lists_the_tools_fetches_a_paper_its_samples_code_and_searches(site):
    sample = next(s for s in sample_twins(site) if s["repo"] == "lab/open")
    sha = sample["code_sha256"]
    names, results = session(site, [
        ("get_paper", {"paper": "arXiv:2202.00002v3"}),
        ("get_paper", {"paper": "a-good-paper"}),
        ("get_paper_samples", {"paper": "https://arxiv.org/abs/2101.00001"}),
        ("get_code", {"code_sha256": sha}),
        ("get_code", {"code_sha256": sha[:16]}),
        ("search", {"query": "Closed"}),
        ("search", {"query": "margin", "limit": 5}),
        ("get_code", {"code_sha256": "0" * 64}),
        ("get_code", {"code_sha256": "0" * 16}),
        ("get_paper", {"paper": "2999.99999"}),
        ("search", {"query": "   "}),
    ])
    assert set(names) == TOOLS
    by_arxiv, by_slug, samples, full, prefix, closed, margin, *errors = results
    assert payload(by_arxiv) == json.loads((site / "paper" / f"{OTHER_SLUG}.json").read_text())
    assert payload(by_arxiv)["title"] == OTHER["title"]
    assert payload(by_slug) == json.loads((site / "paper" / "a-good-paper.json").read_text())
    listed = payload(samples)
    assert listed["title"] == "A Good Paper" and listed["json_url"] == "/paper/a-good-paper.json"
    assert [(s["repo"], s["code"]["code_sha256"]) for s in listed["samples"]] == [("lab/open", sha)]
    # code by its full hash and by the 16 digits the pages show: the published record, code and attribution
    record = json.loads((site / "code" / f"{sha}.json").read_text())
    assert payload(full) == payload(prefix) == record
    assert record["code"] == sample["source"] and record["attribution"]["licence"] == "MIT"
    found = payload(closed)  # the paper whose title holds it, then the sample whose repository does
    assert [(r["kind"], r["json_url"]) for r in found["results"]] == [
        ("paper", f"/paper/{OTHER_SLUG}.json"), ("sample", next(f"/sample/{s['sample_id']}.json" for s in sample_twins(site)
                                                            if s["repo"] == "lab/closed"))]
    assert found["total"] == 2
    entries = payload(margin)["results"]
    assert {(r["kind"], r["entry"], r["repo"]) for r in entries} == {("sample", "mean_margin", "lab/open"),
                                                                     ("sample", "mean_margin", "lab/closed")}
    unknown, no_prefix, no_paper, empty = errors
    for result in errors:
        assert result.is_error and result.structured_content is None
    assert f"no code with sha256 {'0' * 64} in this site" in unknown.content[0].text
    assert f"no code whose sha256 begins with {'0' * 16}" in no_prefix.content[0].text
    assert "no paper with arXiv id 2999.99999" in no_paper.content[0].text
    assert "an empty query" in empty.content[0].text


def test_a_client_sees_a_rebuilt_site_without_restarting_the_server(site, tmp_path):
    """The server reads what the site holds at each call: the marker of a new build drops what it gathered."""
    copy = tmp_path / "site"
    subprocess.run(["cp", "-a", str(site), str(copy)], check=True)
    shipped = next(s for s in sample_twins(copy) if s["repo"] == "eliorc/tavolo")

    async def run() -> list[Any]:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(documented_server(copy), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    before = await client.call_tool("get_code", {"code_sha256": shipped["code_sha256"][:16]})
                    (copy / "code" / f"{shipped['code_sha256']}.json").unlink()
                    (copy / ".paperproof-build").write_text('{"tree":"another"}\n')
                    after = await client.call_tool("get_code", {"code_sha256": shipped["code_sha256"][:16]})
        return [before, after]

    before, after = anyio.run(run)
    assert payload(before)["code_sha256"] == shipped["code_sha256"]
    assert after.is_error and "no code whose sha256 begins with" in after.content[0].text


def test_a_folder_that_is_not_a_site_is_refused_at_once_with_exit_2(tmp_path):
    done = subprocess.run([str(BIN / "paperproof"), "mcp", "--site", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert "not a site paperproof built" in done.stderr and str(tmp_path / "nowhere") in done.stderr
