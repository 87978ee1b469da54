#!/usr/bin/env python3
"""PM sampling's coverage and CPU bound in traces, one line each:
    pm_coverage.py OCC_REPORT TRACE.db...
coverage = the share of GPU time in configurations that occ-report gives an achieved figure
(>= 20 clean PM samples: occ-report's own attribution, the figure docs/achieved.md quotes);
then the OCC_META facts of the CPU bound (pm_budget, pm_sampling_ms of pm_run_ms, pm_pauses)
and of the collector's CPU (pm_decode_ms, pm_writer_ms) and lost samples."""
import json
import sqlite3
import subprocess
import sys

KEYS = ("pm_status", "pm_budget", "pm_pauses", "pm_reopens", "pm_decode_errors", "pm_overflows", "pm_sampling_ms",
        "pm_run_ms", "pm_samples", "pm_samples_lost", "pm_decode_ms", "pm_writer_ms", "pm_wakeups", "launch_count")


def main():
    report = sys.argv[1]
    for db in sys.argv[2:]:
        meta = dict(sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("SELECT name, value FROM OCC_META"))
        facts = " ".join(f"{k}={meta.get(k, '-')}" for k in KEYS)
        done = subprocess.run([report, db, "--format", "json", "--top", "1000000"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{db}: occ-report exit {done.returncode}: {done.stderr.strip()[:300]}; {facts}", flush=True)
            continue
        groups = json.loads(done.stdout)["groups"]
        total = sum(int(g["total_ns"]) for g in groups)
        covered = sum(int(g["total_ns"]) for g in groups if g.get("achieved", {}).get("samples", 0) > 0)
        with_figure = sum(1 for g in groups if g.get("achieved", {}).get("samples", 0) > 0)
        share = 100.0 * covered / total if total else 0.0
        print(f"{db}: coverage {share:.1f} % of GPU time ({with_figure} of {len(groups)} configurations); {facts}",
              flush=True)


if __name__ == "__main__":
    main()
