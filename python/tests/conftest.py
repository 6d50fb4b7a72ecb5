"""Real servers for the tests, found in the checkout's .deps/ (installed by
scripts/setup-test-deps.sh): the built-in example server (this interpreter
with `-m toolbridge example-server`, the library's own), server-everything
(npm) and a Python `mcp` SDK 2.x server (.deps/py2)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPS = ROOT / ".deps"
SERVERS = Path(__file__).resolve().parent / "servers"


def example_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "toolbridge", "example-server"]}


def everything_server() -> dict[str, Any]:
    script = DEPS / "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    if not script.is_file():
        pytest.fail(f"{script} is missing: run scripts/setup-test-deps.sh")
    return {"command": "node", "args": [str(script), "stdio"]}


def py_sdk_server(venv: str = "py2") -> dict[str, Any]:
    python = DEPS / venv / "bin/python"
    if not python.is_file():
        pytest.fail(f"{python} is missing: run scripts/setup-test-deps.sh")
    return {"command": str(python), "args": [str(SERVERS / "py_sdk_stdio.py")]}


@pytest.fixture
async def http_server_url() -> AsyncIterator[str]:
    """A streamable HTTP server of the Python `mcp` SDK 1.x on 127.0.0.1
    (servers/py_sdk_http.py), whose `header` tool answers a request header;
    its URL once it listens (it prints its port first)."""
    python = DEPS / "py1/bin/python"
    if not python.is_file():
        pytest.fail(f"{python} is missing: run scripts/setup-test-deps.sh")
    process = await asyncio.create_subprocess_exec(
        str(python), str(SERVERS / "py_sdk_http.py"), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        port = int(await asyncio.wait_for(process.stdout.readline(), 30))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        await process.wait()


@pytest.fixture
def config() -> dict[str, Any]:
    return {
        "mcpServers": {
            "example": example_server(),
            "everything": everything_server(),
            "py": py_sdk_server(),
            # The SDK 1.x: elicitation as a server-to-client request.
            "py1": py_sdk_server("py1"),
        }
    }
