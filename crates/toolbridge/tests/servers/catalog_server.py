"""A stdio MCP server for the resource and prompt tests (Python 3 stdlib only).

It lists $RESOURCES resources (default 5), `file:///r/N.txt`, in pages of
$PAGE_SIZE (default 2), and one prompt, `greet`, whose argument `name` is
required. Its one tool:

  add   adds the resource `file:///r/added.txt` and the prompt `added`, and
        sends notifications/resources/list_changed and
        notifications/prompts/list_changed before answering.

Reading `file:///r/silent` is never answered. Errors as the SDKs send them: reading an unknown URI is -32002; getting an
unknown prompt, or `greet` without `name`, is -32602.

Modes ($MODE): `tools-only` declares only tools (no resources, no prompts);
`endless` gives the same `nextCursor` on every resources/list page.
Each resources/list request is noted on stderr as "LIST resources CURSOR".
"""

import json
import os
import sys

mode = os.environ.get("MODE", "")
count = int(os.environ.get("RESOURCES", "5"))
page_size = int(os.environ.get("PAGE_SIZE", "2"))
added = False


def resources():
    listed = [
        {"uri": f"file:///r/{i}.txt", "name": f"r{i}", "mimeType": "text/plain"}
        for i in range(count)
    ]
    if added:
        listed.append({"uri": "file:///r/added.txt", "name": "added", "mimeType": "text/plain"})
    return listed


def prompts():
    listed = [
        {
            "name": "greet",
            "description": "greets someone",
            "arguments": [{"name": "name", "required": True}],
        }
    ]
    if added:
        listed.append({"name": "added", "description": "added by the add tool"})
    return listed


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def error(id, code, message):
    send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


def capabilities():
    if mode == "tools-only":
        return {"tools": {}}
    return {
        "tools": {},
        "resources": {"listChanged": True},
        "prompts": {"listChanged": True},
    }


def handle(message):
    global added
    method = message.get("method")
    id = message.get("id")
    params = message.get("params") or {}
    if id is None:
        return
    if method == "initialize":
        result(
            id,
            {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": capabilities(),
                "serverInfo": {"name": "catalog", "version": "1"},
            },
        )
    elif method == "tools/list":
        result(id, {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call" and params.get("name") == "add":
        added = True
        send({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        send({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
        result(id, {"content": [{"type": "text", "text": "added"}]})
    elif method == "resources/list" and mode != "tools-only":
        cursor = params.get("cursor")
        print(f"LIST resources {cursor}", file=sys.stderr, flush=True)
        if mode == "endless":
            result(id, {"resources": resources()[:1], "nextCursor": "again"})
            return
        start = int(cursor or 0)
        page = {"resources": resources()[start : start + page_size]}
        if start + page_size < len(resources()):
            page["nextCursor"] = str(start + page_size)
        result(id, page)
    elif method == "resources/read" and mode != "tools-only":
        uri = params.get("uri")
        if uri == "file:///r/silent":
            return
        if any(r["uri"] == uri for r in resources()):
            result(id, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"text of {uri}"}]})
        else:
            error(id, -32002, f"Resource not found: {uri}")
    elif method == "prompts/list" and mode != "tools-only":
        result(id, {"prompts": prompts()})
    elif method == "prompts/get" and mode != "tools-only":
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not any(p["name"] == name for p in prompts()):
            error(id, -32602, f"Prompt {name} not found")
        elif name == "greet" and "name" not in arguments:
            error(id, -32602, "Missing required argument: name")
        else:
            who = arguments.get("name", "you")
            text = f"Hello, {who}!"
            result(id, {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]})
    else:
        error(id, -32601, f"Method not found: {method}")


for line in sys.stdin:
    line = line.strip()
    if line:
        handle(json.loads(line))
