"""The Python `mcp` SDK's client running the peers workload against
`toolbridge example-server` (see run.py): echo with a 100-byte argument,
sequential and with N in flight. Prints one JSON line.

    python client.py TOOLBRIDGE_EXE SEQ_CALLS CONC_CALLS IN_FLIGHT
    python client.py TOOLBRIDGE_EXE once      (start, one call, exit)
"""

import json
import resource
import sys
import time

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

TEXT = "x" * 100


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main() -> None:
    exe = sys.argv[1]
    async with Client(StdioServerParameters(command=exe, args=["example-server"])) as client:

        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            if result.is_error or result.content[0].text != TEXT:
                raise RuntimeError(f"bad result: {result}")

        async def run(calls: int, in_flight: int) -> dict:
            remaining = calls

            async def worker() -> None:
                nonlocal remaining
                while remaining > 0:
                    remaining -= 1
                    await call()

            cpu0, t0 = cpu(), time.perf_counter()
            async with anyio.create_task_group() as tg:
                for _ in range(min(in_flight, calls)):
                    tg.start_soon(worker)
            secs = time.perf_counter() - t0
            return {"calls_per_sec": calls / secs, "cpu_us_per_call": (cpu() - cpu0) * 1e6 / calls}

        if sys.argv[2] == "once":
            await call()
            return
        await run(200, 8)  # warm-up
        seq = await run(int(sys.argv[2]), 1)
        conc = await run(int(sys.argv[3]), int(sys.argv[4]))
        print(json.dumps({"seq": seq, "conc": conc}))


anyio.run(main)
