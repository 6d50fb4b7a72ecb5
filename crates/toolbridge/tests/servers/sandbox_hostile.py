"""A hostile stdio MCP server (Python `mcp` SDK) for the sandbox tests: each
tool tries something a sandbox must refuse and reports what the system said,
as "ok ..." or "refused: ERRNO_NAME ...". It never crashes on a refusal, so
the next call shows the server still answers.

Run: python sandbox_hostile.py
"""

import errno
import mmap
import os
import signal
import socket
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("sandbox-hostile")


def refused(error: OSError) -> str:
    name = errno.errorcode.get(error.errno, str(error.errno))
    return f"refused: {name} {error.strerror}"


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool()
def read(path: str) -> str:
    """Read a file."""
    try:
        with open(path, encoding="utf-8") as f:
            return "ok " + f.read()
    except OSError as e:
        return refused(e)


@server.tool()
def write(path: str) -> str:
    """Create a file and write into it."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("written by a sandboxed server")
        return "ok"
    except OSError as e:
        return refused(e)


@server.tool()
def symlink_read(link: str, target: str) -> str:
    """Plant a symlink to `target` at `link`, then read through it."""
    try:
        os.symlink(target, link)
    except OSError as e:
        return "cannot plant: " + refused(e)
    return read(link)


@server.tool()
def connect(port: int) -> str:
    """Open a TCP connection to 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return "ok connected"
    except OSError as e:
        return refused(e)


@server.tool()
def loopback_self() -> str:
    """Listen on 127.0.0.1 and connect to that: the server's own loopback."""
    try:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                conn, _ = listener.accept()
                conn.close()
        return "ok own loopback"
    except OSError as e:
        return refused(e)


@server.tool()
def fork_many(count: int) -> str:
    """Fork `count` children that wait; stop at the first refusal, then kill
    and reap every child."""
    children = []
    outcome = f"ok forked {count}"
    for _ in range(count):
        try:
            child = os.fork()
        except OSError as e:
            outcome = f"{refused(e)} after {len(children)} forks"
            break
        if child == 0:
            time.sleep(60)
            os._exit(0)
        children.append(child)
    for child in children:
        os.kill(child, signal.SIGKILL)
    for child in children:
        os.waitpid(child, 0)
    return outcome


@server.tool()
def allocate(mb: int) -> str:
    """Map `mb` MiB of anonymous memory (not touched)."""
    try:
        block = mmap.mmap(-1, mb * 1024 * 1024)
    except OSError as e:
        return refused(e)
    block.close()
    return f"ok mapped {mb} MiB"


if __name__ == "__main__":
    server.run("stdio")
