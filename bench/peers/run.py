"""Drives the peers workload (see run.sh) and prints the table.

Each round runs every client once, in a rotating order: a fresh process
that connects, warms up, makes SEQ calls one at a time and CONC calls with
IN_FLIGHT in flight, and reports calls/s and its own CPU per call. A second
loop times "start, one call, exit" as separate processes. Every figure is
the median over rounds.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

IN_FLIGHT = 64
ECHO_ARGS = json.dumps({"text": "x" * 100})


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--toolbridge", required=True)
    p.add_argument("--node-client", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--python-client", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--once-runs", type=int, default=10)
    a = p.parse_args()
    tb = a.toolbridge

    def toolbridge(seq: int, conc: int) -> dict:
        def bench(calls: int, in_flight: int) -> dict:
            out = run([tb, "-q", "bench", "example", "echo", "--args", ECHO_ARGS,
                       "--calls", str(calls), "--concurrency", str(in_flight), "--json"])
            r = json.loads(out)
            if r["errors"]:
                sys.exit(f"toolbridge bench reported errors: {r}")
            return {"calls_per_sec": r["callsPerSec"], "cpu_us_per_call": r["clientCpuUsPerCall"]}

        return {"seq": bench(seq, 1), "conc": bench(conc, IN_FLIGHT)}

    def node(seq: int, conc: int) -> dict:
        return json.loads(run(["node", a.node_client, tb, str(seq), str(conc), str(IN_FLIGHT)]))

    def python(seq: int, conc: int) -> dict:
        return json.loads(run([a.python, a.python_client, tb, str(seq), str(conc), str(IN_FLIGHT)]))

    # name, workload, calls (sequential, in flight), "start + one call" command
    clients = [
        ("toolbridge (CLI `bench`, Rust)", toolbridge, (4000, 40000),
         [tb, "-q", "call", "example", "echo", "--args", ECHO_ARGS]),
        ("TypeScript SDK 1.32.2", node, (2000, 10000), ["node", a.node_client, tb, "once"]),
        ("Python mcp 2.3.0", python, (1000, 4000), [a.python, a.python_client, tb, "once"]),
    ]
    results = {name: [] for name, *_ in clients}
    for r in range(a.rounds):
        order = clients[r % len(clients):] + clients[:r % len(clients)]
        for name, work, (seq, conc), _ in order:
            results[name].append(work(seq, conc))
        print(f"round {r + 1} of {a.rounds} done", file=sys.stderr)
    once = {name: [] for name, *_ in clients}
    for r in range(a.once_runs):
        for name, _, _, command in clients:
            t0 = time.perf_counter()
            run(command)
            once[name].append((time.perf_counter() - t0) * 1000)

    def med(name: str, mode: str, key: str) -> float:
        return statistics.median(x[mode][key] for x in results[name])

    print(f"\npeers: echo with a 100-byte argument against `toolbridge example-server`, "
          f"medians of {a.rounds} interleaved rounds ({a.once_runs} for start + one call)\n")
    print("| client | sequential calls/s | 64 in flight calls/s | client CPU µs/call (64 in flight) | start + 1 call, ms |")
    print("|---|--:|--:|--:|--:|")
    for name, *_ in clients:
        print(f"| {name} | {med(name, 'seq', 'calls_per_sec'):,.0f} | {med(name, 'conc', 'calls_per_sec'):,.0f} "
              f"| {med(name, 'conc', 'cpu_us_per_call'):.1f} | {ms(statistics.median(once[name]))} |")
    base = clients[0][0]
    print()
    for name, *_ in clients[1:]:
        print(f"RATIO conc toolbridge/{name.split()[0].lower()}="
              f"{med(base, 'conc', 'calls_per_sec') / med(name, 'conc', 'calls_per_sec'):.2f}")


def ms(x: float) -> str:
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def run(command: list) -> str:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


if __name__ == "__main__":
    main()
