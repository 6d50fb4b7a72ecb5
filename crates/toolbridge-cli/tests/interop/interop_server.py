"""An MCP server written with the Python `mcp` SDK (2.x) for the gateway's interop
tests: a tool, a resource and a prompt, and `rendezvous`, which waits until
`expect` different callers are in flight at once, then reports progress, logs
and elicits, each carrying the caller's tag, so a test can tell whose is whose.

Run: python interop_server.py stdio
     python interop_server.py streamable-http   (prints LISTENING <port>)
"""

import socket
import warnings
import sys
from typing import Annotated

import anyio
import uvicorn
from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve

# Logging is deprecated in 2026-07-28 (SEP-2577) but still carried: the test needs it.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

server = MCPServer("py-interop")


@server.tool()
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


@server.resource("py://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from python"


@server.prompt()
def welcome(name: str) -> str:
    """Welcomes someone by name."""
    return f"Welcome, {name}!"


class Answer(BaseModel):
    reply: str


# Tags of the callers that reached the rendezvous, and the event set once
# `expect` of them have.
arrived: set[str] = set()
everyone = anyio.Event()


async def ask(tag: str, expect: int, ctx: Context) -> Elicit[Answer]:
    """Meets the other callers, then asks this caller a question naming its tag.

    Runs again on each round of the 2026-07-28 input-required flow; only the
    first arrival of a tag counts."""
    await ctx.report_progress(1, 2, f"progress for {tag}")
    await ctx.info(f"log for {tag}")
    arrived.add(tag)
    if len(arrived) >= expect:
        everyone.set()
    with anyio.fail_after(30):
        await everyone.wait()
    return Elicit(f"question for {tag}", Answer)


@server.tool()
async def rendezvous(
    tag: str, expect: int, answer: Annotated[Answer, Resolve(ask)], ctx: Context
) -> str:
    """Waits for `expect` callers, then reports progress, logs and elicits for `tag`."""
    await ctx.report_progress(2, 2, f"progress for {tag}")
    return f"{tag} got {answer.reply}"


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run()
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        print(f"LISTENING {sock.getsockname()[1]}", flush=True)
        config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
        uvicorn.Server(config).run(sockets=[sock])
