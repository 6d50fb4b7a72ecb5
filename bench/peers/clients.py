"""The clients benchmark (see clients.sh): every client against every
gateway, the floor and the server directly over stdio.

A run is one client process against one target, started afresh: it
connects, warms up, makes SEQ calls one at a time and CONC calls with 64 in
flight (echo with a 100-byte argument), and reports calls/s, p50 and p99 per
mode. Around it the gateway's own CPU time (user + system, its process
only, not the upstream's) is read from /proc and divided by the calls, and
its RSS read after the run. Each round runs every (client, target) pair,
targets in a rotating order. Every figure is the median over rounds; a
ratio is the median of the per-round ratios. Nothing here asserts a time.
"""

import argparse
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


def main() -> None:
    p = argparse.ArgumentParser()
    for flag in ("--toolbridge", "--mcp-proxy", "--supergateway", "--floor", "--node-client",
                 "--python-sdk", "--here"):
        p.add_argument(flag, required=True)
    p.add_argument("--agentgateway", default="")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seq", type=int, default=500, help="sequential calls per run")
    p.add_argument("--conc", type=int, default=2000, help="calls per run with 64 in flight")
    p.add_argument("--quick", action="store_true", help="one round of 100 / 300 calls")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.seq, a.conc = 1, 100, 300
    tb = a.toolbridge
    work = tempfile.mkdtemp(prefix="clients-bench-")
    env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=f"{work}/config",
               XDG_CACHE_HOME=f"{work}/cache")
    for var in ("TOOLBRIDGE_CONFIG", "TOOLBRIDGE_GATEWAY_TOKEN"):
        env.pop(var, None)
    upstream = write(work, "upstream.json",
                     {"mcpServers": {"example": {"command": tb, "args": ["example-server"]}}})

    # Clients: name -> function(target) -> {"seq": {...}, "conc": {...}};
    # target is a URL or "stdio:EXE".
    def sdk(command: list):
        return lambda target: json.loads(run(command + [target, str(a.seq), str(a.conc), str(IN_FLIGHT)], env))

    def toolbridge_bench(target: str) -> dict:
        entry = ({"command": tb, "args": ["example-server"]} if target.startswith("stdio:")
                 else {"type": "http", "url": target})
        config = write(work, "client.json", {"mcpServers": {"s": entry}})

        def bench(calls: int, in_flight: int) -> dict:
            r = json.loads(run([tb, "-q", "--config", config, "bench", "s", "echo", "--args", ECHO_ARGS,
                                "--calls", str(calls), "--concurrency", str(in_flight), "--json"], env))
            if r["errors"]:
                sys.exit(f"toolbridge bench reported errors: {r['firstError']}")
            return {"calls_per_sec": r["callsPerSec"], "p50_ms": r["latencyMs"]["p50"],
                    "p99_ms": r["latencyMs"]["p99"], "cpu_us_per_call": r["clientCpuUsPerCall"]}

        bench(min(100, a.seq), 8)  # warm-up
        return {"seq": bench(a.seq, 1), "conc": bench(a.conc, IN_FLIGHT)}

    clients = [
        ("TypeScript SDK 1.32.2", sdk(["node", a.node_client])),
        ("Python mcp 2.3.0", sdk([a.python_sdk, os.path.join(a.here, "sdk_client.py")])),
        ("plain HTTP/1.1 keep-alive (one 2025-06-18 session)",
         sdk([sys.executable, os.path.join(a.here, "plain_client.py")])),
        ("toolbridge bench", toolbridge_bench),
    ]

    # Targets: name -> function() -> Server (a context manager with .url
    # and .proc), or None for the direct stdio baseline.
    def toolbridge_serve() -> "Server":
        return Server([tb, "--config", upstream, "serve", "--listen", "127.0.0.1:0"], env)

    def mcp_proxy() -> "Server":
        port = free_port()
        return Server([a.mcp_proxy, "--port", str(port), "--log-level", "WARNING", tb, "example-server"],
                      env, port=port)

    def supergateway() -> "Server":
        port = free_port()
        return Server(["node", a.supergateway, "--stdio", f"{tb} example-server", "--outputTransport",
                       "streamableHttp", "--port", str(port), "--logLevel", "none", "--stateful"],
                      env, port=port)

    def floor() -> "Server":
        port = free_port()
        return Server([a.floor, str(port), tb], env, port=port)

    def agentgateway() -> "Server":
        port = free_port()
        config = os.path.join(work, "agw.yaml")
        with open(config, "w") as f:
            f.write(f"config:\n  enableIpv6: false\n  adminAddr: 127.0.0.1:{free_port()}\n"
                    f"  statsAddr: 127.0.0.1:{free_port()}\n  readinessAddr: 127.0.0.1:{free_port()}\n"
                    f"mcp:\n  port: {port}\n  targets:\n  - name: ex\n    stdio:\n"
                    f"      cmd: {tb}\n      args: [\"example-server\"]\n")
        return Server([a.agentgateway, "-f", config], env, port=port)

    targets = [("toolbridge serve", toolbridge_serve), ("floor (minimal relay)", floor),
               ("mcp-proxy 0.13.0", mcp_proxy), ("supergateway 4.0.0 --stateful", supergateway)]
    if a.agentgateway and os.access(a.agentgateway, os.X_OK):
        targets.append(("agentgateway 75b4e6c", agentgateway))
    else:
        print("agentgateway: no binary ($AGENTGATEWAY unset or not executable); left out",
              file=sys.stderr)
    targets.append(("direct stdio (no gateway)", None))

    results = {(c, t): [] for c, _ in clients for t, _ in targets}
    load_start = os.getloadavg()[0]
    started = time.monotonic()
    for r in range(a.rounds):
        for i, (cname, client) in enumerate(clients):
            k = (r + i) % len(targets)
            for tname, target in targets[k:] + targets[:k]:
                if target is None:
                    out = client(f"stdio:{tb}")
                else:
                    with target() as server:
                        cpu0 = cpu_seconds(server.proc.pid)
                        out = client(server.url)
                        calls = min(100, a.seq) + a.seq + a.conc
                        out["gateway_cpu_us"] = (cpu_seconds(server.proc.pid) - cpu0) * 1e6 / calls
                        out["gateway_rss_mib"] = rss_kib(server.proc.pid) / 1024
                results[(cname, tname)].append(out)
        print(f"round {r + 1} of {a.rounds} done ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    def med(c: str, t: str, f) -> float:
        return statistics.median(f(x) for x in results[(c, t)])

    print(f"\nclients × gateways in front of `toolbridge example-server`, echo with a 100-byte "
          f"argument; {a.seq} calls sequential, {a.conc} with {IN_FLIGHT} in flight per run; "
          f"medians of {a.rounds} interleaved round(s)\n")
    for cname, _ in clients:
        print(f"{cname}\n")
        print("| target | seq calls/s | seq p50 ms | seq p99 ms | 64 in flight calls/s | "
              "64 p50 ms | 64 p99 ms | gateway CPU µs/call | gateway RSS MiB |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
        for tname, target in targets:
            row = [f"{med(cname, tname, lambda x, m=m, k=k: x[m][k]):{fmt}}"
                   for m in ("seq", "conc") for k, fmt in
                   (("calls_per_sec", ",.0f"), ("p50_ms", ".2f"), ("p99_ms", ".2f"))]
            if target is None:
                row += ["—", "—"]
            else:
                row += [f"{med(cname, tname, lambda x: x['gateway_cpu_us']):.0f}",
                        f"{med(cname, tname, lambda x: x['gateway_rss_mib']):.1f}"]
            print(f"| {tname} | " + " | ".join(row) + " |")
        print()
    base = targets[0][0]
    for cname, _ in clients:
        short = cname.split(" (")[0]
        for tname, target in targets[1:]:
            if target is None:
                continue
            ratios = []
            for mode in ("seq", "conc"):
                ratios.append(statistics.median(
                    b[mode]["calls_per_sec"] / x[mode]["calls_per_sec"]
                    for b, x in zip(results[(cname, base)], results[(cname, tname)])))
            print(f"RATIO {short}: toolbridge serve / {tname} = {ratios[0]:.2f} sequential, "
                  f"{ratios[1]:.2f} at {IN_FLIGHT} in flight")
        added = statistics.median(
            g["seq"]["p50_ms"] - d["seq"]["p50_ms"]
            for g, d in zip(results[(cname, base)], results[(cname, targets[-1][0])]))
        print(f"ADDED {short}: p50 of toolbridge serve over direct stdio, sequential: {added:.3f} ms")
    print(f"LOAD average (1 min) at the start and end of the run: {load_start:.2f} / "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {time.monotonic() - started:.0f} s")


class Server:
    """A gateway process for one run, killed (with its process group) on exit."""

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
        else:
            self.url = f"http://127.0.0.1:{self.port}/mcp"
            while True:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"{self.cmd[0]} did not listen on {self.port}: "
                                 f"{self.proc.stderr.read()[-2000:]}")
                    time.sleep(0.05)
        # Keep draining stderr so the gateway never blocks on it.
        self.drain = subprocess.Popen(["cat"], stdin=self.proc.stderr, stdout=subprocess.DEVNULL)
        return self

    def __exit__(self, *_) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.drain.wait()


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
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


if __name__ == "__main__":
    main()
