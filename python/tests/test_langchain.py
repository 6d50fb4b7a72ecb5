"""toolbridge.langchain: the drop-in MultiServerMCPClient and
load_mcp_tools against real servers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage

from conftest import everything_server, example_server, py_sdk_server
from toolbridge.langchain import Callbacks, CallbackContext, MultiServerMCPClient, load_mcp_tools


def connections() -> dict[str, Any]:
    return {
        "example": {**example_server(), "transport": "stdio"},
        "py": {**py_sdk_server(), "transport": "stdio"},
        "everything": {**everything_server(), "transport": "stdio"},
    }


async def test_get_tools_and_call_them() -> None:
    async with MultiServerMCPClient(connections()) as client:
        tools = {t.name: t for t in await client.get_tools()}
        assert {"hello", "add", "echo"} <= set(tools)
        result = await tools["add"].ainvoke({"type": "tool_call", "id": "1", "name": "add", "args": {"a": 2, "b": 5}})
        assert isinstance(result, ToolMessage)
        assert result.content[0]["text"] == "7"
        # The tool's own failure is a ToolMessage with status "error".
        failed = await tools["fail"].ainvoke({"type": "tool_call", "id": "2", "name": "fail", "args": {"message": "x"}})
        assert failed.status == "error"
        image = await tools["tiny_image"].ainvoke({})
        assert image[0]["type"] == "image" and image[0]["mime_type"] == "image/png"
        # One connection per server, kept across calls.
        assert sorted(client.pool().running_server_names) == ["everything", "example", "py"]


async def test_one_failing_server_does_not_fail_the_others() -> None:
    client = MultiServerMCPClient({**connections(), "broken": {"command": "/nonexistent/server", "args": [], "transport": "stdio"}})
    try:
        tools = await client.get_tools()
        assert "hello" in {t.name for t in tools}
        assert "/nonexistent/server" in client.failures["broken"]
        with pytest.raises(Exception, match="broken"):
            await client.get_tools(server_name="broken")
        with pytest.raises(ValueError, match="Couldn't find a server with name 'ghost'"):
            await client.get_tools(server_name="ghost")
    finally:
        await client.aclose()


async def test_prefix_session_load_mcp_tools_prompts_and_resources() -> None:
    client = MultiServerMCPClient(connections(), tool_name_prefix=True)
    try:
        names = {t.name for t in await client.get_tools(server_name="py")}
        assert "py_add" in names
        async with client.session("py") as session:
            tools = await load_mcp_tools(session)
            assert "add" in {t.name for t in tools}
            listed = await session.list_tools()
            assert "add" in {t.name for t in listed.tools}
            called = await session.call_tool("add", {"a": 1, "b": 1})
            assert called.content[0].text == "2"
        messages = await client.get_prompt("py", "greet", arguments={"name": "Ada"})
        assert messages == [HumanMessage(content="Please greet Ada.")]
        blobs = await client.get_resources("py")
        assert [b.as_string() for b in blobs] == ["hello from a resource"]
        assert blobs[0].metadata == {"uri": "note://hello"}
    finally:
        await client.aclose()


async def test_progress_callback_gets_the_context() -> None:
    seen: list[tuple[float, Any, Any, CallbackContext]] = []

    async def on_progress(progress: float, total: Any, message: Any, context: CallbackContext) -> None:
        seen.append((progress, total, message, context))

    client = MultiServerMCPClient(connections(), callbacks=Callbacks(on_progress=on_progress))
    try:
        tools = {t.name: t for t in await client.get_tools(server_name="py")}
        await tools["count"].ainvoke({"steps": 2})
        assert [s[0] for s in seen] == [1, 2]
        assert seen[0][3] == CallbackContext(server_name="py", tool_name="count")
    finally:
        await client.aclose()


async def test_load_mcp_tools_from_a_connection() -> None:
    tools = await load_mcp_tools(None, connection={**example_server(), "transport": "stdio"}, server_name="example")
    hello = next(t for t in tools if t.name == "hello")
    assert (await hello.ainvoke({"name": "Bo"}))[0]["text"] == "Hello, Bo!"


async def test_interceptors_wrap_the_call_in_order() -> None:
    order: list[str] = []

    async def double_a(request: Any, handler: Any) -> Any:
        order.append("outer")
        return await handler(request.override(args={**request.args, "a": request.args["a"] * 2}))

    async def tag(request: Any, handler: Any) -> Any:
        order.append(f"inner {request.args['a']}")
        result = await handler(request)
        result.content[0].text += "!"
        return result

    client = MultiServerMCPClient(connections(), tool_interceptors=[double_a, tag])
    try:
        tools = {t.name: t for t in await client.get_tools(server_name="py")}
        assert (await tools["add"].ainvoke({"a": 5, "b": 1}))[0]["text"] == "11!"
        assert order == ["outer", "inner 10"]
    finally:
        await client.aclose()


async def test_server_info_and_logging_messages() -> None:
    logged: list[tuple[str, str]] = []

    async def on_logging_message(params: Any, context: CallbackContext) -> None:
        logged.append((context.server_name, params.data))

    client = MultiServerMCPClient(connections(), callbacks=Callbacks(on_logging_message=on_logging_message))
    try:
        info = await client.get_server_info(server_name="py")
        assert info["py"].serverInfo.name == "py-sdk-test"
        tools = {t.name: t for t in await client.get_tools(server_name="py")}
        await tools["note"].ainvoke({"text": "written down"})
        deadline = time.monotonic() + 10
        while ("py", "written down") not in logged:
            assert time.monotonic() < deadline, logged
            await asyncio.sleep(0.01)
        with pytest.raises(RuntimeError, match="'broken'"):
            client.connections["broken"] = {"command": "/nonexistent/server", "args": [], "transport": "stdio"}
            await client.get_server_info()
    finally:
        await client.aclose()


async def test_an_interceptors_headers_are_sent_with_that_call(http_server_url: str) -> None:
    async def with_headers(request: Any, handler: Any) -> Any:
        if request.server_name == "http":
            # `$HOME` is literal: the config's `${VAR}` expansion is not applied.
            request = request.override(headers={"X-Test": "v1", "X-Dollar": "$HOME ${HOME}"})
        return await handler(request)

    conns = {
        "http": {"transport": "streamable_http", "url": http_server_url, "headers": {"X-Base": "base"}},
        "example": {**example_server(), "transport": "stdio"},
    }
    client = MultiServerMCPClient(conns, tool_interceptors=[with_headers])
    try:
        header = next(t for t in await client.get_tools(server_name="http") if t.name == "header")
        assert (await header.ainvoke({"name": "x-test"}))[0]["text"] == "v1"
        assert (await header.ainvoke({"name": "x-dollar"}))[0]["text"] == "$HOME ${HOME}"
        # Merged over the connection's own headers, as langchain-mcp-adapters does.
        assert (await header.ainvoke({"name": "x-base"}))[0]["text"] == "base"
        async with client.session("http") as session:
            tools = await load_mcp_tools(session, tool_interceptors=[with_headers])
            in_session = next(t for t in tools if t.name == "header")
            assert (await in_session.ainvoke({"name": "x-test"}))[0]["text"] == "v1"
    finally:
        await client.aclose()

    # Without an interceptor's headers, the pool's shared connection: only
    # the connection's.
    plain = MultiServerMCPClient(conns)
    try:
        header = next(t for t in await plain.get_tools(server_name="http") if t.name == "header")
        assert (await header.ainvoke({"name": "x-test"}))[0]["text"] == ""
        assert (await header.ainvoke({"name": "x-base"}))[0]["text"] == "base"
    finally:
        await plain.aclose()


async def test_an_interceptors_headers_for_a_stdio_server_are_an_error() -> None:
    async def with_headers(request: Any, handler: Any) -> Any:
        return await handler(request.override(headers={"Authorization": "Bearer t"}))

    client = MultiServerMCPClient({"example": {**example_server(), "transport": "stdio"}}, tool_interceptors=[with_headers])
    try:
        hello = next(t for t in await client.get_tools() if t.name == "hello")
        with pytest.raises(ValueError, match="headers are sent only to HTTP and SSE servers and 'example' is a stdio server"):
            await hello.ainvoke({"name": "Bo"})
    finally:
        await client.aclose()
