"""A small MCP server built with the Python `mcp` SDK, for toolbridge's interop tests.

Usage: python py_server.py sse|streamable-http|websocket

`sse` and `streamable-http` need mcp 2.x (MCPServer); `websocket` needs mcp 1.x
(mcp.server.websocket was removed in 2.x). The server binds 127.0.0.1 on a free
port and prints `LISTENING <port>` on stdout once it accepts connections. When a
tool call is cancelled it prints `CANCELLED <tool>`.

If TOOLBRIDGE_TEST_TOKEN is set, every HTTP request and WebSocket handshake must
carry `Authorization: Bearer <token>`, or it is refused with 401.
"""

import os
import socket
import sys

import anyio
import uvicorn

transport = sys.argv[1]
token = os.environ.get("TOOLBRIDGE_TEST_TOKEN")

if transport == "websocket":
    from mcp.server.fastmcp import FastMCP as Server
else:
    from mcp.server.mcpserver import MCPServer as Server

mcp = Server("py-test-server")


@mcp.tool()
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"Echo: {message}"


@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then says how long it slept."""
    print("STARTED slow", flush=True)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        print("CANCELLED slow", flush=True)
        raise
    return f"slept {seconds}"


def require_token(app):
    """ASGI middleware: refuse requests without the bearer token."""
    if not token:
        return app

    async def guarded(scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                if scope["type"] == "websocket":
                    # Before accept: the server answers the handshake with 403.
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return guarded


def websocket_app():
    from mcp.server.websocket import websocket_server
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute

    lowlevel = mcp._mcp_server

    async def endpoint(websocket):
        async with websocket_server(websocket.scope, websocket.receive, websocket.send) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


if transport == "sse":
    app = mcp.sse_app(host="127.0.0.1")
elif transport == "streamable-http":
    app = mcp.streamable_http_app(host="127.0.0.1")
elif transport == "websocket":
    app = websocket_app()
else:
    sys.exit(f"unknown transport {transport!r}")

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print(f"LISTENING {sock.getsockname()[1]}", flush=True)

config = uvicorn.Config(
    require_token(app),
    log_level="warning",
    # Pings every 0.2 s that must be answered within 1 s: a client that
    # ignores pings loses the connection during a one-second call.
    ws_ping_interval=0.2,
    ws_ping_timeout=1.0,
)
uvicorn.Server(config).run(sockets=[sock])
