"""The Agents SDK's test double `FakeMCPServer` (tests/mcp/helpers.py at
openai-agents 0.24.0) made a `toolbridge.agents.MCPServer` over a real
server, so that their tests of how agents list, filter, call and trace MCP
tools run through toolbridge: each instance has a pool of its own with one
stdio server (servers/agents_fake_server.py) that lists the tools given
here and answers what their double answered.

What stays local is what their double records of the calls it was asked
(`tool_calls`, `tool_results`, `tool_metas`): the tests read them. Loaded by
scripts/test-python.sh in place of their class (appended to their
helpers.py)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents.mcp.server import _UNSET

import toolbridge
from toolbridge._mcp_session import PoolSession
from toolbridge.agents import MCPServer

SERVER = Path(__file__).resolve().parents[1] / "servers" / "agents_fake_server.py"

#: Every pool made, closed after each test (their conftest's fixture).
POOLS: list[toolbridge.Pool] = []
STATES: list[str] = []


class FakeMCPServer(MCPServer):
    def __init__(
        self,
        tools: list[Any] | None = None,
        tool_filter: Any = None,
        server_name: str = "fake_mcp_server",
        require_approval: object | None = None,
        failure_error_function: Any = _UNSET,
        tool_meta_resolver: Any = None,
        custom_data_extractor: Any = None,
        tool_input_guardrails: list[Any] | None = None,
        tool_output_guardrails: list[Any] | None = None,
    ) -> None:
        self.tools: list[Any] = list(tools or [])
        self._custom_content: list[Any] | None = None
        self._response_meta: dict[str, Any] | None = None
        self._changed = False
        super().__init__(
            self._new_pool(server_name),
            server_name,
            tool_filter=tool_filter,
            use_structured_content=False,
            require_approval=require_approval,
            failure_error_function=failure_error_function,
            tool_meta_resolver=tool_meta_resolver,
            custom_data_extractor=custom_data_extractor,
            tool_input_guardrails=tool_input_guardrails,
            tool_output_guardrails=tool_output_guardrails,
        )
        self.tool_calls: list[str] = []
        self.tool_results: list[str] = []
        self.tool_metas: list[dict[str, Any] | None] = []

    def _new_pool(self, server_name: str) -> toolbridge.Pool:
        """A pool of one server reading a new state file."""
        state = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        state.close()
        self._state_path = state.name
        STATES.append(state.name)
        pool = toolbridge.Pool(
            {
                "mcpServers": {
                    server_name: {
                        "command": sys.executable,
                        "args": [str(SERVER)],
                        "env": {"FAKE_MCP_STATE": self._state_path},
                    }
                }
            }
        )
        POOLS.append(pool)
        return pool

    def _write_state(self) -> None:
        state = {
            "tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in self.tools],
            "custom_content": None
            if self._custom_content is None
            else [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in self._custom_content],
            "response_meta": self._response_meta,
        }
        with open(self._state_path, "w") as f:
            json.dump(state, f)

    def add_tool(self, name: str, input_schema: dict[str, Any]) -> None:
        from mcp.types import Tool

        self.tools.append(Tool(name=name, inputSchema=input_schema))
        self._changed = True

    async def _refresh(self) -> None:
        """Their double's tool list changes when a test adds a tool; a real
        server would say so (`notifications/tools/list_changed`), this one
        cannot, so a tool added after the server started gets a new server
        (a new pool: the pool keeps a server's listing across restarts)."""
        if self._changed and self.server in self.pool.running_server_names:
            self.pool = self._new_pool(self.server)
            self._session = PoolSession(self.pool, self.server)
        self._changed = False
        self._write_state()

    async def connect(self) -> None:
        await self._refresh()
        await super().connect()

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Any]:
        await self._refresh()
        return await super().list_tools(run_context, agent)

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> Any:
        await self._refresh()
        self.tool_calls.append(tool_name)
        self.tool_results.append(f"result_{tool_name}_{json.dumps(arguments)}")
        self.tool_metas.append(meta)
        return await super().call_tool(tool_name, arguments, meta)


def forget_all() -> None:
    """Drops every pool made (the library's pool stops its servers when
    dropped) and their state files: after each test."""
    for path in STATES:
        Path(path).unlink(missing_ok=True)
    STATES.clear()
    POOLS.clear()
