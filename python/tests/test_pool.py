"""toolbridge.Pool against real servers: tools in each format, calls,
errors, timeouts, progress, elicitation, resources, prompts, completion,
provider responses, and the config sources."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import toolbridge
from conftest import example_server, py_sdk_server


async def test_tools_in_each_format(config: dict[str, Any]) -> None:
    async with toolbridge.Pool(config) as pool:
        mcp = await pool.tools("mcp")
        by_server = {t["serverId"] for t in mcp}
        assert by_server == {"example", "everything", "py", "py1"}
        hello = next(t for t in mcp if t["serverId"] == "example" and t["name"] == "hello")
        assert hello["inputSchema"]["properties"]["name"]["type"] == "string"

        openai = await pool.tools("openai")
        names = {t["function"]["name"] for t in openai}
        assert {"mcp__example__hello", "mcp__py__add", "mcp__everything__echo"} <= names
        assert all(t["type"] == "function" for t in openai)

        anthropic = await pool.tools("anthropic", servers=["py"])
        add = next(t for t in anthropic if t["name"] == "mcp__py__add")
        assert add["input_schema"]["required"] == ["a", "b"]

        gemini = await pool.tools("gemini", servers=["example"])
        declared = {d["name"] for d in gemini[0]["functionDeclarations"]}
        assert "mcp__example__hello" in declared

        with pytest.raises(ValueError, match="unknown format `mistral`"):
            await pool.tools("mistral")


async def test_calls_keep_one_connection_per_server(config: dict[str, Any]) -> None:
    async with toolbridge.Pool(config) as pool:
        results = await asyncio.gather(
            *(pool.call("py", "add", {"a": i, "b": 1}) for i in range(20)),
            pool.call("everything", "echo", {"message": "hi"}),
            pool.call("example", "hello", {"name": "Ada"}),
        )
        assert [r["content"][0]["text"] for r in results[:20]] == [str(i + 1) for i in range(20)]
        assert "hi" in results[20]["content"][0]["text"]
        assert results[21]["content"][0]["text"] == "Hello, Ada!"
        assert sorted(pool.running_server_names) == ["everything", "example", "py"]
    assert pool.running_server_names == []


async def test_errors_name_the_server_and_tool(config: dict[str, Any]) -> None:
    async with toolbridge.Pool(config) as pool:
        with pytest.raises(toolbridge.UsageError, match='server "example" has no tool "nope"'):
            await pool.call("example", "nope", {})
        with pytest.raises(toolbridge.UsageError, match='no server "ghost"|"ghost"'):
            await pool.call("ghost", "x", {})
        # A tool's own failure is a result, as MCP says, not an exception.
        failed = await pool.call("py", "fail", {"message": "boom"})
        assert failed["isError"] is True
        assert "Error executing tool fail" in failed["content"][0]["text"]
        with pytest.raises(TypeError, match="the arguments"):
            await pool.call("py", "add", ["not", "a", "dict"])  # type: ignore[arg-type]


async def test_a_server_that_cannot_start_is_reported_and_the_others_work() -> None:
    config = {"mcpServers": {"example": example_server(), "broken": {"command": "/nonexistent/server"}}}
    async with toolbridge.Pool(config) as pool:
        listing = await pool.list_tools()
        assert "broken" in listing["failures"]
        assert "/nonexistent/server" in listing["failures"]["broken"]
        assert {t["serverId"] for t in listing["tools"]} == {"example"}
        with pytest.raises(toolbridge.ServerError, match="broken"):
            await pool.call("broken", "x", {})


async def test_a_timeout_cancels_the_call_and_the_connection_stays_usable() -> None:
    async with toolbridge.Pool({"mcpServers": {"example": example_server()}}) as pool:
        with pytest.raises(toolbridge.CallTimeout, match='"slow" on server "example" timed out after 0.3 s'):
            await pool.call("example", "slow", {"ms": 30000}, timeout=0.3)
        # CallTimeout is a TimeoutError too.
        with pytest.raises(TimeoutError):
            await pool.call("example", "slow", {"ms": 30000}, timeout=0.2)
        hello = await pool.call("example", "hello", {"name": "again"})
        assert hello["content"][0]["text"] == "Hello, again!"
        with pytest.raises(ValueError, match="positive number of seconds"):
            await pool.call("example", "hello", {"name": "x"}, timeout=-1)


async def test_cancelling_the_awaiting_task_cancels_the_call() -> None:
    async with toolbridge.Pool({"mcpServers": {"example": example_server()}}) as pool:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(pool.call("example", "slow", {"ms": 30000}), 0.3)
        assert (await pool.call("example", "echo", {"text": "still here"}))["content"][0]["text"] == "still here"


async def test_progress_reaches_the_callback_on_the_loop(config: dict[str, Any]) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    loop_thread: list[bool] = []
    loop = asyncio.get_running_loop()

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        loop_thread.append(asyncio.get_running_loop() is loop)
        seen.append((progress, total, message))

    async with toolbridge.Pool(config) as pool:
        result = await pool.call("py", "count", {"steps": 3}, on_progress=on_progress)
        assert result["content"][0]["text"] == "counted 3"
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert all(loop_thread)
        seen.clear()
        await pool.call("example", "slow", {"ms": 250}, on_progress=on_progress)
        assert [p for p, _, _ in seen] == [100, 200, 250]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_elicitation_asks_the_callback(config: dict[str, Any], asynchronous: bool) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def answer(server: str, request: dict[str, Any]) -> dict[str, Any]:
        asked.append((server, request))
        return {"action": "accept", "content": {"color": "teal"}}

    async def answer_async(server: str, request: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return answer(server, request)

    async with toolbridge.Pool(config, on_elicitation=answer_async if asynchronous else answer) as pool:
        result = await pool.call("py1", "ask_color", {})
        assert result["content"][0]["text"] == "color: teal"
        assert asked[0][0] == "py1"
        assert asked[0][1]["message"] == "Which color?"
        assert "color" in asked[0][1]["requestedSchema"]["properties"]


async def test_elicitation_declined_and_a_failing_callback(config: dict[str, Any]) -> None:
    async with toolbridge.Pool(config, on_elicitation=lambda s, r: {"action": "decline"}) as pool:
        result = await pool.call("py1", "ask_color", {})
        assert result["content"][0]["text"] == "no color (decline)"

    def broken(server: str, request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no user here")

    async with toolbridge.Pool(config, on_elicitation=broken) as pool:
        result = await pool.call("py1", "ask_color", {})
        assert result["isError"] is True
        assert "no user here" in result["content"][0]["text"]


async def test_without_an_elicitation_callback_none_is_declared(config: dict[str, Any]) -> None:
    async with toolbridge.Pool(config) as pool:
        result = await pool.call("py1", "ask_color", {})
        assert result["isError"] is True


async def test_resources_prompts_and_completion(config: dict[str, Any]) -> None:
    async with toolbridge.Pool(config) as pool:
        resources = await pool.list_resources("py")
        assert [r["uri"] for r in resources] == ["note://hello"]
        read = await pool.read_resource("py", "note://hello")
        assert read["contents"][0]["text"] == "hello from a resource"
        with pytest.raises(toolbridge.UsageError, match="note://missing"):
            await pool.read_resource("py", "note://missing")

        prompts = await pool.list_prompts("py")
        assert [p["name"] for p in prompts] == ["greet"]
        prompt = await pool.get_prompt("py", "greet", {"name": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Please greet Ada."
        with pytest.raises(toolbridge.UsageError, match="nope"):
            await pool.get_prompt("py", "nope")

        completion = await pool.complete("py", {"type": "ref/prompt", "name": "greet"}, "name", "A")
        assert completion["completion"]["values"] == ["Ada", "Alan"]

        templates = await pool.list_resource_templates("everything")
        assert templates and all("uriTemplate" in t for t in templates)


async def test_exec_runs_a_provider_response(config: dict[str, Any]) -> None:
    openai = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "mcp__py__add", "arguments": '{"a":2,"b":3}'}},
                        {"id": "c2", "type": "function", "function": {"name": "mcp__py__nope", "arguments": "{}"}},
                    ],
                }
            }
        ]
    }
    anthropic = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "mcp__example__hello", "input": {"name": "Bo"}}],
    }
    async with toolbridge.Pool(config) as pool:
        messages = await pool.exec(openai, "openai")
        assert messages[0] == {"role": "tool", "tool_call_id": "c1", "content": "5"}
        assert messages[1]["tool_call_id"] == "c2" and "mcp__py__nope" in messages[1]["content"]
        reply = await pool.exec(anthropic, "anthropic")
        assert reply["role"] == "user"
        assert reply["content"][0]["tool_use_id"] == "t1"
        assert "Hello, Bo!" in json.dumps(reply["content"][0]["content"])
        with pytest.raises(toolbridge.UsageError, match="an error, not tool calls: Overloaded"):
            await pool.exec({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "anthropic")


def test_config_sources(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"py": py_sdk_server()}}))
    assert toolbridge.Pool(path).server_names == ["py"]
    assert toolbridge.Pool(str(path)).server_names == ["py"]

    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"x": {}}}')
    with pytest.raises(toolbridge.ConfigError, match="bad.json"):
        toolbridge.Pool(bad)
    with pytest.raises(toolbridge.ConfigError, match="config dict"):
        toolbridge.Pool({"mcpServers": {"x": {"command": 3}}})
    with pytest.raises(TypeError, match="path, a dict or None"):
        toolbridge.Pool(3)  # type: ignore[arg-type]

    # The user's default config, as the CLI finds it...
    monkeypatch.setenv("TOOLBRIDGE_CONFIG", str(path))
    assert toolbridge.Pool().server_names == ["py"]
    # ...and, where no file is, the built-in example server.
    monkeypatch.delenv("TOOLBRIDGE_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    assert toolbridge.Pool().server_names == ["example"]


async def test_the_default_config_without_a_file_runs_the_example_server(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLBRIDGE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    async with toolbridge.Pool() as pool:
        result = await pool.call("example", "hello", {"name": "default"})
        assert result["content"][0]["text"] == "Hello, default!"
