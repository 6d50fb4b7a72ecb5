"""A streamable HTTP server written with the Python `mcp` SDK 2.x's low-level
`Server`, whose tools designate parameters to be mirrored into `Mcp-Param-*`
headers (SEP-2243, protocol 2026-07-28). The SDK checks those headers on every
`tools/call` against the body's arguments and refuses a call whose headers are
missing or differ (HTTP 400), so a call that succeeds had them right.

Tools:
  forecast  region (string, header Region), days (integer, header Days),
            metric (boolean, header Metric), note (string, no header); says
            what it was given;
  broken    its one parameter designates a header on a `number`, which
            SEP-2243 forbids: clients must leave the tool out and never call
            it. Called anyway, it prints `CALLED broken`.

Each request's `traceparent` header (W3C trace context) is printed as
`TRACEPARENT <value>`.

Run: python param_headers.py (binds 127.0.0.1, prints `LISTENING <port>`).
"""

import json
import socket

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server

FORECAST = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "days": {"type": "integer", "x-mcp-header": "Days"},
        "metric": {"type": "boolean", "x-mcp-header": "Metric"},
        "note": {"type": "string"},
    },
    "required": ["region"],
}
BROKEN = {
    "type": "object",
    "properties": {"score": {"type": "number", "x-mcp-header": "Score"}},
}


async def list_tools(ctx, params):
    return types.ListToolsResult(
        tools=[
            types.Tool(name="forecast", description="The weather of a region.", input_schema=FORECAST),
            types.Tool(name="broken", description="Designates a header on a number.", input_schema=BROKEN),
        ]
    )


async def call_tool(ctx, params):
    if params.name == "broken":
        print("CALLED broken", flush=True)
    text = json.dumps({"tool": params.name, "arguments": params.arguments}, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("param-headers", on_list_tools=list_tools, on_call_tool=call_tool)
app = server.streamable_http_app(host="127.0.0.1")


def printing_traceparent(inner):
    """The ASGI app `inner`, printing each request's `traceparent` header."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            for name, value in scope.get("headers") or []:
                if name == b"traceparent":
                    print(f"TRACEPARENT {value.decode()}", flush=True)
        await inner(scope, receive, send)

    return wrapped


app = printing_traceparent(app)

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print(f"LISTENING {sock.getsockname()[1]}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
