"""The Python `mcp` SDK (2.x) as a client of `toolbridge serve`, for the gateway's
interop tests. Runs one plan and prints what it saw as one JSON line; the plans
and output are those of client.cjs.

    python client.py PLAN_JSON http URL
    python client.py PLAN_JSON stdio COMMAND ARGS...

$INTEROP_TOKEN, when set, is sent as `Authorization: Bearer ...`.

A plan with "asks" may also pin the protocol version with "mode" (the SDK's
`Client(mode=...)`, e.g. "2026-07-28": stateless, no `initialize`); only such a
plan declares sampling (server-everything lists tools by what its client can
do, and the other plans expect its usual list). Sampling is answered with
"py model says: PROMPT" from the model "py-model".
"""

import json
import os
import sys
import time

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def texts(content) -> list:
    return [c.text for c in content if c.type == "text"]


async def main() -> None:
    plan = json.loads(sys.argv[1])
    kind, target = sys.argv[2], sys.argv[3:]
    seen = {"progress": [], "logs": [], "elicitations": [], "samplings": []}

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append(params.data)

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen["elicitations"].append(params.message)
        return types.ElicitResult(action="accept", content={"reply": f"py answer to {params.message}"})

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append(message)

    async def on_sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        first = params.messages[0].content
        first = first[0] if isinstance(first, list) else first
        prompt = getattr(first, "text", "")
        seen["samplings"].append(prompt)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"py model says: {prompt}"),
            model="py-model",
        )

    asking = {"sampling_callback": on_sample, "mode": plan.get("mode", "auto")} if "asks" in plan else {}

    if kind == "http":
        token = os.environ.get("INTEROP_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300))
        server = streamable_http_client(target[0], http_client=http)
    else:
        server = StdioServerParameters(command=target[0], args=target[1:])
    async with Client(
        server,
        logging_callback=on_log,
        elicitation_callback=on_elicit,
        log_level="info",
        raise_exceptions=True,
        **asking,
    ) as client:
        out: dict = {}
        if "progress" in plan:
            steps: list = []

            async def on_step(progress: float, total: float | None, message: str | None) -> None:
                steps.append([progress, total])

            p = plan["progress"]
            result = await client.call_tool(p["name"], p.get("arguments"), progress_callback=on_step)
            out.update(result=texts(result.content), progress=steps)
        elif "asks" in plan:
            # Calls whose server asks the client something mid-call.
            results, errors = [], []
            for a in plan["asks"]:
                result = await client.call_tool(a["name"], a.get("arguments"))
                results.append(texts(result.content))
                errors.append(bool(result.is_error))
            out.update(
                protocolVersion=client.protocol_version,
                results=results,
                isError=errors,
                elicitations=seen["elicitations"],
                samplings=seen["samplings"],
            )
        elif "ask" in plan:
            # One call whose server asks the client something mid-call.
            a = plan["ask"]
            result = await client.call_tool(a["name"], a.get("arguments"))
            out.update(seen, result=texts(result.content), isError=bool(result.is_error))
        elif "rendezvous" in plan:
            r = plan["rendezvous"]
            if client.server_capabilities and client.server_capabilities.logging is not None:
                try:
                    await client.set_logging_level("info")
                except Exception:
                    # 2026-07-28 connections opt in per request (log_level above).
                    pass
            result = await client.call_tool(
                r["name"], {"tag": r["tag"], "expect": r["expect"]}, progress_callback=on_progress
            )
            out.update(seen, result=texts(result.content), isError=bool(result.is_error))
        else:
            # Listed again, for 90 s at most, until every expected tool is there
            # (see client.cjs).
            deadline = time.monotonic() + 90
            while True:
                tools: list = []
                cursor = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools += [t.name for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                missing = [n for n in plan.get("expectTools", []) if n not in tools]
                if not missing or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.2)
            out["tools"] = tools
            out["calls"] = [texts((await client.call_tool(c["name"], c.get("arguments"))).content)
                            for c in plan["calls"]]
            out["reads"] = []
            for uri in plan["reads"]:
                read = await client.read_resource(uri)
                out["reads"].append([getattr(c, "text", None) or getattr(c, "blob", None)
                                     for c in read.contents])
            out["prompts"] = []
            for p in plan["prompts"]:
                prompt = await client.get_prompt(p["name"], p.get("arguments"))
                out["prompts"].append([m.content.text for m in prompt.messages])
        print(json.dumps(out), flush=True)


anyio.run(main)
