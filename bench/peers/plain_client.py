"""A plain HTTP/1.1 keep-alive MCP client, the simplest a client can be:
one 2025-06-18 session, requests written by hand on raw sockets, each
connection kept open for the next call (see clients.py). IN_FLIGHT calls in
flight use IN_FLIGHT connections of the one session (HTTP/1.1 has one
request per connection at a time). With `stdio:EXE`, the same by hand over
the example server's stdin/stdout (the direct baseline). Prints one JSON
line: calls/s, p50/p99 ms, the client's CPU per call, per mode.

    python plain_client.py URL|stdio:EXE SEQ_CALLS CONC_CALLS IN_FLIGHT

Both answers a streamable HTTP server may give are read: a JSON body
(Content-Length) and an event stream (chunked, or ended by close).
"""

import asyncio
import json
import resource
import sys
import time

TEXT = "x" * 100
VERSION = "2025-06-18"


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Connection:
    def __init__(self, host: str, port: int, path: str, headers: dict) -> None:
        self.host, self.port, self.path, self.headers = host, port, path, headers

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def post(self, message: dict, extra: dict | None = None) -> tuple[int, dict, bytes]:
        body = json.dumps(message).encode()
        head = [f"POST {self.path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                "Content-Type: application/json", "Accept: application/json, text/event-stream",
                f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in (self.headers | (extra or {})).items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status_line = await self.reader.readline()
        if not status_line:
            raise RuntimeError("the server closed the connection")
        status = int(status_line.split()[1])
        headers = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            data = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            data = b""
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readexactly(2)
        else:
            data = await self.reader.read()
            await self.open()
        return status, headers, data


def result_of(headers: dict, data: bytes) -> dict:
    if headers.get("content-type", "").startswith("text/event-stream"):
        for line in data.decode().splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "result" in message or "error" in message:
                    return message
        raise RuntimeError(f"no answer in the event stream: {data[:300]!r}")
    return json.loads(data)


class Stdio:
    """The example server as a child, JSON lines over its pipes, answers
    matched to calls by id."""

    async def open(self, exe: str) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            exe, "example-server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        self.waiting: dict = {}
        self.reader = asyncio.get_running_loop().create_task(self.read())

    async def read(self) -> None:
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            if (f := self.waiting.pop(message.get("id"), None)) is not None:
                f.set_result(message)

    async def request(self, message: dict) -> dict:
        f = asyncio.get_running_loop().create_future()
        self.waiting[message["id"]] = f
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        return await f


async def main_stdio(exe: str, seq: int, conc: int, in_flight: int) -> None:
    server = Stdio()
    await server.open(exe)
    await server.request({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "plain-bench", "version": "1"}}})
    server.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    latencies: list[float] = []
    next_id = 1

    async def call() -> None:
        nonlocal next_id
        next_id += 1
        t0 = time.perf_counter()
        answer = await server.request({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                                       "params": {"name": "echo", "arguments": {"text": TEXT}}})
        latencies.append(time.perf_counter() - t0)
        if answer.get("result", {}).get("content", [{}])[0].get("text") != TEXT:
            raise RuntimeError(f"bad answer: {answer}")

    print(json.dumps(await workload(call, latencies, seq, conc, in_flight, lambda width: [None] * width)))
    server.proc.stdin.close()
    await server.proc.wait()


async def workload(call, latencies: list, seq: int, conc: int, in_flight: int, lanes) -> dict:
    """Warm-up, SEQ calls one at a time, CONC with IN_FLIGHT in flight;
    `lanes(width)` gives each worker what `call` takes."""

    async def run(calls: int, width: int) -> dict:
        remaining = calls
        latencies.clear()

        async def worker(lane) -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await (call(lane) if lane is not None else call())

        cpu0, t0 = cpu(), time.perf_counter()
        await asyncio.gather(*(worker(lane) for lane in lanes(width)))
        secs = time.perf_counter() - t0
        lat = sorted(latencies)
        return {"calls_per_sec": calls / secs, "cpu_us_per_call": (cpu() - cpu0) * 1e6 / calls,
                "p50_ms": lat[len(lat) // 2] * 1000, "p99_ms": lat[min(len(lat) - 1, len(lat) * 99 // 100)] * 1000}

    await run(min(100, seq), 1)  # warm-up
    return {"seq": await run(seq, 1), "conc": await run(conc, in_flight)}


async def main() -> None:
    target = sys.argv[1]
    seq, conc, in_flight = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    if target.startswith("stdio:"):
        return await main_stdio(target[6:], seq, conc, in_flight)
    url = target
    hostport, _, path = url.removeprefix("http://").partition("/")
    host, _, port = hostport.partition(":")
    base: dict = {}
    first = Connection(host, int(port), "/" + path, base)
    await first.open()
    status, headers, data = await first.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "plain-bench", "version": "1"}}})
    if status != 200:
        sys.exit(f"initialize answered {status}: {data[:300]!r}")
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": VERSION}
    status, _, data = await first.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    if status not in (200, 202):
        sys.exit(f"notifications/initialized answered {status}: {data[:300]!r}")
    connections = [first]
    for _ in range(in_flight - 1):
        c = Connection(host, int(port), "/" + path, base)
        await c.open()
        connections.append(c)
    latencies: list[float] = []
    next_id = 1

    async def call(c: Connection) -> None:
        nonlocal next_id
        next_id += 1
        t0 = time.perf_counter()
        status, headers, data = await c.post({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                                              "params": {"name": "echo", "arguments": {"text": TEXT}}},
                                             session)
        latencies.append(time.perf_counter() - t0)
        answer = result_of(headers, data)
        if status != 200 or answer.get("result", {}).get("content", [{}])[0].get("text") != TEXT:
            raise RuntimeError(f"bad answer ({status}): {data[:300]!r}")

    print(json.dumps(await workload(call, latencies, seq, conc, in_flight,
                                    lambda width: connections[:width])))
    for c in connections:
        c.writer.close()


asyncio.run(main())
