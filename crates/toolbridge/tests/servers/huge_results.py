"""A raw JSON-RPC MCP server (no SDK) whose tool `big` returns one text item
of $RESULT_BYTES bytes (default 15 MB): "HEAD", then "x"s, then "TAIL".
The response is encoded once, so the server itself is fast and small.
"""

import json
import os
import sys

size = int(os.environ.get("RESULT_BYTES", str(15_000_000)))
text = "HEAD" + "x" * (size - 8) + "TAIL"
BODY = ('"result":{"content":[{"type":"text","text":"' + text + '"}]}}\n').encode()
del text
out = sys.stdout.buffer


def send(msg):
    out.write((json.dumps(msg) + "\n").encode())
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
            "serverInfo": {"name": "huge", "version": "1.0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "big", "description": "A huge result.", "inputSchema": {"type": "object"}},
        ]}})
    elif method == "tools/call":
        out.write(('{"jsonrpc":"2.0","id":' + json.dumps(mid) + ",").encode())
        out.write(BODY)
        out.flush()
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + str(method)}})
