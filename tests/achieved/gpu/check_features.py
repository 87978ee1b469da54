#!/usr/bin/env python3
"""Checks `occ_kernels features` / `park` runs (OCCTRACE_ACHIEVED=all).

usage: check_features.py HARNESS.csv [features|park]
       check_features.py TRACE.db trace|quiet
features (harness CSV): the cooperative launch measured at 12.5 % (+-2 pp); the cluster launch
(the only row whose launch parameters carry cluster dims, 2x1x1) measured at 12.5 % or with a
not-measured reason; the captured launch 'capturing', both graph launches 'graph'; the eager
launch of the captured signature measured; 40 launches from 4 threads, each measured and within
2 pp of 12.5 % or 99.9 % (a launch from another thread inside a range would give a value in
between).
trace (the real libocctrace.so's file): the cluster launch (second non-graph launch) is recorded
with its grid 132x1x1, block 256x1x1 and cluster 2x1x1 from CUPTI's kernel record, and exactly
one OCC_ACHIEVED row joins it: measured at 12.5 % or a not-measured reason.
quiet (libocctrace.so's file of `occ_kernels quiet`): all 5 launches recorded; exactly two
OCC_ACHIEVED rows, both measured and each joined to its own launch: the first launch (A, 12.5 %)
and one of B's (~99.4 %), B being a configuration first launched after A's context parked.
"""
import csv
import sqlite3
import sys

# What occ_kernels.cu's RunFeatures() launches with cudaLaunchKernelEx.
CLUSTER_LAUNCH = {"grid": (132, 1, 1), "block": (256, 1, 1), "cluster": (2, 1, 1)}
# Statuses for a launch that was bracketed but yielded no value (injector/achieved/replay/achieved_launch_path.cc);
# 'graph' / 'capturing' would mean the cluster launch was misclassified.
NOT_MEASURED_REASONS = ("no-range", "multi-range", "no-value", "error")
CLUSTER_TARGET_PCT = 12.5  # 132 blocks of 8 warps on 132 SMs: 8 / 64 warps per active SM


def verdict(errors, what):
    """Prints the errors or "<what> OK"; the process exit code."""
    if errors:
        print("FAILED:\n  " + "\n  ".join(errors))
        return 1
    print(f"{what} OK")
    return 0


def cluster_verdict(status, pct):
    """None if (status, pct) is a valid outcome for the cluster launch, else why not."""
    if status == "measured":
        if pct is None or abs(pct - CLUSTER_TARGET_PCT) > 2:
            return f"measured {pct}, expected {CLUSTER_TARGET_PCT} +- 2"
        return None
    if status in NOT_MEASURED_REASONS:
        return None if pct is None or pct < 0 else f"status {status} with a value {pct}"
    return f"status '{status}' is neither 'measured' nor a not-measured reason {NOT_MEASURED_REASONS}"


def check_trace(path):
    errors = []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    launches = db.execute(
        "SELECT l.correlationId, c.contextId, c.gridX, c.gridY, c.gridZ, c.blockX, c.blockY, c.blockZ,"
        " c.clusterX, c.clusterY, c.clusterZ FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId"
        " WHERE c.graphId = 0 ORDER BY l.correlationId").fetchall()
    clustered = [r for r in launches if r[8] * r[9] * r[10] > 1]
    print("non-graph launches:", len(launches), "with cluster dims > 1:", clustered)
    if len(launches) < 2:
        errors.append(f"expected the cooperative and the cluster launch first, got {len(launches)} launches")
    else:
        corr, ctx = launches[1][0], launches[1][1]
        got = {"grid": tuple(launches[1][2:5]), "block": tuple(launches[1][5:8]),
               "cluster": tuple(launches[1][8:11])}
        if got != CLUSTER_LAUNCH:
            errors.append(f"cluster launch (correlationId {corr}) recorded as {got}, launched as {CLUSTER_LAUNCH}")
        if [r[0] for r in clustered] != [corr]:
            errors.append(f"expected exactly the cluster launch to carry cluster dims, got {clustered}")
        achieved = db.execute(
            "SELECT status, achievedOccupancyPct FROM OCC_ACHIEVED WHERE correlationId = ? AND contextId = ?",
            (corr, ctx)).fetchall()
        print("cluster launch OCC_ACHIEVED:", achieved)
        if len(achieved) != 1:
            errors.append(f"expected one OCC_ACHIEVED row for the cluster launch, got {achieved}")
        else:
            why = cluster_verdict(*achieved[0])
            if why:
                errors.append(f"cluster launch: {why}")
    status = db.execute("SELECT value FROM OCC_META WHERE name = 'status'").fetchone()
    if status != ("complete",):
        errors.append(f"trace status {status}")
    return verdict(errors, "trace")


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
    return verdict(errors, "park")


def check_quiet(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    errors = []
    launches = [r[0] for r in db.execute("SELECT correlationId FROM OCC_LAUNCH ORDER BY correlationId")]
    rows = db.execute("SELECT a.correlationId, a.status, a.achievedOccupancyPct, k.gridX, k.blockX "
                      "FROM OCC_ACHIEVED a LEFT JOIN OCC_LAUNCH l ON l.correlationId = a.correlationId "
                      "LEFT JOIN OCC_KERNEL_CONFIG k ON k.id = l.configId ORDER BY a.rowid").fetchall()
    meta = dict(db.execute("SELECT name, value FROM OCC_META WHERE name LIKE 'achieved%'"))
    print("quiet launches:", launches)
    print("quiet rows:", rows)
    print("meta:", {k: v for k, v in meta.items() if "park" in k})
    if len(launches) != 5:
        errors.append(f"expected 5 launches, got {len(launches)}")
    if len(rows) != 2:
        errors.append(f"expected 2 OCC_ACHIEVED rows, got {len(rows)}")
    else:
        first, last = rows
        if launches and first[0] != launches[0]:
            errors.append(f"first sample joins {first[0]}, not the first launch {launches[0]}")
        if last[0] not in launches[3:]:
            errors.append(f"second sample joins {last[0]}, not one of B's launches {launches[3:]}")
        if first[1] != "measured" or first[2] is None or abs(first[2] - 12.5) > 2 or first[3:] != (66, 256):
            errors.append(f"A: {first}")
        if last[1] != "measured" or last[2] is None or last[2] < 97 or last[3:] != (264, 1024):
            errors.append(f"B: {last}")
    if int(meta.get("achieved_parks", "0")) < 1:
        errors.append(f"parks {meta.get('achieved_parks')}")
    return verdict(errors, "quiet")


def main(path, mode="features"):
    if mode == "trace":
        return check_trace(path)
    if mode == "quiet":
        return check_quiet(path)
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
        # The sample must belong to the cluster launch: its row carries that launch's cluster
        # dims, and no other row does.
        cluster_rows = [r for r in rows if r.get("cluster", "1x1x1") != "1x1x1"]
        expect(rows[1].get("cluster") == "2x1x1", f"cluster launch row without its cluster dims: {dict(rows[1])}")
        expect(cluster_rows == [rows[1]], f"rows with cluster dims: {[dict(r) for r in cluster_rows]}")
        pct = float(rows[1]["achieved_occupancy_pct"])
        why = cluster_verdict(rows[1]["status"], pct if pct >= 0 else None)
        expect(why is None, f"cluster: {why}: {dict(rows[1])}")
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
    return verdict(errors, "features")


if __name__ == "__main__":
    if len(sys.argv) < 2 or (len(sys.argv) > 2 and sys.argv[2] not in ("features", "park", "trace", "quiet")):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:3]))
