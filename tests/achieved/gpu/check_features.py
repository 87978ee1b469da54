#!/usr/bin/env python3
"""Checks the harness CSV of `occ_kernels features` (OCCTRACE_ACHIEVED=all).

usage: check_features.py HARNESS.csv [features|park]
Expects: the cooperative launch measured at 12.5 % (+-2 pp); the cluster launch measured or
'no-range'; the captured launch 'capturing', both graph launches 'graph'; the eager launch of
the captured signature measured; 40 launches from 4 threads, each measured and within 2 pp of
12.5 % or 99.9 % (a launch from another thread inside a range would give a value in between).
"""
import csv
import sys


def check_park(rows, meta):
    """`occ_kernels park` under OCCTRACE_ACHIEVED=sample OCCTRACE_ACHIEVED_IDLE=0.1."""
    errors = []
    got = [(r["status"], round(float(r["achieved_occupancy_pct"]), 2)) for r in rows]
    print("park rows:", got)
    print("meta:", meta)
    targets = [12.5, 99.4, 1.56]
    if len(rows) != 3:
        errors.append(f"expected 3 rows, got {len(rows)}")
    for r, t in zip(rows, targets):
        if r["status"] != "measured" or abs(float(r["achieved_occupancy_pct"]) - t) > 2:
            errors.append(f"expected ~{t}: {dict(r)}")
    if meta.get("achieved_parks") != "2" or meta.get("achieved_unparks") != "2":
        errors.append(f"parks/unparks {meta.get('achieved_parks')}/{meta.get('achieved_unparks')}, expected 2/2")
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print("park OK")
    return 0


def main(path, mode="features"):
    meta = {}
    lines = []
    with open(path) as f:
        for line in f:
            if line.startswith("# "):
                k, _, v = line[2:].strip().partition("=")
                meta[k] = v
            else:
                lines.append(line)
    rows = sorted(csv.DictReader(lines), key=lambda r: int(r["correlation_id"]))
    if mode == "park":
        return check_park(rows, meta)
    errors = []

    def expect(cond, msg):
        if not cond:
            errors.append(msg)

    def near(row, target):
        return row["status"] == "measured" and abs(float(row["achieved_occupancy_pct"]) - target) <= 2

    expect(len(rows) == 46, f"expected 46 rows, got {len(rows)}")
    if len(rows) >= 6:
        expect(near(rows[0], 12.5), f"cooperative: {dict(rows[0])}")
        expect(rows[1]["status"] in ("measured", "no-range"), f"cluster: {dict(rows[1])}")
        expect(rows[2]["status"] == "capturing", f"captured: {dict(rows[2])}")
        expect(rows[3]["status"] == "graph" and rows[4]["status"] == "graph", "graph launches")
        expect(rows[5]["status"] == "measured", f"eager after capture: {dict(rows[5])}")
        for r in rows[6:]:
            expect(near(r, 12.5) or near(r, 99.9), f"threaded launch: {dict(r)}")
    expect(meta.get("achieved_status", "").startswith("ok"), f"status {meta.get('achieved_status')}")
    for r in rows[:6]:
        print(r["status"], r["achieved_occupancy_pct"], r["kernel"])
    print("threaded values:", sorted(round(float(r["achieved_occupancy_pct"]), 2) for r in rows[6:]))
    print("meta:", meta)
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print("features OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
