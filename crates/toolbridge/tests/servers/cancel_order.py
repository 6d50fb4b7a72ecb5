"""A stdio MCP server (2025-11-25, plain JSON-RPC, no SDK) that notes the
order in which its client cancels a call and answers the question that call
asked: what a Python `mcp` 1.x server cannot survive is the answer first
(it resumes the call, and the cancellation that comes while the call
finishes ends its whole session), so a client giving up on a call should
cancel it before it answers the call's question.

Usage: python cancel_order.py

Tools:
  ask      asks the client a question (elicitation/create) and waits: a
           result once the answer comes, unless the call was cancelled.
  order    what became of every `ask` so far, in the order it came:
           `cancelled ID` (notifications/cancelled for call ID) and
           `answered ID` (the answer, or error, to call ID's question),
           comma-separated.
"""

import json
import sys

SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
TOOLS = [
    {"name": "ask", "description": "Asks the client a question", "inputSchema": {"type": "object"}},
    {"name": "order", "description": "What became of the asks", "inputSchema": {"type": "object"}},
]

events = []
# The question's id -> the call that asked it.
questions = {}
cancelled = set()


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


def text(message):
    return {"content": [{"type": "text", "text": message}], "isError": False}


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method = message.get("method")
    id = message.get("id")
    if method == "initialize":
        result(id, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "cancel-order", "version": "1"},
        })
    elif method == "tools/list":
        result(id, {"tools": TOOLS})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "ask":
            question = f"q{id}"
            questions[question] = id
            send({
                "jsonrpc": "2.0",
                "id": question,
                "method": "elicitation/create",
                "params": {"message": "Go on?", "requestedSchema": SCHEMA},
            })
        elif name == "order":
            result(id, text(",".join(events)))
        else:
            send({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": f"no tool {name}"}})
    elif method == "notifications/cancelled":
        call = message["params"].get("requestId")
        if call in questions.values():
            events.append(f"cancelled {call}")
            cancelled.add(call)
    elif method is None and id in questions:
        call = questions.pop(id)
        events.append(f"answered {call}")
        if call not in cancelled:
            result(call, text("answered"))
    elif id is not None and method is not None:
        # ping, logging/setLevel, ...: an empty result.
        result(id, {})
