"""`paperproof mcp`: an MCP server over stdio, on the official `mcp` SDK, that answers from a built site.

Four tools, each a question a program asks of the catalogue: a paper (by arXiv id or slug), its samples, a
sample's code by sha256 (the full hash or the 16-digit prefix the twins show), and search. Every answer is a
record the site already publishes (`serve.mcp_site`); a question the site cannot answer is a tool error whose
message says why, never an empty success.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from paperproof import __version__
from paperproof.serve.mcp_site import NotInSite, SiteReader

INSTRUCTIONS = """\
paperproof's catalogue: papers, the code linked to them, and what happened when that code ran in a sandbox,
checked against its own declarations and, for sample-hardness metrics, against the paper's definition.
Find a paper with `search` or `get_paper` (arXiv id or slug), list what was run with `get_paper_samples`,
and fetch a sample's code with `get_code` (its `code.code_sha256`, or the 16-digit `code_sha256_prefix`):
the code itself where its licence allows, else where it is at the pinned commit, with line ranges."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def server(reader: SiteReader) -> MCPServer:
    """The MCP server of the site `reader` reads (a folder `paperproof build` wrote)."""
    app: MCPServer = MCPServer("paperproof", version=__version__, instructions=INSTRUCTIONS)

    def answer(ask: Any, *args: Any) -> dict[str, Any]:
        try:
            return ask(*args)
        except NotInSite as exc:
            raise ToolError(str(exc)) from None

    @app.tool(annotations=READ_ONLY)
    def get_paper(paper: str) -> dict[str, Any]:
        """A paper's record (its JSON twin): title, authors, abstract, code links, and `verification` (the
        samples of its repositories, their statuses, implementations checked against the paper). `paper` is an
        arXiv id (2403.04551, arXiv:2403.04551v2 or its arxiv.org URL) or the paper's slug."""
        return answer(reader.paper, paper)

    @app.tool(annotations=READ_ONLY)
    def get_paper_samples(paper: str) -> dict[str, Any]:
        """The samples of a paper's repositories: entry, repository, path, status, `checked`, fidelity to the
        paper, and `code.code_sha256` for `get_code`. `paper` as for `get_paper`."""
        return answer(reader.paper_samples, paper)

    @app.tool(annotations=READ_ONLY)
    def get_code(code_sha256: str) -> dict[str, Any]:
        """A sample's code by its sha256 (64 hex digits, or a prefix of at least 16 that one code alone begins
        with): `code` and its `attribution` (licence, repository) where the licence lets it be shown, else
        `pointer_only` says why; `places` gives each repository, commit, path, line range and link."""
        return answer(reader.code, code_sha256)

    @app.tool(annotations=READ_ONLY)
    def search(query: str, limit: int = 20) -> dict[str, Any]:
        """Papers (by title, author, task) and samples (by entry, repository, path) holding every word of
        `query`, best first: `total` matches, the first `limit` (1 to 100) in `results`."""
        return answer(reader.search, query, limit)

    return app


def serve(reader: SiteReader) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    server(reader).run("stdio")


__all__ = ["server", "serve"]
