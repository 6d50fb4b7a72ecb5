"""A skills server (SEP-2640) built with FastMCP 4's own skills support
(`SkillsDirectoryProvider` and `SkillsExtension`), nobody here wrote it:
serves every skill folder below the directory given as its first argument,
reading each file when asked. FastMCP answers `skills/list` and
`skills/get` only at 2026-07-28.

Over stdio; with `http` as the second argument, streamable HTTP at
`/mcp` on 127.0.0.1, on a port the OS picks, printing `LISTENING <port>`
once it accepts connections.

Run with the `py-tb-fastmcp` venv of scripts/setup-test-deps.sh.
"""

import socket
import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension

root = Path(sys.argv[1])
mcp = FastMCP("skills")
provider = SkillsDirectoryProvider(root, experimental_skills=True)
mcp.add_provider(provider)
mcp.add_extension(SkillsExtension(providers=[provider]))

if sys.argv[2:] == ["http"]:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"LISTENING {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(mcp.http_app(path="/mcp"), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
else:
    mcp.run(show_banner=False)
