"""Resources and prompts written with the Python `mcp` SDK (2.x), which
speaks the 2026-07-28 protocol, over stdio, for the resource and prompt tests.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-catalog")


@server.resource("note://hello", mime_type="text/plain")
def hello() -> str:
    """A greeting."""
    return "hello from python"


@server.resource("note://item/{id}")
def item(id: str) -> str:
    """One item, by id."""
    return f"item {id}"


@server.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review: {code}"


if __name__ == "__main__":
    server.run("stdio")
