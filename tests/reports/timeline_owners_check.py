#!/usr/bin/env python3
"""The timeline export's owner is the report's: for every kernel of INPUT (an occtrace trace as
text SQL, the schema in front), the "owner" arg of its slices in `occ-report --format trace`
equals the owner `occ-report --format json` gives its configurations (owner_library, with the
binary a header library was compiled into, else origin), and `REQUIRE` pairs NAME=OWNER (from
how the traced programs were built) must hold. Before, the export classified by name alone and
wrote "unknown" for every CUDA C++ and CuPy kernel the report owned by its loader.

usage: timeline_owners_check.py OCC_REPORT WORKDIR INPUT.sql [NAME=OWNER ...]
"""
import json
import os
import sqlite3
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def report_owner(group):
    if group.get("origin") == "header_library" and group.get("loader"):
        return f'{group["owner_library"]} (compiled into {group["loader"]})'
    return group.get("owner_library") or group.get("origin", "unknown")


def main():
    occ_report, workdir, sql = sys.argv[1:4]
    required = dict(arg.split("=", 1) for arg in sys.argv[4:])
    os.makedirs(workdir, exist_ok=True)
    db = os.path.join(workdir, os.path.basename(sql).replace(".sql", ".db"))
    if os.path.exists(db):
        os.remove(db)
    with open(sql) as f, sqlite3.connect(db) as conn:
        conn.executescript(f.read())
    report = json.loads(run([occ_report, db, "--top", "0", "--format", "json"]))
    expected = {}
    for group in report.get("groups", []) + report.get("unjudged", []):
        expected.setdefault(group["name"], set()).add(report_owner(group))
    timeline = os.path.join(workdir, "timeline.json")
    run([occ_report, db, "--format", "trace", "-o", timeline, "--force"])
    with open(timeline) as f:
        events = json.load(f)["traceEvents"]
    exported = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            exported.setdefault(e["name"], set()).add(e["args"]["owner"])
    failures = []
    if not exported:
        failures.append("no kernel slices exported")
    for name, owners in exported.items():
        if owners != expected.get(name):
            failures.append(f"{name[:80]}: exported {sorted(owners)}, report {sorted(expected.get(name, []))}")
    for name, owner in required.items():
        found = {o for n, owners in exported.items() if n.startswith(name) for o in owners}
        if found != {owner}:
            failures.append(f"{name}: expected owner {owner!r}, exported {sorted(found)}")
    if failures:
        sys.exit("FAIL:\n  " + "\n  ".join(failures))
    print(f"owners match the report for {len(exported)} kernels")


if __name__ == "__main__":
    main()
