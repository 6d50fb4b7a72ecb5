"""A raw JSON-RPC MCP server (no SDK) that misbehaves on purpose, for fault tests.

Usage: python3 misbehave.py MODE[,MODE...]
Modes:
  hang         answers the handshake and tools/list; never answers tools/call.
               Appends every notifications/cancelled it receives to $CANCEL_LOG.
  crash        writes to stderr, then exits, when a tool is called.
  stderr-held  with crash: first hands its stderr to the process listening on
               the Unix socket $HOLD_SOCKET (fd_holder.py, started by the
               test: outside the server's group and tree, so toolbridge
               never kills it). The crashed server's stderr stays open.
  die-at-start writes a message to stderr and exits 1 before reading anything.
  garbage      prints non-JSON lines on stdout around every response.
  grandchild   starts a long-running grandchild (pid written to $PID_FILE,
               "pgid pid" of itself too), then behaves normally.
  hang-list    never answers tools/list.
  slow-start   sleeps $START_DELAY_MS before answering the handshake.
  deaf         closes its stdin when asked for tools/list (then answers it) and
               stays alive with stdout open, so nothing sent later arrives.
Tools: echo {text}; grow (adds a tool and sends notifications/tools/list_changed).
In modes hang/crash a call to any tool hangs/crashes.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

modes = set(sys.argv[1].split(","))
out = sys.stdout


def send(msg):
    if "garbage" in modes:
        out.write("this is not JSON-RPC, just noise on stdout\n")
    out.write(json.dumps(msg) + "\n")
    if "garbage" in modes:
        out.write("{not json either\n")
    out.flush()


if "die-at-start" in modes:
    sys.stderr.write("fatal: EXAMPLE_API_KEY is not set; cannot start\n")
    sys.stderr.flush()
    sys.exit(1)

if "grandchild" in modes:
    child = subprocess.Popen(["sleep", "1000"])
    with open(os.environ["PID_FILE"], "w") as f:
        f.write(f"{os.getpgid(0)} {os.getpid()} {child.pid}\n")

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "grow",
        "description": "Add a tool named grown_N and announce the change.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method = msg.get("method")
    mid = msg.get("id")
    if method == "notifications/cancelled":
        log = os.environ.get("CANCEL_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(msg.get("params", {})) + "\n")
        continue
    if mid is None:
        continue
    if method == "initialize":
        if "slow-start" in modes:
            time.sleep(int(os.environ.get("START_DELAY_MS", "300")) / 1000)
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "misbehave-" + sys.argv[1], "version": "1.0"},
        }})
    elif method == "tools/list":
        if "hang-list" in modes:
            continue
        if "deaf" in modes:
            os.close(0)
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
            while True:  # alive, stdout open, until toolbridge kills the group
                signal.pause()
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        if "hang" in modes:
            continue
        if "crash" in modes:
            if "stderr-held" in modes:
                holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                holder.connect(os.environ["HOLD_SOCKET"])
                socket.send_fds(holder, [b"stderr"], [2])
                holder.recv(2)
            sys.stderr.write("boom: crashing on purpose in tools/call\n")
            sys.stderr.flush()
            os._exit(3)
        args = msg["params"].get("arguments") or {}
        if msg["params"]["name"] == "grow":
            name = "grown_%d" % (len(TOOLS) - 1)
            TOOLS.append({"name": name, "inputSchema": {"type": "object"}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": name}]}})
            continue
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": args.get("text", "")}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found: " + str(method)}})
