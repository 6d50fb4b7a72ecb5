"""`kill -9` of the interpreter mid-call leaves no server process behind:
the library's reaper (a `sh` process reading a pipe only the interpreter
holds) kills every registered process group when the pipe closes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import everything_server, example_server, py_sdk_server

DEADLINE = 20.0


def start_time(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/PID/stat), or None when
    it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return fields[19]


def descendants(root: int) -> dict[int, str]:
    """Every live descendant of `root`, with its start time."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                started = start_time(pid)
                if started is not None:
                    found[pid] = started
                    frontier.append(pid)
    return found


def test_kill_9_mid_call_leaves_no_server(tmp_path: Path) -> None:
    example = example_server()
    # A child in the server's process group that stdin's end does not stop:
    # only a kill of the group (the reaper's) ends it.
    holder = {"command": "/bin/sh", "args": ["-c", 'sleep 600 & exec "$0" "$@"', example["command"], *example["args"]]}
    config = {"mcpServers": {"example": holder, "everything": everything_server(), "py": py_sdk_server()}}
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, json, sys, toolbridge
            async def main():
                pool = toolbridge.Pool(json.loads({json.dumps(json.dumps(config))}))
                await pool.call("py", "add", {{"a": 1, "b": 2}})
                await pool.call("everything", "echo", {{"message": "up"}})
                call = asyncio.ensure_future(pool.call("example", "slow", {{"ms": 60000}}))
                await asyncio.sleep(0)
                print("CALLING", flush=True)
                await call
            asyncio.run(main())
            """
        )
    )
    victim = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        assert victim.stdout.readline().strip() == "CALLING"
        # The three servers (and `node`'s and the reaper's) are up.
        deadline = time.monotonic() + DEADLINE
        while True:
            procs = descendants(victim.pid)
            commands = {Path(f"/proc/{p}/cmdline").read_bytes() for p in procs if start_time(p)}
            wanted = (b"example-server", b"py_sdk_stdio", b"server-everything", b"sleep\x00600")
            if all(any(w in c for c in commands) for w in wanted):
                break
            assert time.monotonic() < deadline, f"servers did not start: {commands}"
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        deadline = time.monotonic() + DEADLINE
        while True:
            left = {pid for pid, started in procs.items() if start_time(pid) == started}
            if not left:
                break
            assert time.monotonic() < deadline, f"left behind: {[Path(f'/proc/{p}/cmdline').read_bytes() for p in left]}"
            time.sleep(0.05)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
