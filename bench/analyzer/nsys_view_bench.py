#!/usr/bin/env python3
"""What the nsys-style view CUPTI_ACTIVITY_KIND_KERNEL costs a user's query since it has every
launch (#28): the launches without a kernel record (OCC_LAUNCH_CALL rows: light tracing's
untimed launches, a full trace's re-attach gap) come in through a UNION ALL, timed by their
configuration's mean duration.

Builds a full trace from schema/trace_schema.sql with N launches of 100 configurations, once
without launch calls and once with G re-attach gap calls, and times

    SELECT count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL

against the same query over the view as it was before (OCC_LAUNCH joined with
OCC_KERNEL_CONFIG, no calls), interleaved, median of R runs each, in one process.

    bench/analyzer/nsys_view_bench.py [--launches N] [--gap-calls G] [--runs R]
"""
import argparse
import os
import sqlite3
import statistics
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUERY = 'SELECT count(*), sum("end" - start) FROM {}'
# The view before #28: the same columns over OCC_LAUNCH alone (the ones the query reads suffice).
BASELINE_VIEW = """CREATE VIEW baseline_kernel AS
SELECT l.start AS start, l.start + l.duration AS "end", c.deviceId AS deviceId,
       l.correlationId AS correlationId, c.id AS occConfigId
FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId"""


def make_trace(path, launches, gap_calls):
    con = sqlite3.connect(path)
    with open(os.path.join(ROOT, "schema", "trace_schema.sql")) as f:
        con.executescript(f.read())
    columns = [r[1] for r in con.execute("PRAGMA table_info(OCC_KERNEL_CONFIG)") if r[3] and r[1] != "id"]
    values = ", ".join("i" if c == "gridX" else "128" if c == "blockX" else "1" if c.endswith(("Y", "Z")) else "0"
                       for c in columns)
    con.executescript(f"""
INSERT INTO OCC_META VALUES ('trace_mode', 'full'), ('pid', '1');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
INSERT INTO OCC_KERNEL_CONFIG (id, {", ".join(columns)}) SELECT i, {values} FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {launches})
INSERT INTO OCC_LAUNCH SELECT i * 1000, 400 + i % 200, 1 + i % 100, 7, i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {gap_calls})
INSERT INTO OCC_LAUNCH_CALL SELECT i * 77, 1 + i % 100, 7, 0 FROM n WHERE {gap_calls} > 0;
{BASELINE_VIEW};
""")
    con.commit()
    con.close()


def timed(path, view):
    con = sqlite3.connect(path)
    start = time.perf_counter()
    row = con.execute(QUERY.format(view)).fetchone()
    elapsed = time.perf_counter() - start
    con.close()
    return elapsed, row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=1_000_000)
    parser.add_argument("--gap-calls", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for calls in (0, args.gap_calls):
            path = os.path.join(tmp, f"trace_{calls}.db")
            make_trace(path, args.launches, calls)
            view_s, base_s = [], []
            for _ in range(args.runs):
                t, row = timed(path, "CUPTI_ACTIVITY_KIND_KERNEL")
                view_s.append(t)
                assert row[0] == args.launches + calls, row
                t, row = timed(path, "baseline_kernel")
                base_s.append(t)
            v, b = statistics.median(view_s), statistics.median(base_s)
            print(f"{args.launches} launches, {calls} gap calls: view {v:.3f} s, "
                  f"before #28 {b:.3f} s (launches only), ratio {v / b:.2f} (median of {args.runs})")


if __name__ == "__main__":
    main()
