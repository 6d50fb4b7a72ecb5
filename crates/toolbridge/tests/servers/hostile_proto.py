"""A raw JSON-RPC MCP server (no SDK) that breaks the protocol on purpose,
for the hostile-protocol tests (issue 16 items 1, 6, 8, 9; issue 11 item 10).

Usage: python3 hostile_proto.py MODE
Modes (each one behaviour; anything not named answers normally):
  cursor-self     every tools/list page says nextCursor "again" (the same).
  cursor-cycle    pages "a" -> "b" -> "a" -> ...
  endless-pages   every page has one new tool and a new cursor, forever.
  many-tools      every page has 10,000 new tools and a new cursor, forever.
  bad-schema      tools "good", then five whose inputSchema is a string, null,
                  true, an array and a number, then "also_good".
  duplicate       two tools named "echo" (the second says "second").
  huge-result     tools/call answers with a 17 MiB line, "id" after "result"
                  (as the TypeScript SDK writes it).
  huge-noid       tools/call answers with a 17 MiB line that has no id.
  deep-result     tools/call answers with a result nested 1,000 arrays deep.
  bad-utf8        tools/call answers with an invalid UTF-8 byte in a string.
  nul-result      tools/call answers with a raw NUL byte in the line.
  banner          prints "Server running on stdio" first, then works.
  banner-only     prints a banner and one non-protocol line per message
                  received; never answers.
  garbage-exit    prints one non-protocol line, then exits (stdout closes).
  many-items      tools/call answers with 500,000 text items (13 MB).
Tools (unless the mode lists others): echo {text}.
"""

import json
import sys

mode = sys.argv[1]
out = sys.stdout.buffer

ECHO = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def write(raw: bytes):
    out.write(raw + b"\n")
    out.flush()


def send(msg):
    write(json.dumps(msg).encode())


def tool(name):
    return {"name": name, "inputSchema": {"type": "object"}}


def tools_page(mid, cursor):
    if mode == "cursor-self":
        return {"tools": [tool("t")], "nextCursor": "again"}
    if mode == "cursor-cycle":
        nxt = "b" if cursor == "a" else "a"
        return {"tools": [tool("t_" + nxt)], "nextCursor": nxt}
    if mode == "endless-pages":
        n = int(cursor or "0")
        return {"tools": [tool("t%d" % n)], "nextCursor": str(n + 1)}
    if mode == "many-tools":
        n = int(cursor or "0")
        return {
            "tools": [tool("t%d_%d" % (n, i)) for i in range(10000)],
            "nextCursor": str(n + 1),
        }
    if mode == "bad-schema":
        bad = [
            {"name": "schema_string", "inputSchema": "object"},
            {"name": "schema_null", "inputSchema": None},
            {"name": "schema_true", "inputSchema": True},
            {"name": "schema_array", "inputSchema": []},
            {"name": "schema_number", "inputSchema": 5},
        ]
        return {"tools": [tool("good")] + bad + [tool("also_good")]}
    if mode == "duplicate":
        second = dict(ECHO, description="second")
        return {"tools": [ECHO, second, tool("other")]}
    return {"tools": [ECHO]}


def call_result(mid, args):
    text = args.get("text", "")
    if mode == "huge-result":
        body = "x" * (17 * 1024 * 1024)
        write(b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'
              + body.encode() + b'"}]},"id":' + json.dumps(mid).encode() + b"}")
    elif mode == "huge-noid":
        write(b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'
              + b"x" * (17 * 1024 * 1024) + b'"}]}}')
    elif mode == "deep-result":
        deep = "[" * 1000 + "]" * 1000
        write(('{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":%s}}'
               % (json.dumps(mid), deep)).encode())
    elif mode == "bad-utf8":
        write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode()
              + b',"result":{"content":[{"type":"text","text":"bad \xff byte"}]}}')
    elif mode == "nul-result":
        write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode()
              + b',"result":{"content":[{"type":"text","text":"nul \x00 byte"}]}}')
    elif mode == "many-items":
        item = b'{"type":"text","text":"x"}'
        write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode()
              + b',"result":{"content":[' + b",".join([item] * 500000) + b"]}}")
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": text}]}})


if mode in ("banner", "banner-only"):
    write(b"Server running on stdio")
if mode == "garbage-exit":
    write(b"Error: cannot find module 'server.js'")
    sys.exit(1)

for line in sys.stdin.buffer:
    line = line.strip()
    if not line:
        continue
    if mode == "banner-only":
        write(b"[info] received a message, still not speaking MCP")
        continue
    msg = json.loads(line)
    method = msg.get("method")
    mid = msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-" + mode, "version": "1.0"},
        }})
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        send({"jsonrpc": "2.0", "id": mid, "result": tools_page(mid, cursor)})
    elif method == "tools/call":
        call_result(mid, msg["params"].get("arguments") or {})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "Method not found: " + str(method)}})
