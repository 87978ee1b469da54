#!/usr/bin/env python3
"""Tail-wave accuracy: occtrace and Nsight Compute against the launch's own block timeline.

    tailwave.py OCC_KERNELS LIBOCCTRACE WORKDIR [--launches 30] [--rounds 2] [--factor 1]

The 1122 x 256 spin kernel (1.06 waves on a 132-SM GPU) has no single achieved occupancy: the
66 blocks after the first wave land wherever slots free up first, and their placement sets the
SMs' active cycles. Comparing two tools on *different* launches of it therefore compares two
placements. Here every launch also records each block's SM and clock64 span
(`occ_kernels timeline`), which gives the occupancy that launch's SMs actually held, so each
tool is checked against the very launch it measured. Rounds alternate the tool order; ncu runs
with --clock-control none, once with its default cache control and once with --cache-control none.
Prints per-tool medians and the per-launch differences; exit 1 when any tool's median
|tool - timeline| exceeds 2 percentage points, 2 on a failed run.
"""
import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys

METRIC = "sm__warps_active.avg.pct_of_peak_sustained_active"


def timelines(stdout):
    values = [float(m.group(1)) for m in re.finditer(r"^timeline \d+ occupancy=([\d.]+)", stdout, re.M)]
    tails = re.findall(r"tail_sms=(\d+) tail_max_per_sm=(\d+)", stdout)
    return values, [(int(a), int(b)) for a, b in tails]


def run_occtrace(args, work, tag):
    db = os.path.join(work, f"tail_{tag}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    env = dict(os.environ, CUDA_INJECTION64_PATH=args.lib, OCCTRACE_OUTPUT=db, OCCTRACE_ACHIEVED="all",
               OCCTRACE_QUIET="1")
    p = subprocess.run([args.kernels, "timeline", str(args.launches), str(args.factor)], env=env,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"tailwave: occtrace run failed: {p.stderr.strip()[-300:]}")
    con = sqlite3.connect(db)
    rows = con.execute("""SELECT a.achievedOccupancyPct FROM OCC_ACHIEVED a
                          WHERE a.status = 'measured' ORDER BY a.correlationId""").fetchall()
    tool = [r[0] for r in rows]
    tl, tails = timelines(p.stdout)
    return tool, tl, tails


def run_ncu(args, work, tag, cache):
    log = os.path.join(work, f"ncu_{tag}.csv")
    cmd = ["ncu", "--clock-control", "none", "--csv", "--log-file", log, "--metrics", METRIC]
    if cache:
        cmd += ["--cache-control", cache]
    p = subprocess.run(cmd + [args.kernels, "timeline", str(args.launches), str(args.factor)],
                       capture_output=True, text=True, timeout=400)
    if p.returncode != 0:
        sys.exit(f"tailwave: ncu run failed: {p.stderr.strip()[-300:]}")
    import csv
    with open(log) as f:
        lines = [l for l in f if l.startswith('"')]
    values = {}
    for row in csv.DictReader(lines):
        if row.get("Metric Name") == METRIC and "timeline" in row.get("Kernel Name", ""):
            values[int(row["ID"])] = float(row["Metric Value"].replace(",", ""))
    tool = [values[k] for k in sorted(values)]
    tl, tails = timelines(p.stdout)
    return tool, tl, tails


def untraced(args):
    p = subprocess.run([args.kernels, "timeline", str(args.launches), str(args.factor)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"tailwave: untraced run failed: {p.stderr.strip()[-300:]}")
    return timelines(p.stdout)


def q(values):
    if not values:
        return "n/a"
    v = sorted(values)
    return f"median {statistics.median(v):6.2f}  range {v[0]:6.2f}..{v[-1]:6.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels")
    ap.add_argument("lib")
    ap.add_argument("work")
    ap.add_argument("--launches", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--factor", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    results = {}
    tools = [("occtrace", lambda tag: run_occtrace(args, args.work, tag)),
             ("ncu", lambda tag: run_ncu(args, args.work, tag, None)),
             ("ncu cache-none", lambda tag: run_ncu(args, args.work, tag + "_nocache", "none"))]
    for r in range(args.rounds):
        order = tools[r % len(tools):] + tools[:r % len(tools)]
        for name, fn in order:
            tool, tl, tails = fn(f"r{r}")
            if len(tool) != len(tl):
                sys.exit(f"tailwave: {name}: {len(tool)} measurements for {len(tl)} launches")
            res = results.setdefault(name, {"tool": [], "timeline": [], "tails": []})
            res["tool"] += tool
            res["timeline"] += tl
            res["tails"] += tails
            print(f"round {r + 1} {name:15s} tool {q(tool)} | timeline {q(tl)}", flush=True)
        tl, tails = untraced(args)
        results.setdefault("untraced", {"tool": [], "timeline": [], "tails": []})
        results["untraced"]["timeline"] += tl
        results["untraced"]["tails"] += tails
        print(f"round {r + 1} {'untraced':15s} timeline {q(tl)}", flush=True)

    print(f"\n{'':15s} {'n':>4s}  {'tool':36s}  {'timeline of the same launches':36s}  "
          f"{'median |tool-timeline|':>22s}  {'max':>6s}  tail SMs (median)")
    failed = False
    for name, res in results.items():
        diffs = [abs(a - b) for a, b in zip(res["tool"], res["timeline"])]
        tail_sms = statistics.median([t[0] for t in res["tails"]]) if res["tails"] else 0
        md = statistics.median(diffs) if diffs else float("nan")
        print(f"{name:15s} {len(res['timeline']):4d}  {q(res['tool']):36s}  {q(res['timeline']):36s}  "
              f"{md:22.2f}  {max(diffs) if diffs else float('nan'):6.2f}  {tail_sms}")
        if diffs and md > 2.0:
            failed = True
    for name in ("occtrace", "ncu", "ncu cache-none"):
        if name in results:
            res = results[name]
            print(f"{name} per launch (tool, timeline): " +
                  " ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(res["tool"], res["timeline"])))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
