"""A raw JSON-RPC MCP server (no SDK) that misbehaves at random, for the soak
test (scripts/soak.sh). Tool `work`: each call, at random,
  - answers at once (most calls),
  - answers after 20-400 ms (slow),
  - prints a garbage line on stdout before answering,
  - never answers (hang; toolbridge's timeout ends the call),
  - crashes (exit 3), first starting a daemon in a session of its own.
At start it also starts a child in its process group. Every process it
starts carries $SOAK_MARKER on its command line, so that a leak check can
find what is left. Odds (percent): $CRASH_PCT (1), $HANG_PCT (2),
$GARBAGE_PCT (5), $SLOW_PCT (20).
"""

import json
import os
import random
import subprocess
import sys
import time

marker = os.environ.get("SOAK_MARKER", "soak")
crash = int(os.environ.get("CRASH_PCT", "1"))
hang = int(os.environ.get("HANG_PCT", "2"))
garbage = int(os.environ.get("GARBAGE_PCT", "5"))
slow = int(os.environ.get("SLOW_PCT", "20"))
SLEEPER = [sys.executable, "-c", "import time; time.sleep(100000)", marker]

subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
out = sys.stdout


def send(msg):
    out.write(json.dumps(msg) + "\n")
    out.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "chaos", "version": "1.0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "work", "description": "Work, or not.", "inputSchema": {"type": "object"}},
        ]}})
    elif method == "tools/call":
        roll = random.randrange(100)
        if roll < crash:
            subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             start_new_session=True)
            sys.stderr.write("chaos: crashing on purpose\n")
            os._exit(3)
        roll -= crash
        if roll < hang:
            continue
        roll -= hang
        if roll < garbage:
            out.write("garbage \x1b[31m not JSON-RPC\n")
        elif roll < garbage + slow:
            time.sleep(random.uniform(0.02, 0.4))
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": "done"}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + str(method)}})
