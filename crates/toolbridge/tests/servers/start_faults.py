"""A raw JSON-RPC MCP server (Python 3 stdlib only) for the start and shutdown
tests of `doctor`, `servers test`, per-server `startupTimeout` and Ctrl-C.

Usage: python3 start_faults.py MODE
Modes:
  hang-at-start   writes "loading the model..." to stderr, then never answers
                  anything (it keeps reading stdin so it never exits on its
                  own while toolbridge is there).
  slow-start      sleeps $START_DELAY_MS before answering the handshake, then
                  behaves normally.
  gated           answers the handshake only once the file $GATE_FILE
                  exists, then behaves normally.
  stubborn        answers normally, but ignores SIGTERM, SIGINT and its stdin
                  closing: only SIGKILL of its process group ends it. When a
                  `wait` call arrives, writes "pgid pid" to $PID_FILE.
Tool `wait {ms}` answers after ms milliseconds.
Tools: echo {text}; wait {ms}.
"""

import json
import os
import signal
import sys
import threading
import time

mode = sys.argv[1]
out = sys.stdout
lock = threading.Lock()

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "wait",
        "description": "Answer after ms milliseconds.",
        "inputSchema": {"type": "object", "properties": {"ms": {"type": "number"}}},
    },
]


def send(msg):
    with lock:
        out.write(json.dumps(msg) + "\n")
        out.flush()


def result(mid, value):
    send({"jsonrpc": "2.0", "id": mid, "result": value})


def text(mid, value):
    result(mid, {"content": [{"type": "text", "text": value}]})


if mode == "hang-at-start":
    sys.stderr.write("loading the model...\n")
    sys.stderr.flush()
    for _ in sys.stdin:
        pass
    # stdin closed: toolbridge is gone or closing; stay until killed.
    while True:
        time.sleep(3600)

if mode == "slow-start":
    time.sleep(int(os.environ.get("START_DELAY_MS", "1000")) / 1000)

if mode == "gated":
    while not os.path.exists(os.environ["GATE_FILE"]):
        time.sleep(0.02)

if mode == "stubborn":
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)


def call(mid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        text(mid, str(args.get("text", "")))
    elif name == "wait":
        ms = float(args.get("ms", 0))
        if mode == "stubborn":
            # Written whole, then renamed: a reader never sees half of it.
            path = os.environ["PID_FILE"]
            with open(path + ".tmp", "w") as f:
                f.write(f"{os.getpgid(0)} {os.getpid()}\n")
            os.rename(path + ".tmp", path)

        def later():
            time.sleep(ms / 1000)
            text(mid, f"waited {ms:.0f} ms")

        threading.Thread(target=later, daemon=True).start()
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": f"unknown tool {name}"}})


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method = msg.get("method")
    mid = msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result(mid, {
            "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "start-faults", "version": "1.0"},
        })
    elif method == "tools/list":
        result(mid, {"tools": TOOLS})
    elif method == "tools/call":
        call(mid, msg.get("params", {}))
    elif method == "ping":
        result(mid, {})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}})

if mode == "stubborn":
    # stdin closed: a well-behaved server would exit now; this one stays.
    while True:
        time.sleep(3600)
