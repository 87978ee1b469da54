#!/usr/bin/env python3
"""occtrace's achieved occupancy per measured launch, as compare_ncu.py reads it.

usage: occtrace_csv.py TRACE.db OUT.csv [--skip-kernel NAME ...]

One row per OCC_ACHIEVED row joined to its launch (kernel, correlation id, status, achieved
occupancy %), in correlation-id order. --skip-kernel leaves out kernel records that are not the
program's (CUPTI's own WaitNs kernel under OCCTRACE_ACHIEVED_REPLAY=user). Prints the row count
and the trace's achieved_* OCC_META rows.
"""
import argparse
import csv
import sqlite3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("out")
    ap.add_argument("--skip-kernel", action="append", default=[])
    args = ap.parse_args()
    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    skip = args.skip_kernel
    rows = con.execute(f"""
      SELECT s.value, a.correlationId, a.status, a.achievedOccupancyPct
      FROM OCC_ACHIEVED a
      JOIN OCC_LAUNCH l ON l.correlationId = a.correlationId
      JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId AND c.contextId = a.contextId
      JOIN StringIds s ON s.id = c.mangledName
      WHERE s.value NOT IN ({",".join("?" * len(skip))})
      ORDER BY a.correlationId""", skip).fetchall()
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "correlation_id", "status", "achieved_occupancy_pct"])
        w.writerows(rows)
    print("occtrace rows:", len(rows), "meta:",
          dict(con.execute("SELECT name, value FROM OCC_META WHERE name LIKE 'achieved%'").fetchall()))


if __name__ == "__main__":
    main()
