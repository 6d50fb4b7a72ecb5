"""A stdio server written with the Python `mcp` SDK 2.x's low-level `Server`
whose one tool has a JSON Schema 2020-12 inputSchema with the keywords the
conformance suite's `json-schema-2020-12-preservation` scenario checks
(`$schema`, `$defs` with an `$anchor`, a same-document `$ref`, `allOf` of
`anyOf`, `if`/`then`/`else`, `additionalProperties: false`). The low-level
server sends it as written. `contact` echoes its arguments as JSON.

Run: python schema_2020_12.py (stdio); with --print-schema it prints SCHEMA,
the fixture the tests compare with.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


async def list_tools(ctx, params):
    return types.ListToolsResult(
        tools=[types.Tool(name="contact", description="Stores a contact.", input_schema=SCHEMA)]
    )


async def call_tool(ctx, params):
    text = json.dumps(params.arguments, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main():
    server = Server("schema-2020-12", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:] == ["--print-schema"]:
        print(json.dumps(SCHEMA))
    else:
        anyio.run(main)
