"""The Python clients benchmark: toolbridge's Pool (and its LangChain
drop-in) against langchain-mcp-adapters 0.3.2 (default mode: a session per
call; and `session()`) and fastmcp 4's `Client`, in the same run, on the
same stdio server (the built-in example server, `python -m toolbridge
example-server` from the toolbridge venv) and the same call (`echo`).

    .deps/py-tb/bin/python bench/python/bench.py [--rounds 5]

Measures calls per second sequentially and with 64 in flight (after one
warm-up call), and one cold call: a new interpreter started, the client
imported and connected, one call answered (the process's whole life).
Prints each figure's median over the rounds and its ratio to toolbridge's.
Needs scripts/setup-test-deps.sh (the venvs) and a toolbridge wheel in both
venvs (scripts/test-python.sh; TOOLBRIDGE_PY_PROFILE=release for figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPS = ROOT / ".deps"
CLIENTS = Path(__file__).resolve().parent / "clients.py"
TB_PY = DEPS / "py-tb/bin/python"
FASTMCP_PY = DEPS / "py-tb-fastmcp/bin/python"

# client -> (interpreter, calls per seq run, calls per par run)
CONTENDERS = {
    "toolbridge": (TB_PY, 5000, 10000),
    "toolbridge-langchain": (TB_PY, 2000, 4000),
    "langchain": (TB_PY, 20, 64),
    "langchain-session": (TB_PY, 1000, 2000),
    "fastmcp": (FASTMCP_PY, 1000, 2000),
}


def one(client: str, mode: str, calls: int, server: dict) -> float:
    """Calls per second of one run, or the cold call's seconds."""
    python = CONTENDERS[client][0]
    start = time.perf_counter()
    out = subprocess.run(
        [str(python), str(CLIENTS), client, mode, str(calls), json.dumps(server)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    elapsed = time.perf_counter() - start
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if mode == "cold":
        return elapsed
    return result["calls"] / result["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", default=",".join(CONTENDERS))
    args = parser.parse_args()
    clients = args.clients.split(",")
    server = {"command": str(TB_PY), "args": ["-m", "toolbridge", "example-server"]}
    figures: dict[str, dict[str, list[float]]] = {c: {"seq": [], "par": [], "cold": []} for c in clients}
    # Rounds interleave the clients, so a busy moment of the machine is
    # shared rather than landing on one.
    for round_ in range(args.rounds):
        for client in clients:
            _, seq_calls, par_calls = CONTENDERS[client]
            figures[client]["seq"].append(one(client, "seq", seq_calls, server))
            figures[client]["par"].append(one(client, "par", par_calls, server))
            figures[client]["cold"].append(one(client, "cold", 1, server))
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    medians = {c: {k: statistics.median(v) for k, v in f.items()} for c, f in figures.items()}
    base = medians.get("toolbridge")
    print(f"{'client':<22}{'seq calls/s':>14}{'64 in flight/s':>16}{'cold call ms':>14}   ratios (toolbridge / client)")
    for client, m in medians.items():
        ratios = ""
        if base and client != "toolbridge":
            ratios = (
                f"   seq {base['seq'] / m['seq']:.1f}x, 64 {base['par'] / m['par']:.1f}x, "
                f"cold {m['cold'] / base['cold']:.1f}x faster"
            )
        print(f"{client:<22}{m['seq']:>14.0f}{m['par']:>16.0f}{m['cold'] * 1000:>14.0f}{ratios}")
    print(json.dumps({"rounds": args.rounds, "medians": medians}))


if __name__ == "__main__":
    main()
