"""A raw JSON-RPC MCP server (no SDK) with a descendant that escapes its
process group, for the process-tracking tests (issue 16, item 10).

Usage: python3 escape.py [WHEN]
At start (WHEN=start, the default) or when the tool `escape` is called
(WHEN=call), it double-forks: the child calls setsid() (a new session and
process group, out of reach of a signal to the server's group), forks a
grandchild and exits, so the grandchild is an orphan in a session of its
own, as a daemon is. The grandchild runs `sleep 1000` and its pid is written
to $PID_FILE (then a newline). With WHEN=exit-on-eof the server also exits at
once when its stdin closes, as well-behaved servers do.
Tools: echo {text}; escape (see above); hang (never answers); crash (starts
the daemon, then exits 3 at once, leaving it an orphan of a dead server).
"""

import json
import os
import sys

when = sys.argv[1] if len(sys.argv) > 1 else "start"


def escape():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() > 0:
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        tmp = os.environ["PID_FILE"] + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(tmp, os.environ["PID_FILE"])
        os.execvp("sleep", ["sleep", "1000"])
    os.waitpid(pid, 0)


if when in ("start", "exit-on-eof"):
    escape()

TOOLS = [
    {"name": name, "description": name, "inputSchema": {"type": "object"}}
    for name in ("echo", "escape", "hang", "crash")
]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "escape", "version": "1.0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "hang":
            continue
        if name == "escape":
            escape()
        if name == "crash":
            escape()
            os._exit(3)
        text = (msg["params"].get("arguments") or {}).get("text", name)
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + str(method)}})
# stdin closed: exit (the default for every WHEN; a server that lingers is
# covered by the group kill anyway).
