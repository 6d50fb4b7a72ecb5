"""An `MCPServer` for the OpenAI Agents SDK on a toolbridge `Pool`.

    from agents import Agent
    from toolbridge import Pool
    from toolbridge.agents import MCPServer

    pool = Pool("mcp.json")
    weather = MCPServer(pool, "weather", tool_filter={"allowed_tool_names": ["forecast"]})
    agent = Agent(name="assistant", mcp_servers=[weather])

Several `MCPServer`s (several agents, each with its own tool filter) share
one pool, so one connection per server. `connect()` starts the server;
`cleanup()` closes nothing shared: it drops this handle, and the pool (its
`close()`, `async with`, or the interpreter's end, even by `kill -9`) stops
the processes. Nothing here holds an anyio cancel scope, so `cleanup()` may
run in any task (openai-agents-python#1393).
"""

from __future__ import annotations

import inspect
from typing import Any

import mcp.types as types
from agents import _debug
from agents.exceptions import UserError
from agents.logger import log_tool_action_error, logger
from agents.mcp._logging import get_mcp_server_log_name
from agents.mcp import MCPServer as _AgentsMCPServer
from agents.mcp.util import ToolFilter, ToolFilterContext

from toolbridge import Pool
from toolbridge._mcp_session import PoolSession

__all__ = ["MCPServer"]


class MCPServer(_AgentsMCPServer):
    """Server `server` of `pool` as an Agents SDK MCP server.

    `tool_filter` is the SDK's: `{"allowed_tool_names": [...]}`,
    `{"blocked_tool_names": [...]}`, or a callable `(context, tool) -> bool`
    (may be async). The other keyword arguments are the SDK's `MCPServer`'s
    (`use_structured_content`, `require_approval`, ...)."""

    def __init__(
        self,
        pool: Pool,
        server: str,
        *,
        tool_filter: ToolFilter = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if server not in pool.server_names:
            raise ValueError(
                f"the pool has no server named '{server}'; its servers are {', '.join(pool.server_names) or 'none'}"
            )
        self.pool = pool
        self.server = server
        self.tool_filter = tool_filter
        self._name = name or server
        self._session = PoolSession(pool, server)
        self._tools: list[types.Tool] | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def cached_tools(self) -> list[types.Tool] | None:
        return self._tools

    async def connect(self) -> None:
        """Starts the server (if the pool has not) and lists its tools."""
        await self._session.list_tools()

    async def cleanup(self) -> None:
        """Forgets this handle's tool list; the pool keeps the connection."""
        self._tools = None

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[types.Tool]:
        tools = (await self._session.list_tools()).tools
        self._tools = tools
        return await self._filter(tools, run_context, agent)

    async def _filter(self, tools: list[types.Tool], run_context: Any, agent: Any) -> list[types.Tool]:
        tool_filter = self.tool_filter
        if tool_filter is None:
            return tools
        if isinstance(tool_filter, dict):
            if "allowed_tool_names" in tool_filter:
                allowed = tool_filter["allowed_tool_names"]
                tools = [t for t in tools if t.name in allowed]
            if "blocked_tool_names" in tool_filter:
                blocked = tool_filter["blocked_tool_names"]
                tools = [t for t in tools if t.name not in blocked]
            return tools
        if run_context is None or agent is None:
            raise UserError("run_context and agent are required for dynamic tool filtering")
        context = ToolFilterContext(run_context=run_context, agent=agent, server_name=self.name)
        kept = []
        for tool in tools:
            # As the SDK's own servers: a filter that raises leaves the tool
            # out and is logged, the tool's and server's names only in its
            # diagnostic mode (their tests/mcp/test_tool_filtering.py).
            try:
                keep = tool_filter(context, tool.model_copy(deep=True))
                if inspect.isawaitable(keep):
                    keep = await keep
            except Exception as e:
                if _debug.DONT_LOG_TOOL_DATA:
                    message = "Error applying MCP tool filter"
                else:
                    message = (
                        f"Error applying MCP tool filter to tool '{tool.name}' "
                        f"on server '{get_mcp_server_log_name(self.name)}'"
                    )
                log_tool_action_error(logger, message, e)
                continue
            if keep:
                kept.append(tool)
        return kept

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> types.CallToolResult:
        if meta:
            # The pool's calls carry no caller-given `_meta`: refused rather
            # than dropped without a word.
            raise UserError(
                f"MCP server '{self.name}': tool '{tool_name}' was called with _meta "
                f"({', '.join(sorted(meta))}), which toolbridge's pool does not send yet; "
                "leave tool_meta_resolver unset for a toolbridge MCPServer"
            )
        return await self._session.call_tool(tool_name, arguments)

    async def list_prompts(self) -> types.ListPromptsResult:
        return await self._session.list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> types.GetPromptResult:
        return await self._session.get_prompt(name, arguments)

    async def list_resources(self, cursor: str | None = None) -> types.ListResourcesResult:
        return await self._session.list_resources()

    async def list_resource_templates(self, cursor: str | None = None) -> types.ListResourceTemplatesResult:
        return await self._session.list_resource_templates()

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._session.read_resource(uri)


