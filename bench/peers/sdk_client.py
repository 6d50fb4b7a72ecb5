"""The Python `mcp` SDK's client (2.3) running the clients benchmark's
workload (see clients.py): echo with a 100-byte argument, SEQ calls one at
a time, then CONC calls with IN_FLIGHT in flight, after a warm-up. Prints one
JSON line: calls/s, p50/p99 ms and the client's CPU per call per mode.

    python sdk_client.py URL|stdio:EXE SEQ_CALLS CONC_CALLS IN_FLIGHT
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
    target, seq, conc, in_flight = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    server = (StdioServerParameters(command=target[6:], args=["example-server"])
              if target.startswith("stdio:") else target)
    async with Client(server) as client:
        latencies: list[float] = []

        async def call() -> None:
            t0 = time.perf_counter()
            result = await client.call_tool("echo", {"text": TEXT})
            latencies.append(time.perf_counter() - t0)
            if result.is_error or result.content[0].text != TEXT:
                raise RuntimeError(f"bad result: {result}")

        async def run(calls: int, width: int) -> dict:
            remaining = calls
            latencies.clear()

            async def worker() -> None:
                nonlocal remaining
                while remaining > 0:
                    remaining -= 1
                    await call()

            cpu0, t0 = cpu(), time.perf_counter()
            async with anyio.create_task_group() as tg:
                for _ in range(min(width, calls)):
                    tg.start_soon(worker)
            secs = time.perf_counter() - t0
            lat = sorted(latencies)
            return {"calls_per_sec": calls / secs, "cpu_us_per_call": (cpu() - cpu0) * 1e6 / calls,
                    "p50_ms": lat[len(lat) // 2] * 1000,
                    "p99_ms": lat[min(len(lat) - 1, len(lat) * 99 // 100)] * 1000}

        await run(min(100, seq), 8)  # warm-up
        print(json.dumps({"seq": await run(seq, 1), "conc": await run(conc, in_flight)}))


anyio.run(main)
