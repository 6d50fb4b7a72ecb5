"""toolbridge for Python: a pool of MCP servers in-process.

The pool, the provider formats and the process cleanup are the Rust library
(`crates/toolbridge`); this package converts types and calls it on its tokio
runtime, awaited from asyncio.

    async with toolbridge.Pool("mcp.json") as pool:
        tools = await pool.tools(format="openai")
        result = await pool.call("example", "hello", {"name": "Ada"})
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Union

from toolbridge import _native
from toolbridge.errors import CallTimeout, ConfigError, ServerError, ToolbridgeError, UsageError

__all__ = [
    "Pool",
    "Format",
    "ToolbridgeError",
    "ConfigError",
    "UsageError",
    "ServerError",
    "CallTimeout",
    "example_server_command",
]

# Library threads stop entering the interpreter once it exits (see the
# extension's `bridge` module).
atexit.register(_native.drain)

Format = Literal["mcp", "openai", "openai-responses", "anthropic", "gemini"]
"""A tool format: MCP's own, or one provider's."""

ElicitationCallback = Callable[[str, dict[str, Any]], Union[dict[str, Any], Awaitable[dict[str, Any]]]]
"""`(server, request) -> answer`: `request` is the `elicitation/create`
params (`message`, `requestedSchema`), the answer `{"action": "accept",
"content": {...}}`, `{"action": "decline"}` or `{"action": "cancel"}`; may be
`async`."""

LogCallback = Callable[[str, dict[str, Any]], object]
"""`(server, message)`: a server's log message (`level`, `logger`, `data`),
called on the loop of the latest call into the pool."""

ProgressCallback = Callable[[float, Union[float, None], Union[str, None]], object]
"""`(progress, total, message)`, called on the caller's event loop."""


def example_server_command() -> tuple[str, list[str]]:
    """The command that runs the built-in example MCP server: this
    interpreter with `-m toolbridge example-server`."""
    return sys.executable, ["-m", "toolbridge", "example-server"]


class Pool:
    """A pool of MCP servers: each started on first use and kept, calls
    multiplexed on one connection per server, and every server process
    killed when the pool closes, or when this interpreter dies (even by
    `kill -9`: the library's reaper process does it).

    `config` is a config file's path, a dict in the config file's shape
    (`{"mcpServers": {name: {"command": ..., "args": [...]}}}`), or `None`
    for the user's default config (`$TOOLBRIDGE_CONFIG`, else
    `~/.config/toolbridge/config.json`; without a file, the built-in example
    server). The format is the one the `toolbridge` CLI reads
    (docs/config.md).
    """

    def __init__(
        self,
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        on_elicitation: ElicitationCallback | None = None,
        on_log: LogCallback | None = None,
    ) -> None:
        if config is None:
            command, args = example_server_command()
            self._native = _native.Pool.user_default(command, args, on_elicitation, on_log)
        elif isinstance(config, Mapping):
            self._native = _native.Pool.from_json(json.dumps(config, indent=2), on_elicitation, on_log)
        elif isinstance(config, (str, os.PathLike)):
            self._native = _native.Pool.from_file(os.fspath(config), on_elicitation, on_log)
        else:
            raise TypeError(
                f"config must be a path, a dict or None, not {type(config).__name__}"
            )

    @property
    def server_names(self) -> list[str]:
        """The configured servers, in config order."""
        return self._native.server_names()

    @property
    def running_server_names(self) -> list[str]:
        """The servers running now."""
        return self._native.running_server_names()

    async def tools(
        self,
        format: Format = "mcp",
        *,
        servers: Sequence[str] | None = None,
        strict: bool = False,
    ) -> Any:
        """Every enabled server's tools (or `servers`') in `format`, ready for
        a request's `tools`: a list (a `[{"functionDeclarations": [...]}]`
        for Gemini). Names are `mcp__{server}__{tool}`. A server that fails
        is left out (see `list_tools` for why); `strict` asks OpenAI's
        strict mode."""
        return await self._native.tools(format, list(servers) if servers is not None else None, strict)

    async def list_tools(self, servers: Sequence[str] | None = None) -> dict[str, Any]:
        """`{"tools": [...], "failures": {server: message}}`: the tools in
        MCP's format, and each server that could not be listed with why."""
        return await self._native.list_tools(list(servers) if servers is not None else None)

    async def call(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_elicitation: ElicitationCallback | None = None,
    ) -> dict[str, Any]:
        """Calls `tool` of `server`; the MCP `CallToolResult` as a dict
        (`content`, `structuredContent`, `isError`). `timeout` (seconds)
        bounds the whole call, start included; without it the server's
        `timeout` (default 120 s) bounds silence, and progress restarts it.
        Raises `CallTimeout`, `UsageError` (unknown server or tool) or
        `ServerError`; a tool's own failure is a result with `isError`.
        `on_elicitation` answers this call's elicitations instead of the
        pool's callback (which must be set: it declares the capability)."""
        return await self._native.call(server, tool, arguments, timeout, on_progress, on_elicitation)

    async def server_info(self, server: str) -> dict[str, Any]:
        """What `server` answered to `initialize` (`protocolVersion`,
        `capabilities`, `serverInfo`, `instructions`), starting it if needed."""
        return await self._native.server_info(server)

    async def exec(
        self,
        response: Any,
        format: Format,
        *,
        servers: Sequence[str] | None = None,
        strict: bool = False,
    ) -> Any:
        """Runs the tool calls in a provider's `response` (the whole response,
        the message, or its list of calls), in parallel, and returns the
        messages to append to the conversation in `format`'s shape. A call
        that fails becomes a message the model can read."""
        return await self._native.exec(response, format, list(servers) if servers is not None else None, strict)

    async def list_resources(self, server: str) -> list[dict[str, Any]]:
        """The resources of `server`."""
        return await self._native.list_resources(server)

    async def list_resource_templates(self, server: str) -> list[dict[str, Any]]:
        """The resource templates of `server`."""
        return await self._native.list_resource_templates(server)

    async def read_resource(self, server: str, uri: str, *, timeout: float | None = None) -> dict[str, Any]:
        """The contents of resource `uri` of `server` (`{"contents": [...]}`)."""
        return await self._native.read_resource(server, uri, timeout)

    async def list_prompts(self, server: str) -> list[dict[str, Any]]:
        """The prompts of `server`."""
        return await self._native.list_prompts(server)

    async def get_prompt(
        self,
        server: str,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Prompt `name` of `server` filled in (`{"messages": [...]}`)."""
        return await self._native.get_prompt(server, name, arguments, timeout)

    async def complete(
        self,
        server: str,
        reference: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """What `server` suggests for `argument` of `reference`
        (`{"type": "ref/prompt", "name": ...}` or `{"type": "ref/resource",
        "uri": ...}`), given `value` so far: `{"completion": {"values": [...]}}`."""
        return await self._native.complete(server, reference, argument, value, context, timeout)

    def stderr_tail(self, server: str) -> str | None:
        """The last lines `server` wrote to stderr, while it runs."""
        return self._native.stderr_tail(server)

    async def close(self, server: str | None = None) -> None:
        """Closes `server`, or every server (stdin closed, SIGTERM, then
        SIGKILL of each process group). A later use starts it again."""
        await self._native.close(server)

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
