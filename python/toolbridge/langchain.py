"""A drop-in for langchain-mcp-adapters' `MultiServerMCPClient` and
`load_mcp_tools`, on a toolbridge `Pool`.

Change the import and keep the code:

    from toolbridge.langchain import MultiServerMCPClient

    client = MultiServerMCPClient({"math": {"command": "python", "args": ["math_server.py"], "transport": "stdio"}})
    tools = await client.get_tools()

Where langchain-mcp-adapters opens a new session for every tool call by
default (for a stdio server, a new process per call), the client keeps one
connection per server in its pool, and every server process is gone when the
client is closed (`await client.aclose()`, `async with`) or the interpreter
ends, even by `kill -9`. A server that fails is left out of `get_tools()` with
a warning (and in `client.failures`), instead of failing the call for all.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Annotated, Any

from langchain_core.documents.base import Blob
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.content import create_file_block, create_image_block, create_text_block
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool, ToolException

from toolbridge import Pool
from toolbridge._mcp_session import PoolSession

__all__ = ["MultiServerMCPClient", "load_mcp_tools", "CallbackContext", "Callbacks", "MCPToolCallRequest"]

logger = logging.getLogger(__name__)

# langchain-mcp-adapters' transport names, as toolbridge's config says them.
_TRANSPORTS = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "http",
    "streamable_http": "http",
    "streamable-http": "http",
    "websocket": "websocket",
}


@dataclass
class CallbackContext:
    """Which server (and tool) a callback is about."""

    server_name: str
    tool_name: str | None = None


@dataclass
class Callbacks:
    """langchain-mcp-adapters' callbacks that the drop-in honours:
    `on_progress(progress, total, message, context)` and
    `on_elicitation(mcp_context, params, context)` (either may be async).
    Their own `Callbacks` object works too (the same attributes)."""

    on_progress: Any = None
    on_elicitation: Any = None
    on_logging_message: Any = None


@dataclass
class MCPToolCallRequest:
    """What a tool-call interceptor gets (langchain-mcp-adapters' shape):
    `interceptor(request, handler)` may change it with `override()`, call
    `await handler(request)` (an `mcp.types.CallToolResult`), and return
    that, another result, or a LangChain `ToolMessage` (or LangGraph
    `Command`). `headers` set by an interceptor are sent with that call,
    over their own connection (see `_call_with_headers`)."""

    name: str
    args: dict[str, Any]
    server_name: str
    headers: dict[str, Any] | None = None
    runtime: object | None = None

    def override(self, **overrides: Any) -> MCPToolCallRequest:
        return replace(self, **overrides)


def _server_record(name: str, connection: dict[str, Any]) -> dict[str, Any]:
    """One langchain-mcp-adapters connection as a toolbridge config entry."""
    transport = connection.get("transport")
    if transport is None:
        transport = "stdio" if "command" in connection else "http"
    kind = _TRANSPORTS.get(transport)
    if kind is None:
        raise ValueError(
            f"server '{name}': unsupported transport '{transport}'; "
            f"use one of {', '.join(sorted(_TRANSPORTS))}"
        )
    if kind == "stdio":
        record: dict[str, Any] = {"command": connection["command"], "args": list(connection.get("args") or [])}
        if connection.get("env"):
            record["env"] = dict(connection["env"])
        if connection.get("cwd") is not None:
            record["cwd"] = str(connection["cwd"])
        return record
    record = {"type": kind, "url": connection["url"]}
    if connection.get("headers"):
        record["headers"] = dict(connection["headers"])
    return record


async def _call_with_headers(
    record: dict[str, Any] | None,
    server: str,
    request: MCPToolCallRequest,
    *,
    on_progress: Any,
    on_elicitation: Any,
) -> dict[str, Any]:
    """Calls `request` with the headers an interceptor set, merged over the
    server's own, as langchain-mcp-adapters does: on a connection of its
    own, opened for this call and closed after it (the pool's connection is
    shared by every call, so it cannot carry one call's headers). Only HTTP
    and SSE servers take headers; for any other, a clear error instead of
    headers silently dropped."""
    if record is None:
        kind = "unknown"
    else:
        kind = "stdio" if "command" in record else record.get("type", "http")
    if kind not in ("http", "sse"):
        raise ValueError(
            f"MCP server '{server}': a tool interceptor set headers for tool '{request.name}', "
            f"but headers are sent only to HTTP and SSE servers and '{server}' is a {kind} server; "
            "leave request.headers unset for it"
        )
    # The config expands `${VAR}` in header values: an interceptor's values
    # are literal, so each `$` is written `$$`.
    extra = {str(k): str(v).replace("$", "$$") for k, v in request.headers.items()}  # type: ignore[union-attr]
    assert record is not None
    config = {"mcpServers": {server: {**record, "headers": {**(record.get("headers") or {}), **extra}}}}
    async with Pool(config, on_elicitation=on_elicitation) as pool:
        return await pool.call(server, request.name, request.args, on_progress=on_progress)


def _lc_block(content: dict[str, Any]) -> Any:
    """An MCP content block (a dict) as a LangChain content block, as
    langchain-mcp-adapters converts it."""
    kind = content.get("type")
    if kind == "text":
        return create_text_block(text=content["text"])
    if kind == "image":
        return create_image_block(base64=content["data"], mime_type=content["mimeType"])
    if kind == "audio":
        raise NotImplementedError(
            "AudioContent conversion to LangChain content blocks is not yet "
            f"supported. Received audio with mime type: {content.get('mimeType')}"
        )
    if kind == "resource_link":
        mime_type = content.get("mimeType") or None
        if mime_type and mime_type.startswith("image/"):
            return create_image_block(url=str(content["uri"]), mime_type=mime_type)
        return create_file_block(url=str(content["uri"]), mime_type=mime_type)
    if kind == "resource":
        resource = content["resource"]
        if "text" in resource:
            return create_text_block(text=resource["text"])
        if "blob" in resource:
            mime_type = resource.get("mimeType") or None
            if mime_type and mime_type.startswith("image/"):
                return create_image_block(base64=resource["blob"], mime_type=mime_type)
            return create_file_block(base64=resource["blob"], mime_type=mime_type)
        raise ValueError("Unknown embedded resource type")
    raise ValueError(f"Unknown MCP content type: {kind}")


class _MCPToolExecutionError(ToolException):
    """A tool's own failure (`isError`), carrying its content blocks."""

    def __init__(self, tool_content: list[Any]) -> None:
        texts = [b["text"] for b in tool_content if b.get("type") == "text"]
        if texts:
            message = "\n".join(texts)
        elif tool_content:
            message = (
                "MCP tool returned an error with no text content "
                f"({len(tool_content)} non-text content block(s))."
            )
        else:
            message = "MCP tool returned an error with empty content."
        super().__init__(message)
        self.tool_content = tool_content


def _handle_tool_error(error: ToolException) -> Any:
    if isinstance(error, _MCPToolExecutionError):
        return error.tool_content or [create_text_block(text=str(error))]
    raise error


def _progress(callbacks: Any, context: CallbackContext, pending: list[Any]) -> Any:
    """The pool's progress callback for one call: LangChain's
    `on_progress(progress, total, message, context)`; a coroutine it returns
    joins `pending`, which the call awaits before it returns, so every
    progress callback has run when the tool's result is seen."""
    on_progress = getattr(callbacks, "on_progress", None)
    if on_progress is None:
        return None

    def forward(progress: float, total: float | None, message: str | None) -> None:
        result = on_progress(progress, total, message, context)
        if asyncio.iscoroutine(result):
            pending.append(asyncio.ensure_future(result))

    return forward


def _langchain_tool(
    pool: Pool,
    server: str,
    tool: dict[str, Any],
    *,
    record: dict[str, Any] | None,
    callbacks: Any,
    tool_interceptors: list[Any] | None = None,
    tool_name_prefix: bool,
    handle_tool_errors: bool,
) -> BaseTool:
    name = tool["name"]
    context = CallbackContext(server_name=server, tool_name=name)
    on_elicitation = _elicitation(callbacks, tool_name=name)

    async def execute(request: MCPToolCallRequest) -> Any:
        pending: list[Any] = []
        on_progress = _progress(callbacks, context, pending)
        try:
            # An empty dict adds no header: the pool's connection serves.
            if request.headers:
                result = await _call_with_headers(
                    record, server, request, on_progress=on_progress, on_elicitation=on_elicitation
                )
            else:
                result = await pool.call(
                    server, request.name, request.args, on_progress=on_progress, on_elicitation=on_elicitation
                )
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        if not tool_interceptors:
            return result
        import mcp.types as types

        return types.CallToolResult.model_validate(result)

    handler = execute
    for interceptor in reversed(tool_interceptors or []):

        async def wrapped(request: MCPToolCallRequest, _interceptor: Any = interceptor, _handler: Any = handler) -> Any:
            return await _interceptor(request, _handler)

        handler = wrapped

    async def call_tool(
        runtime: Annotated[object | None, InjectedToolArg()] = None,
        **arguments: Any,
    ) -> tuple[Any, Any]:
        result = await handler(MCPToolCallRequest(name=name, args=arguments, server_name=server, runtime=runtime))
        if not isinstance(result, dict):
            if not hasattr(result, "isError"):
                # A ToolMessage or a LangGraph Command from an interceptor.
                return result, None
            result = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        content = [_lc_block(c) for c in result.get("content") or []]
        if result.get("isError"):
            raise _MCPToolExecutionError(content)
        structured = result.get("structuredContent")
        artifact = {"structured_content": structured} if structured is not None else None
        return content, artifact

    return StructuredTool(
        name=f"{server}_{name}" if tool_name_prefix else name,
        description=tool.get("description") or "",
        args_schema=tool["inputSchema"],
        coroutine=call_tool,
        response_format="content_and_artifact",
        metadata=_metadata(tool),
        handle_tool_error=_handle_tool_error if handle_tool_errors else False,  # type: ignore[arg-type]
    )


def _metadata(tool: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's annotations, every hint present (None when not given), as
    langchain-mcp-adapters puts them in a tool's metadata."""
    annotations = tool.get("annotations")
    if annotations is None:
        return None
    hints = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    return {**{hint: None for hint in hints}, **annotations} or None


def _elicitation(callbacks: Any, tool_name: str | None = None) -> Any:
    on_elicitation = getattr(callbacks, "on_elicitation", None)
    if on_elicitation is None:
        return None

    async def answer(server: str, request: dict[str, Any]) -> dict[str, Any]:
        import mcp.types as types
        from pydantic import TypeAdapter

        # A union of the form and URL modes' params in mcp 1.x.
        params = TypeAdapter(types.ElicitRequestParams).validate_python(request)
        result = on_elicitation(None, params, CallbackContext(server_name=server, tool_name=tool_name))
        if asyncio.iscoroutine(result):
            result = await result
        if hasattr(result, "model_dump"):
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return dict(result)

    return answer


def _logs(callbacks: Any) -> Any:
    on_logging_message = getattr(callbacks, "on_logging_message", None)
    if on_logging_message is None:
        return None

    def relay(server: str, message: dict[str, Any]) -> None:
        import mcp.types as types

        params = types.LoggingMessageNotificationParams.model_validate(message)
        result = on_logging_message(params, CallbackContext(server_name=server))
        if asyncio.iscoroutine(result):
            asyncio.ensure_future(result)

    return relay


class MultiServerMCPClient:
    """langchain-mcp-adapters' `MultiServerMCPClient` (same constructor and
    methods) on a toolbridge pool: one connection per server, kept."""

    def __init__(
        self,
        connections: dict[str, Any] | None = None,
        *,
        callbacks: Any = None,
        tool_interceptors: list[Any] | None = None,
        tool_name_prefix: bool = False,
        handle_tool_errors: bool = True,
    ) -> None:
        self.connections: dict[str, Any] = connections if connections is not None else {}
        self.callbacks = callbacks or Callbacks()
        self.tool_interceptors = tool_interceptors or []
        self.tool_name_prefix = tool_name_prefix
        self.handle_tool_errors = handle_tool_errors
        #: The servers the latest `get_tools()` could not list, and why.
        self.failures: dict[str, str] = {}
        self._pool: Pool | None = None
        self._pool_config: dict[str, Any] | None = None

    def _check(self, server_name: str) -> None:
        if server_name not in self.connections:
            raise ValueError(
                f"Couldn't find a server with name '{server_name}', "
                f"expected one of '{list(self.connections.keys())}'"
            )

    def pool(self) -> Pool:
        """The pool behind the client (made again if `connections` changed)."""
        config = {"mcpServers": {n: _server_record(n, c) for n, c in self.connections.items()}}
        if self._pool is None or config != self._pool_config:
            old = self._pool
            self._pool = Pool(config, on_elicitation=_elicitation(self.callbacks), on_log=_logs(self.callbacks))
            self._pool_config = config
            if old is not None:
                asyncio.ensure_future(old.close())
        return self._pool

    @asynccontextmanager
    async def session(self, server_name: str, *, auto_initialize: bool = True) -> AsyncIterator[PoolSession]:
        """The pool's session with `server_name` (nothing opens or closes:
        the connection stays in the pool)."""
        self._check(server_name)
        session = PoolSession(self.pool(), server_name)
        session.record = self._pool_config["mcpServers"][server_name] if self._pool_config else None
        if auto_initialize:
            await session.initialize()
        yield session

    async def get_tools(self, *, server_name: str | None = None) -> list[BaseTool]:
        """The tools of every server (or `server_name`'s) as LangChain tools.
        A server that fails is logged, noted in `failures` and left out;
        with `server_name`, its failure is raised."""
        if server_name is not None:
            self._check(server_name)
        pool = self.pool()
        servers = [server_name] if server_name is not None else list(self.connections)
        listing = await pool.list_tools(servers)
        self.failures = dict(listing["failures"])
        if server_name is not None and server_name in self.failures:
            from toolbridge.errors import ServerError

            raise ServerError(self.failures[server_name])
        for server, error in self.failures.items():
            logger.warning("skipping the tools of MCP server '%s': %s", server, error)
        return [
            _langchain_tool(
                pool,
                tool["serverId"],
                tool,
                record=self._pool_config["mcpServers"][tool["serverId"]] if self._pool_config else None,
                callbacks=self.callbacks,
                tool_interceptors=self.tool_interceptors,
                tool_name_prefix=self.tool_name_prefix,
                handle_tool_errors=self.handle_tool_errors,
            )
            for tool in listing["tools"]
        ]

    async def get_server_info(self, *, server_name: str | None = None) -> dict[str, Any]:
        """What each server (or `server_name`) answered to `initialize`, as
        `mcp.types.InitializeResult`s; from the pool's connection, so no new
        handshake. Every server is asked; a failure of any raises a
        `RuntimeError` naming each that failed."""
        import mcp.types as types

        if server_name is not None:
            self._check(server_name)
            names = [server_name]
        else:
            names = list(self.connections)
        pool = self.pool()
        results = await asyncio.gather(*(pool.server_info(n) for n in names), return_exceptions=True)
        info: dict[str, Any] = {}
        errors: dict[str, BaseException] = {}
        for name, result in zip(names, results):
            if isinstance(result, BaseException):
                errors[name] = result
            else:
                info[name] = types.InitializeResult.model_validate(result)
        if errors:
            detail = ", ".join(f"'{n}': {type(e).__name__}: {e}" for n, e in errors.items())
            raise RuntimeError(
                f"Failed to retrieve server info from {len(errors)} of {len(names)} MCP server(s) - {detail}"
            ) from next(iter(errors.values()))
        return info

    async def get_prompt(
        self, server_name: str, prompt_name: str, *, arguments: dict[str, Any] | None = None
    ) -> list[HumanMessage | AIMessage]:
        """Prompt `prompt_name` of `server_name` as LangChain messages."""
        self._check(server_name)
        result = await self.pool().get_prompt(server_name, prompt_name, arguments)
        return [_lc_message(m) for m in result.get("messages", [])]

    async def get_resources(
        self, server_name: str | None = None, *, uris: str | list[str] | None = None
    ) -> list[Blob]:
        """Resources as LangChain `Blob`s: `uris`, else every listed one, of
        `server_name`, else of every server."""
        if server_name is not None:
            self._check(server_name)
            return await _load_resources(self.pool(), server_name, uris)
        loaded = await asyncio.gather(*(_load_resources(self.pool(), name, uris) for name in self.connections))
        return [blob for blobs in loaded for blob in blobs]

    async def aclose(self) -> None:
        """Closes every server of the pool."""
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> MultiServerMCPClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _lc_message(message: dict[str, Any]) -> HumanMessage | AIMessage:
    content = message.get("content") or {}
    if content.get("type") == "text":
        if message.get("role") == "user":
            return HumanMessage(content=content["text"])
        if message.get("role") == "assistant":
            return AIMessage(content=content["text"])
        raise ValueError(f"Unsupported prompt message role: {message.get('role')}")
    raise ValueError(f"Unsupported prompt message content type: {content.get('type')}")


async def _load_resources(pool: Pool, server: str, uris: str | list[str] | None) -> list[Blob]:
    if uris is None:
        uri_list = [r["uri"] for r in await pool.list_resources(server)]
    elif isinstance(uris, str):
        uri_list = [uris]
    else:
        uri_list = list(uris)
    blobs = []
    for uri in uri_list:
        try:
            result = await pool.read_resource(server, uri)
        except Exception as e:
            raise RuntimeError(f"Error fetching resource {uri}") from e
        for contents in result.get("contents") or []:
            if "text" in contents:
                data: str | bytes = contents["text"]
            elif "blob" in contents:
                data = base64.b64decode(contents["blob"])
            else:
                raise TypeError(f"Unsupported content type for URI {uri}")
            blobs.append(Blob.from_data(data=data, mime_type=contents.get("mimeType"), metadata={"uri": uri}))
    return blobs


async def load_mcp_tools(
    session: PoolSession | None,
    *,
    connection: dict[str, Any] | None = None,
    callbacks: Any = None,
    tool_interceptors: list[Any] | None = None,
    server_name: str | None = None,
    tool_name_prefix: bool = False,
    handle_tool_errors: bool = True,
) -> list[BaseTool]:
    """langchain-mcp-adapters' `load_mcp_tools`: the tools of `session`
    (from `MultiServerMCPClient.session`), or of a server started from
    `connection` in a pool of its own, kept alive by the tools."""
    if session is None:
        if connection is None:
            raise ValueError("Either a session or a connection config must be provided")
        name = server_name or "server"
        record = _server_record(name, connection)
        pool = Pool({"mcpServers": {name: record}})
        session = PoolSession(pool, name)
        session.record = record
    if not isinstance(session, PoolSession):
        raise TypeError(
            "toolbridge.langchain.load_mcp_tools takes a session from "
            "toolbridge.langchain.MultiServerMCPClient.session(), not an mcp ClientSession"
        )
    listing = await session.pool.list_tools([session.server])
    failure = listing["failures"].get(session.server)
    if failure is not None:
        from toolbridge.errors import ServerError

        raise ServerError(failure)
    return [
        _langchain_tool(
            session.pool,
            session.server,
            tool,
            record=session.record,
            callbacks=callbacks,
            tool_interceptors=tool_interceptors,
            tool_name_prefix=tool_name_prefix and server_name is not None,
            handle_tool_errors=handle_tool_errors,
        )
        for tool in listing["tools"]
    ]
