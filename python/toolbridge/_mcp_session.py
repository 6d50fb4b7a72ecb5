"""`PoolSession`: one server of a `Pool` behind the methods of the `mcp`
SDK's `ClientSession` that the drop-ins use, answering with the `mcp`
package's types. It opens nothing: the pool keeps the connection."""

from __future__ import annotations

from typing import Any

from toolbridge import Pool


def _types() -> Any:
    try:
        import mcp.types as types
    except ImportError as e:  # pragma: no cover - the extras install it
        raise ImportError(
            "toolbridge's drop-ins answer with the `mcp` package's types: "
            "pip install 'toolbridge[langchain]' or 'toolbridge[agents]'"
        ) from e
    return types


def mcp_tool(tool: dict[str, Any]) -> Any:
    """A toolbridge tool (MCP format) as an `mcp.types.Tool`."""
    fields = {
        "name": tool["name"],
        "title": tool.get("title"),
        "description": tool.get("description") or None,
        "inputSchema": tool["inputSchema"],
        "outputSchema": tool.get("outputSchema"),
        "annotations": tool.get("annotations"),
        "icons": tool.get("icons"),
    }
    return _types().Tool.model_validate({k: v for k, v in fields.items() if v is not None})


class PoolSession:
    """Server `server` of `pool`, used like an initialized `ClientSession`."""

    def __init__(self, pool: Pool, server: str) -> None:
        self.pool = pool
        self.server = server
        #: The server's config entry when the drop-in made the pool from
        #: connections (for a tool interceptor's headers), else None.
        self.record: dict[str, Any] | None = None
        self._initialized: Any = None

    async def initialize(self) -> Any:
        """The server's `initialize` answer (an `mcp.types.InitializeResult`):
        the pool starts the server if it is not running, and keeps it."""
        self._initialized = _types().InitializeResult.model_validate(await self.pool.server_info(self.server))
        return self._initialized

    def get_server_capabilities(self) -> Any:
        """The server's capabilities once `initialize()` ran, else None."""
        return None if self._initialized is None else self._initialized.capabilities

    async def list_tools(self, cursor: str | None = None, **_: Any) -> Any:
        """Every tool of the server, on one page (the pool reads them all)."""
        listing = await self.pool.list_tools([self.server])
        failure = listing["failures"].get(self.server)
        if failure is not None:
            from toolbridge.errors import ServerError

            raise ServerError(failure)
        return _types().ListToolsResult(tools=[mcp_tool(t) for t in listing["tools"]])

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: Any = None,
        progress_callback: Any = None,
        **_: Any,
    ) -> Any:
        timeout = read_timeout_seconds
        if timeout is not None and hasattr(timeout, "total_seconds"):
            timeout = timeout.total_seconds()
        on_progress = None
        if progress_callback is not None:
            on_progress = _progress_adapter(progress_callback)
        result = await self.pool.call(self.server, name, arguments, timeout=timeout, on_progress=on_progress)
        return _types().CallToolResult.model_validate(result)

    async def list_prompts(self, cursor: str | None = None, **_: Any) -> Any:
        return _types().ListPromptsResult(prompts=await self.pool.list_prompts(self.server))

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, **_: Any) -> Any:
        return _types().GetPromptResult.model_validate(await self.pool.get_prompt(self.server, name, arguments))

    async def list_resources(self, cursor: str | None = None, **_: Any) -> Any:
        return _types().ListResourcesResult(resources=await self.pool.list_resources(self.server))

    async def list_resource_templates(self, cursor: str | None = None, **_: Any) -> Any:
        return _types().ListResourceTemplatesResult(
            resourceTemplates=await self.pool.list_resource_templates(self.server)
        )

    async def read_resource(self, uri: Any, **_: Any) -> Any:
        return _types().ReadResourceResult.model_validate(await self.pool.read_resource(self.server, str(uri)))


def _progress_adapter(callback: Any) -> Any:
    """An `mcp` progress callback (`async (progress, total, message)`) as
    the pool's (called on the loop; a coroutine is scheduled there)."""
    import asyncio

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        result = callback(progress, total, message)
        if asyncio.iscoroutine(result):
            asyncio.ensure_future(result)

    return on_progress
