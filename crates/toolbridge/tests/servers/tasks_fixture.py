"""The tools the conformance suite's `tasks-*` server scenarios call
(0.2.0-alpha.12), served by a server that knows nothing of tasks: written
with the Python `mcp` SDK 1.x (2025-11-25), every tool a plain call. Behind
`toolbridge serve`, the gateway's own tasks are what the scenarios test.

Usage: python tasks_fixture.py stdio|streamable-http   (over HTTP it binds
127.0.0.1 on a free port and prints `LISTENING <port>`; its questions then
ride their calls' own response streams, so calls in flight side by side are
each asked their own)

Tools:
  greet NAME            "Hello, NAME!" at once.
  slow_compute SECONDS LABEL
                        sleeps SECONDS, then "computed LABEL in SECONDSs".
  failing_job           after about a second, a tool error ("the job failed").
  protocol_error_job    after about a second, a JSON-RPC error (-32603).
  confirm_delete FILENAME
                        asks the client (elicitation) whether to delete it,
                        then "deleted FILENAME" or "kept FILENAME".
  multi_input           asks the client two questions at once, then names
                        both answers.
"""

import socket
import sys

import anyio
import mcp.types as types
from mcp.server.fastmcp import FastMCP
from mcp.shared.exceptions import McpError

fast = FastMCP("tasks-fixture")
# The SDK's low-level server, its handlers set by hand below.
server = fast._mcp_server

CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}, "name": {"type": "string"}},
}


def tool(name, description, properties=None):
    return types.Tool(
        name=name,
        description=description,
        inputSchema={"type": "object", "properties": properties or {}},
    )


async def list_tools(_request):
    return types.ServerResult(types.ListToolsResult(tools=[
        tool("greet", "Says hello at once", {"name": {"type": "string"}}),
        tool(
            "slow_compute",
            "Sleeps for a number of seconds, then answers",
            {"seconds": {"type": "number"}, "label": {"type": "string"}},
        ),
        tool("failing_job", "Fails with a tool error after about a second"),
        tool("protocol_error_job", "Fails with a JSON-RPC error after about a second"),
        tool(
            "confirm_delete",
            "Asks whether to delete a file",
            {"filename": {"type": "string"}},
        ),
        tool("multi_input", "Asks two questions at once"),
    ]))


def text(message, is_error=False):
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], isError=is_error
    )


async def ask(message):
    context = server.request_context
    answer = await context.session.elicit_form(
        message, CONFIRM, related_request_id=context.request_id
    )
    return answer.action, answer.content or {}


async def call(name, arguments):
    if name == "greet":
        return text(f"Hello, {arguments.get('name', 'World')}!")
    if name == "slow_compute":
        seconds = float(arguments.get("seconds", 1))
        await anyio.sleep(seconds)
        return text(f"computed {arguments.get('label', '')} in {seconds:g}s")
    if name == "failing_job":
        await anyio.sleep(1)
        return text("the job failed", is_error=True)
    if name == "protocol_error_job":
        await anyio.sleep(1)
        raise McpError(types.ErrorData(code=-32603, message="the job crashed"))
    if name == "confirm_delete":
        filename = arguments.get("filename", "")
        action, content = await ask(f"Delete {filename}?")
        done = action == "accept" and content.get("confirm")
        return text(f"{'deleted' if done else 'kept'} {filename}")
    if name == "multi_input":
        answers = {}

        async def one(key):
            answers[key] = await ask(f"Your {key}?")

        async with anyio.create_task_group() as group:
            group.start_soon(one, "first")
            group.start_soon(one, "second")
        names = ", ".join(
            f"{key}={content.get('name', action)}" for key, (action, content) in sorted(answers.items())
        )
        return text(f"answers: {names}")
    raise McpError(types.ErrorData(code=-32602, message=f"no tool {name}"))


async def handle(request: types.CallToolRequest):
    # Registered by hand: the SDK's decorator turns every exception into a
    # tool error, and protocol_error_job's must stay a JSON-RPC error.
    result = await call(request.params.name, request.params.arguments or {})
    return types.ServerResult(result)


server.request_handlers[types.ListToolsRequest] = list_tools
server.request_handlers[types.CallToolRequest] = handle

if sys.argv[1:] == ["streamable-http"]:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"LISTENING {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(fast.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
else:
    fast.run("stdio")
