"""The gateway benchmark (see gateway.sh): `toolbridge bench` as the client of
`toolbridge serve`, `mcp-proxy` and `supergateway`, each in front of the same
`toolbridge example-server`, and of the example server directly over stdio.

Each round starts every gateway afresh, in a rotating order, and runs the
same workload through it: echo with a 100-byte argument, SEQ calls one at a
time, then CONC calls with 64 in flight. Every figure is the median over
rounds; ratios are medians of per-round ratios against toolbridge's gateway.
Then, once: the gateway's resident memory idle and with 100 client sessions
open. Nothing here asserts a time.
"""

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

IN_FLIGHT = 64
ECHO_ARGS = json.dumps({"text": "x" * 100})
TOKEN = "bench-token-0123456789abcdef"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--toolbridge", required=True)
    p.add_argument("--mcp-proxy", required=True)
    p.add_argument("--supergateway", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiplies every call count (0.05 for a quick check of the script)")
    a = p.parse_args()
    tb = a.toolbridge
    work = tempfile.mkdtemp(prefix="gateway-bench-")
    env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=f"{work}/config",
               XDG_CACHE_HOME=f"{work}/cache", TOOLBRIDGE_GATEWAY_TOKEN=TOKEN)
    env.pop("TOOLBRIDGE_CONFIG", None)
    upstream = write(work, "upstream.json",
                     {"mcpServers": {"example": {"command": tb, "args": ["example-server"]}}})

    def bench(config: str, calls: int, in_flight: int) -> dict:
        out = run([tb, "-q", "--config", config, "bench", "s", "echo", "--args", ECHO_ARGS,
                   "--calls", str(calls), "--concurrency", str(in_flight), "--json"], env)
        r = json.loads(out)
        if r["errors"]:
            sys.exit(f"toolbridge bench reported errors: {r}")
        return {"calls_per_sec": r["callsPerSec"], "p50_ms": r["latencyMs"]["p50"],
                "client_cpu_us": r["clientCpuUsPerCall"], "calls": r["calls"]}

    def through(url: str, seq: int, conc: int, pid: int | None = None) -> dict:
        """The workload through the gateway at `url`; with `pid`, also the
        gateway process's own CPU time per call."""
        config = write(work, "client.json", {"mcpServers": {"s": {
            "type": "http", "url": url, "headers": {"Authorization": f"Bearer {TOKEN}"}}}})
        bench(config, 100, 8)  # warm-up: connections, the server's first calls
        out = {}
        for mode, calls, in_flight in (("seq", seq, 1), ("conc", conc, IN_FLIGHT)):
            before = cpu_seconds(pid) if pid else 0.0
            out[mode] = bench(config, calls, in_flight)
            if pid:
                out[mode]["server_cpu_us"] = (cpu_seconds(pid) - before) * 1e6 / out[mode]["calls"]
        return out

    def direct(seq: int, conc: int) -> dict:
        config = write(work, "direct.json",
                       {"mcpServers": {"s": {"command": tb, "args": ["example-server"]}}})
        return {"seq": bench(config, seq, 1), "conc": bench(config, conc, IN_FLIGHT)}

    def gateway(seq: int, conc: int) -> dict:
        with Server([tb, "--config", upstream, "serve", "--listen", "127.0.0.1:0"], env) as s:
            return through(s.url, seq, conc, s.proc.pid)

    def mcp_proxy(seq: int, conc: int) -> dict:
        port = free_port()
        with Server([a.mcp_proxy, "--port", str(port), "--log-level", "WARNING", tb, "example-server"],
                    env, port=port) as s:
            return through(f"http://127.0.0.1:{port}/mcp", seq, conc)

    def supergateway(stateful: bool):
        def work_(seq: int, conc: int) -> dict:
            port = free_port()
            cmd = ["node", a.supergateway, "--stdio", f"{tb} example-server", "--outputTransport",
                   "streamableHttp", "--port", str(port), "--logLevel", "none"]
            with Server(cmd + (["--stateful"] if stateful else []), env, port=port):
                return through(f"http://127.0.0.1:{port}/mcp", seq, conc)
        return work_

    # name, workload, calls (sequential, 64 in flight)
    targets = [
        ("toolbridge serve", gateway, (2000, 20000)),
        ("direct stdio (no gateway)", direct, (4000, 40000)),
        ("mcp-proxy 0.13.0", mcp_proxy, (300, 1000)),
        ("supergateway 4.0.0 (default, stateless)", supergateway(False), (100, 300)),
        ("supergateway 4.0.0 --stateful", supergateway(True), (300, 1000)),
    ]
    results = {name: [] for name, *_ in targets}
    load_start = os.getloadavg()[0]
    for r in range(a.rounds):
        order = targets[r % len(targets):] + targets[:r % len(targets)]
        for name, fn, (seq, conc) in order:
            results[name].append(fn(max(10, int(seq * a.scale)), max(64, int(conc * a.scale))))
        print(f"round {r + 1} of {a.rounds} done", file=sys.stderr)

    def med(name: str, mode: str, key: str) -> float:
        return statistics.median(x[mode][key] for x in results[name])

    def ratio(name: str, mode: str) -> float:
        base = results[targets[0][0]]
        return statistics.median(b[mode]["calls_per_sec"] / x[mode]["calls_per_sec"]
                                 for b, x in zip(base, results[name]))

    print(f"\ngateways in front of `toolbridge example-server`, `toolbridge bench` as the client, "
          f"echo with a 100-byte argument, medians of {a.rounds} interleaved rounds\n")
    print("| path | sequential calls/s | p50 ms (sequential) | 64 in flight calls/s | "
          "toolbridge serve is × faster (seq / 64) |")
    print("|---|--:|--:|--:|--:|")
    for name, *_ in targets:
        print(f"| {name} | {med(name, 'seq', 'calls_per_sec'):,.0f} | {med(name, 'seq', 'p50_ms'):.3f} "
              f"| {med(name, 'conc', 'calls_per_sec'):,.0f} "
              f"| {ratio(name, 'seq'):.1f} / {ratio(name, 'conc'):.1f} |")
    added = statistics.median(g["seq"]["p50_ms"] - d["seq"]["p50_ms"] for g, d in
                              zip(results[targets[0][0]], results[targets[1][0]]))
    print(f"\nRATIO seq toolbridge-serve/mcp-proxy={ratio(targets[2][0], 'seq'):.1f}")
    print(f"RATIO conc toolbridge-serve/mcp-proxy={ratio(targets[2][0], 'conc'):.1f}")
    print(f"ADDED p50 latency of the gateway over direct stdio, sequential: {added * 1000:.0f} µs")
    gw = results[targets[0][0]]
    for mode, label in (("seq", "sequential"), ("conc", f"{IN_FLIGHT} in flight")):
        print(f"CPU per call through toolbridge serve, {label}: gateway process "
              f"{statistics.median(x[mode]['server_cpu_us'] for x in gw):.0f} µs, client (toolbridge "
              f"bench) {statistics.median(x[mode]['client_cpu_us'] for x in gw):.0f} µs")
    print(f"LOAD average (1 min) at the start and end of the run: {load_start:.2f} / "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")

    with Server([tb, "--config", upstream, "serve", "--listen", "127.0.0.1:0"], env) as s:
        through(s.url, 100, 8)
        idle = rss_kib(s.proc.pid)
        sessions = [initialize(s.url) for _ in range(a.sessions)]
        busy = rss_kib(s.proc.pid)
        for sid in sessions:
            call(s.url, sid)
        after_calls = rss_kib(s.proc.pid)
    print(f"MEMORY gateway RSS: {idle / 1024:.1f} MiB idle after a warm-up, "
          f"{busy / 1024:.1f} MiB with {a.sessions} client sessions open, "
          f"{after_calls / 1024:.1f} MiB after one call in each "
          f"({(after_calls - idle) / a.sessions:.0f} KiB per session)")


class Server:
    """A gateway process for one round, killed (with its process group) on exit."""

    def __init__(self, cmd: list, env: dict, port: int | None = None) -> None:
        self.cmd, self.env, self.port = cmd, env, port

    def __enter__(self) -> "Server":
        self.proc = subprocess.Popen(self.cmd, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        if self.port is None:
            # toolbridge serve says where it listens.
            for line in self.proc.stderr:
                m = re.search(r"listening on (http://\S+)", line)
                if m:
                    self.url = m.group(1)
                    break
            else:
                sys.exit(f"{self.cmd[0]} never said `listening on`")
            # Keep draining stderr so the gateway never blocks on it.
            subprocess.Popen(["cat"], stdin=self.proc.stderr, stdout=subprocess.DEVNULL)
        else:
            while True:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"{self.cmd[0]} did not listen on {self.port}: "
                                 f"{self.proc.stderr.read()[-2000:]}")
                    time.sleep(0.05)
            subprocess.Popen(["cat"], stdin=self.proc.stderr, stdout=subprocess.DEVNULL)
        return self

    def __exit__(self, *_) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except ProcessLookupError:
            pass
        self.proc.wait()


def post(url: str, message: dict, session: str | None) -> tuple:
    u = url.removeprefix("http://")
    host, path = u.split("/", 1)
    conn = http.client.HTTPConnection(host, timeout=30)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {TOKEN}"}
    if session:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    conn.request("POST", "/" + path, json.dumps(message), headers)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    if resp.status not in (200, 202):
        sys.exit(f"{message.get('method')} answered {resp.status}: {body[:500]!r}")
    return resp.getheader("Mcp-Session-Id"), body


def initialize(url: str) -> str:
    sid, _ = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}, None)
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid


def call(url: str, session: str) -> None:
    post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "x"}}}, session)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(folder: str, name: str, value: dict) -> str:
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(value, f)
    return path


def run(command: list, env: dict) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:6])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


if __name__ == "__main__":
    main()
