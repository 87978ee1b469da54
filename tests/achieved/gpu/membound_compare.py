#!/usr/bin/env python3
"""Achieved occupancy of membound_sweep's saxpy launches: occtrace traces against ncu CSVs.

usage: membound_compare.py --occtrace NAME=trace.db ... --ncu NAME=ncu.csv ... [--markdown OUT]
                           [--judge NAME_A,NAME_B]

Each input is one run of membound_sweep (5 launches per block size, launch order kept). Prints,
per block size, the median over that size's launches of achieved occupancy and duration for
every run, and where both tools measured them, the throughput metrics side by side. Only the
saxpy launches count (the l2_flush kernels of "flush" runs are skipped). With --judge, exits 1
unless runs A and B agree within 2 percentage points at every block size whose median duration
is at least 5 us (exit 2 on bad input).
"""
import argparse
import csv
import io
import sqlite3
import statistics
import sys
from collections import defaultdict

OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"
TIME = "gpu__time_duration.sum"
THROUGHPUT = {  # ncu metric -> OCC_ACHIEVED column
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dramThroughputPct",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": "l2ThroughputPct",
    "l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed": "l1ThroughputPct",
    "sm__inst_issued.avg.pct_of_peak_sustained_active": "issueSlotsPct",
}


def read_occtrace(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cols = {r[1] for r in con.execute("PRAGMA table_info(OCC_ACHIEVED)")}
    extra = [c for c in THROUGHPUT.values() if c in cols]
    sql = ("SELECT c.blockX, a.achievedOccupancyPct, a.gpuTimeNs" +
           "".join(f", a.{c}" for c in extra) +
           " FROM OCC_ACHIEVED a JOIN OCC_LAUNCH l ON l.correlationId = a.correlationId"
           " JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.shortName"
           " WHERE a.status = 'measured' AND s.value LIKE '%saxpy%' ORDER BY a.rowid")
    rows = defaultdict(list)
    for r in con.execute(sql):
        point = {OCC: r[1], TIME: r[2]}
        for metric, col in THROUGHPUT.items():
            if col in extra:
                point[metric] = r[3 + extra.index(col)]
        rows[r[0]].append(point)
    return rows


def read_ncu(path):
    text = open(path).read()
    start = text.find('"ID"')
    if start < 0:
        sys.exit(f"membound_compare: {path}: no ncu CSV header")
    by_launch = defaultdict(dict)
    block_of = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        if "saxpy" not in row.get("Kernel Name", ""):
            continue
        value = row["Metric Value"].replace(",", "")
        try:
            value = float(value)
        except ValueError:
            continue
        unit = row.get("Metric Unit", "")
        if row["Metric Name"] == TIME:
            value *= {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1)
        by_launch[row["ID"]][row["Metric Name"]] = value
        block_of[row["ID"]] = int(row["Block Size"].strip("()").split(",")[0])
    rows = defaultdict(list)
    for launch_id in sorted(by_launch, key=int):
        rows[block_of[launch_id]].append(by_launch[launch_id])
    return rows


def median(points, metric):
    values = [p[metric] for p in points if p.get(metric) is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1):
    return "–" if v is None else f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--occtrace", action="append", default=[])
    ap.add_argument("--ncu", action="append", default=[])
    ap.add_argument("--markdown")
    ap.add_argument("--judge")
    args = ap.parse_args()
    runs = []
    for spec in args.occtrace:
        name, _, path = spec.partition("=")
        runs.append((name, read_occtrace(path)))
    for spec in args.ncu:
        name, _, path = spec.partition("=")
        runs.append((name, read_ncu(path)))
    blocks = sorted({b for _, rows in runs for b in rows})
    lines = ["| block | " + " | ".join(f"{n} occ % / µs" for n, _ in runs) + " |",
             "|---|" + "---|" * len(runs)]
    for b in blocks:
        cells = []
        for _, rows in runs:
            pts = rows.get(b, [])
            t = median(pts, TIME)
            cells.append(f"{fmt(median(pts, OCC))} / {fmt(t / 1e3 if t else None, 2)} (n={len(pts)})")
        lines.append(f"| {b} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Throughput, % of peak (median per block size): " + ", ".join(
        m.split("__")[0] for m in THROUGHPUT))
    lines.append("| block | " + " | ".join(n for n, _ in runs) + " |")
    lines.append("|---|" + "---|" * len(runs))
    for b in blocks:
        cells = []
        for _, rows in runs:
            pts = rows.get(b, [])
            cells.append(" / ".join(fmt(median(pts, m)) for m in THROUGHPUT))
        lines.append(f"| {b} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text + "\n")
    if args.judge:
        a_name, _, b_name = args.judge.partition(",")
        named = dict(runs)
        if a_name not in named or b_name not in named:
            sys.exit(f"membound_compare: --judge {args.judge}: no such runs")
        failures = 0
        for b in blocks:
            a_pts, b_pts = named[a_name].get(b, []), named[b_name].get(b, [])
            a_occ, b_occ = median(a_pts, OCC), median(b_pts, OCC)
            t = median(b_pts, TIME)
            if a_occ is None or b_occ is None:
                print(f"judge: block {b}: missing in {a_name if a_occ is None else b_name}")
                failures += 1
            elif t is not None and t >= 5000:
                ok = abs(a_occ - b_occ) <= 2.0
                failures += not ok
                print(f"judge: block {b}: {a_name} {a_occ:.1f} % vs {b_name} {b_occ:.1f} % "
                      f"({a_occ - b_occ:+.1f} pp) {'OK' if ok else 'FAIL'}")
        print(f"membound_compare: {len(blocks) - failures} passed, {failures} failed")
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
