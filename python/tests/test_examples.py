"""The examples the READMEs show run and print what they say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(name: str) -> str:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)], check=True, capture_output=True, text=True, timeout=120
    ).stdout


def test_langchain_example() -> None:
    assert run("langchain_agent.py").strip() == "Hello, Ada!"


def test_agents_sdk_example() -> None:
    assert run("agents_sdk.py").splitlines() == ["['hello']", "Hello, Ada!"]


def test_pool_example() -> None:
    lines = run("pool.py").splitlines()
    assert lines[0] == "5 mcp__example__echo"
    assert lines[1] == "Hello, Ada!"
    assert "toolu_1" in lines[2] and "Hello, Bo!" in lines[2]
