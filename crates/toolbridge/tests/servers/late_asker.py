"""A server that asks its client a question after the call that caused it
ended (issue 32's eighth finding), written with the Python `mcp` SDK 1.x (2025-11-25: a question is a request
to the client on the session; 2.x speaks 2026-07-28 to toolbridge, where a
server asks only in a call's result).

Usage: python late_asker.py stdio|streamable-http

Tools:
  ask_late   waits until a `hold` call is running, remembers the question
             to ask and returns at once: the question comes later.
  hold FIFO  waits until someone opens the FIFO for writing, then sends the
             question `ask_late` left (on the session, naming no request:
             over streamable HTTP it rides the standalone stream) and
             returns what became of it.
  ask_now WHO  asks "question for WHO" during the call, naming no request,
             and returns what became of it.
  log_late   as ask_late, for a log message: the next `hold` sends "the
             late log of log_late's caller" on the session, naming no
             request, before it returns "logged late".
  log_now WHO [after_hold]  sends the log message "log of WHO" naming no
             request (once a `hold` call runs, with after_hold), then
             returns "logged".

What became of a question: `answered: ACTION CONTENT` or `refused: CODE
MESSAGE`. Over HTTP it binds 127.0.0.1 on a free port and prints
`LISTENING <port>`.
"""

import json
import socket
import sys

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError

server = FastMCP("late-asker")
late = {}


def holding() -> anyio.Event:
    """Set once a `hold` call runs (made in the server's event loop)."""
    return late.setdefault("holding", anyio.Event())

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


async def outcome(session, message: str) -> str:
    try:
        result = await session.elicit_form(message, SCHEMA, related_request_id=None)
    except McpError as e:
        return f"refused: {e.error.code} {e.error.message}"
    return f"answered: {result.action} {json.dumps(result.content, sort_keys=True)}"


@server.tool()
async def ask_late(ctx: Context) -> str:
    """Returns at once; its question comes during the next `hold`."""
    await holding().wait()
    late["session"] = ctx.session
    return "will ask later"


@server.tool()
async def hold(fifo: str) -> str:
    """Waits for a writer on FIFO, then asks the question `ask_late` left."""
    holding().set()

    def wait_for_writer() -> None:
        with open(fifo, "rb") as f:
            f.read()

    await anyio.to_thread.run_sync(wait_for_writer)
    if late.pop("log", False):
        await late["session"].send_log_message(
            "info", "the late log of log_late's caller", related_request_id=None
        )
        return "logged late"
    if "session" not in late:
        return "nothing was left to send"
    return await outcome(late["session"], "the late question of ask_late's caller")


@server.tool()
async def log_late(ctx: Context) -> str:
    """Returns at once; its log message comes during the next `hold`."""
    await holding().wait()
    late["session"] = ctx.session
    late["log"] = True
    return "will log later"


@server.tool()
async def log_now(who: str, ctx: Context, after_hold: bool = False) -> str:
    """Sends a log message naming no request, then returns."""
    if after_hold:
        await holding().wait()
    await ctx.session.send_log_message("info", f"log of {who}", related_request_id=None)
    return "logged"


@server.tool()
async def ask_now(who: str, ctx: Context) -> str:
    """Asks during the call and says what became of the question."""
    return await outcome(ctx.session, f"question for {who}")


if sys.argv[1] == "stdio":
    server.run("stdio")
else:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"LISTENING {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
