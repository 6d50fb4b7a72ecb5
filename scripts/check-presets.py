#!/usr/bin/env python3
"""Maintenance check for the preset catalogue (crates/toolbridge/src/presets).

For every stdio preset, checks that its package exists in its registry and that
the pinned range still matches a published version (npm: `npm view`, PyPI:
`pip index versions`). With --tools it also installs each package into a temp
directory, starts the server, lists its tools over stdio (initialize,
notifications/initialized, tools/list) and compares them with the preset's
`tools` field. Servers that insist on an API key at start-up get a placeholder:
listing tools makes no API call. Remote (http) presets are not checked: their
tools come from their documentation.

Needs network access to the registries; not run in CI.

    scripts/check-presets.py [--tools] [--only ID ...] [--presets FILE]

By default the catalogue is read from `toolbridge presets list --json` (built
with cargo); --presets FILE reads that JSON from a file instead.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_presets(path):
    if path:
        with open(path) as f:
            return json.load(f)
    out = subprocess.run(
        ["cargo", "run", "-q", "-p", "toolbridge-cli", "--", "presets", "list", "--json"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def matches_pypi(version, spec):
    try:
        from packaging.specifiers import SpecifierSet
    except ImportError:
        from pip._vendor.packaging.specifiers import SpecifierSet
    return version in SpecifierSet("==" + spec)


def resolve(package):
    """The newest published version in the pinned range, or raise."""
    name, rng = package["name"], package["version"]
    if package["registry"] == "npm":
        out = subprocess.run(["npm", "view", f"{name}@{rng}", "version", "--json"],
                             capture_output=True, text=True)
        if out.returncode != 0 or not out.stdout.strip():
            raise RuntimeError(f"npm has no {name}@{rng}: {out.stderr.strip()[-300:]}")
        versions = json.loads(out.stdout)
        if not isinstance(versions, list):
            return versions
        # npm lists them in publication order, not version order.
        return max(versions, key=lambda v: [int(x) if x.isdigit() else -1
                                            for x in v.replace("-", ".").split(".")])
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", name],
                         capture_output=True, text=True)
    line = next((l for l in out.stdout.splitlines() if l.startswith("Available versions:")), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"PyPI has no {name}: {out.stderr.strip()[-300:]}")
    versions = [v.strip() for v in line.split(":", 1)[1].split(",")]
    good = [v for v in versions if matches_pypi(v, rng)]
    if not good:
        raise RuntimeError(f"no {name} version matches =={rng} (have {versions[:5]}...)")
    return good[0]


def install(preset, version, workdir):
    """Installs the package; returns the argv that starts the server."""
    package = preset["package"]
    name = package["name"]
    if package["registry"] == "npm":
        prefix = os.path.join(workdir, "node")
        os.makedirs(prefix, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                        "--loglevel=error", f"{name}@{version}"], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(prefix, "node_modules", name, "package.json")) as f:
            bins = json.load(f).get("bin")
        if isinstance(bins, dict):
            bins = next(iter(bins.values()))
        return ["node", os.path.join(prefix, "node_modules", name, bins)]
    venv = os.path.join(workdir, "venv-" + name)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet",
                    "--disable-pip-version-check", f"{name}=={version}"], check=True)
    return [os.path.join(venv, "bin", preset["args"][-1])]


def list_tools(argv, env, timeout=90):
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    stderr = []
    threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True).start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()

    def send(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def response(request_id):
        for line in proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]
        raise RuntimeError("server exited: " + "".join(stderr[-10:]))

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "check-presets", "version": "0"}}})
        response(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        names, cursor, request_id = [], None, 2
        while True:
            send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list",
                  "params": {"cursor": cursor} if cursor else {}})
            page = response(request_id)
            names += [t["name"] for t in page["tools"]]
            cursor, request_id = page.get("nextCursor"), request_id + 1
            if not cursor:
                return names
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", action="store_true", help="also compare tool lists")
    parser.add_argument("--only", nargs="*", metavar="ID", help="check only these presets")
    parser.add_argument("--presets", metavar="FILE", help="presets JSON instead of cargo run")
    args = parser.parse_args()

    failures = 0
    with tempfile.TemporaryDirectory(prefix="check-presets-") as workdir:
        for preset in load_presets(args.presets):
            pid = preset["id"]
            if args.only and pid not in args.only:
                continue
            package = preset.get("package")
            if not package:
                print(f"skip  {pid}: remote ({preset['url']}); tools are from its documentation")
                continue
            try:
                version = resolve(package)
                note = f"{package['name']} {package['version']} -> {version}"
                if args.tools:
                    env = dict(os.environ)
                    env.update(preset.get("extraEnv") or {})
                    if preset.get("apiKeyEnvVar"):
                        # Not "key"-like: some servers reject obvious placeholders.
                        env.setdefault(preset["apiKeyEnvVar"], "placeholder0000")
                    argv = install(preset, version, workdir)
                    if pid == "filesystem":
                        argv.append(workdir)
                    listed = list_tools(argv, env)
                    if sorted(listed) != sorted(preset["tools"]):
                        missing = sorted(set(preset["tools"]) - set(listed))
                        extra = sorted(set(listed) - set(preset["tools"]))
                        raise RuntimeError(f"tools differ: server lacks {missing}, "
                                           f"server adds {extra}")
                    note += f", {len(listed)} tools match"
                print(f"ok    {pid}: {note}")
            except Exception as e:  # report every preset, then fail
                failures += 1
                print(f"FAIL  {pid}: {e}")
    if failures:
        print(f"{failures} preset(s) need attention", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
