#!/usr/bin/env python3
"""The verdict on one run of the MCP conformance suite 0.2 in client mode, for
scripts/conformance.sh: counts each scenario's checks (from the `checks.json`
the suite saves with `-o`) and fails the run when

- a `--requirements` run, or a scenario that must pass, has no checks at all
  (a client that never connects shows "0 passed, 0 failed", which is not a
  pass);
- a scored scenario, or one named in --must-pass, has a failed check or a
  warning;
- the suite itself failed a `--requirements` run (it does on scored failures).

Scenarios a requirement set runs without scoring them (extensions, ones added
after the release) and the extra `--scenario` runs are counted and shown, and
fail the run only when named in --must-pass.

Prints one line per run and one per scenario not scored; on failure, each
failing check and the client's stderr.
"""

import argparse
import json
import pathlib
import re
import sys

# "✗ http-custom-headers: 3 passed, 15 failed"
SCENARIO_LINE = re.compile(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed")
# "  ✗ auth/dpop (extension)", in the "Not scored for ..." section
UNSCORED_LINE = re.compile(r"^  [✓✗] (\S+) \((.+)\)$")
# A result folder: the scenario's name, then the time of the run.
RESULT_DIR = re.compile(r"^(.*)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def counts(checks):
    """How many checks of each status a scenario's checks.json has."""
    tally = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
    for check in checks:
        if check.get("status") in tally:
            tally[check["status"]] += 1
    return tally


def results(folder):
    """Each scenario's result folder (checks.json, the client's stderr.txt),
    in the folder the suite wrote with -o."""
    found = {}
    for path in pathlib.Path(folder).glob("**/checks.json"):
        match = RESULT_DIR.match(path.parent.relative_to(folder).as_posix())
        if match:
            found[match.group(1)] = path.parent
    return found


def checks_of(saved, name):
    folder = saved.get(name)
    return json.loads((folder / "checks.json").read_text()) if folder else []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["requirements", "scenario"], required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--exit-code", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--must-pass", default="")
    args = parser.parse_args()
    must_pass = set(args.must_pass.split())
    log = pathlib.Path(args.log).read_text(errors="replace")
    saved = results(args.results)
    run = f"conformance 0.2 --{args.kind} {args.name}"

    if args.kind == "requirements":
        names = [m.group(1) for m in map(SCENARIO_LINE.match, log.splitlines()) if m]
        unscored = {}
        section = log.split("Not scored for", 1)
        if len(section) == 2:
            for line in section[1].splitlines():
                match = UNSCORED_LINE.match(line)
                if match:
                    unscored[match.group(1)] = match.group(2)
    else:
        names = [args.name]
        unscored = {args.name: "extension"}

    problems = []
    total = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
    shown = []
    for name in names:
        tally = counts(checks_of(saved, name))
        for status, n in tally.items():
            total[status] += n
        checks = sum(tally.values())
        summary = f"{tally['SUCCESS']}/{checks}"
        if tally["WARNING"]:
            summary += f", {tally['WARNING']} warnings"
        required = name not in unscored or name in must_pass
        if name in unscored:
            why = unscored[name] + (", must pass" if name in must_pass else "")
            shown.append(f"  {name} ({why}): {summary} checks passed")
        if not required:
            continue
        if checks == 0:
            problems.append((name, "no checks"))
        elif tally["FAILURE"] or tally["WARNING"]:
            problems.append((name, f"{summary} checks passed"))

    checks = sum(total.values())
    if args.kind == "requirements" and (not names or checks == 0):
        problems.append((None, "the run has no checks"))
    if args.kind == "requirements" and args.exit_code != 0:
        problems.append((None, f"the suite exited with {args.exit_code}"))

    verdict = "FAILED" if problems else "ok"
    scored = len([n for n in names if n not in unscored])
    print(
        f"{run}: {verdict}: {total['SUCCESS']}/{checks} checks passed"
        f" ({total['FAILURE']} failed, {total['WARNING']} warnings) in {len(names)} scenarios"
        + (f", {scored} scored" if args.kind == "requirements" else "")
    )
    for line in shown:
        print(line)
    if not problems:
        return 0
    for name, what in problems:
        print(f"  FAILED {name or run}: {what}", file=sys.stderr)
        for check in checks_of(saved, name) if name else []:
            if check.get("status") in ("FAILURE", "WARNING"):
                print(
                    f"    {check['status']} {check.get('id')}: {check.get('errorMessage', '')}",
                    file=sys.stderr,
                )
        stderr = saved[name] / "stderr.txt" if name in saved else None
        if stderr and stderr.is_file() and stderr.read_text().strip():
            print("    client stderr:\n" + stderr.read_text()[-4000:], file=sys.stderr)
    if any(name is None for name, _ in problems):
        print(log[-8000:], file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
