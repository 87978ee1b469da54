#!/usr/bin/env python3
"""Cost of achieved-occupancy measurement with the real libocctrace.so (issue 5's figures).

usage: achieved_cost.py LIBOCCTRACE.so TRAIN_SMALL.py [--rounds 5] [--steps 300] [--skip-all]

1. Whole-process wall time of `python train_small.py` (STEPS=300 plus its 20 warm-up steps,
   interpreter start and lazy module loading included), interleaved rounds, medians:
   untraced vs OCCTRACE_ACHIEVED=sample with the default budget (5 % of wall time) and with
   OCCTRACE_SAMPLE_BUDGET=100% (every signature measured once), with the signatures measured /
   seen that each run recorded. Target: sample <= 1.10 x untraced, every signature measured.
   Also, in the same rounds: tracing alone (OCCTRACE_ACHIEVED=off), the split between tracing
   and measurement; and budget 100% with the profiler set up on the application's thread
   (OCCTRACE_ACHIEVED_BACKGROUND_SETUP=0), what the background setup saves.
2. Cost per measured launch in `all` mode: (wall_all - median wall_untraced) / launches measured,
   STEPS=5; and Nsight Compute's cost per kernel for the same program with only the occupancy
   metric (`ncu --clock-control none --metrics sm__warps_active.avg.pct_of_peak_sustained_active`):
   (wall_ncu - median wall_untraced) / kernels profiled. Both in the same run, and their ratio.
"""
import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

OCC_VARS = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "OCCTRACE_OUTPUT", "OCCTRACE_ACHIEVED",
            "OCCTRACE_SAMPLE_BUDGET", "OCCTRACE_SAMPLES", "OCCTRACE_ACHIEVED_BACKGROUND_SETUP")


def run(cmd, extra, db=None):
    env = {k: v for k, v in os.environ.items() if k not in OCC_VARS}
    env.update(extra)
    if db:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=500)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{extra}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    return wall, p.stdout


def meta(db):
    con = sqlite3.connect(db)
    rows = dict(con.execute("SELECT name, value FROM OCC_META WHERE name LIKE 'achieved%'"))
    con.close()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("train")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--skip-all", action="store_true", help="skip the all-mode / ncu part")
    ap.add_argument("--variants", help="comma-separated subset of: untraced (always), off, sample, "
                    "every, every-app-setup (default: all of them)")
    args = ap.parse_args()
    lib = os.path.abspath(args.lib)
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "t.db")
    cmd = [args.python, args.train]
    traced = {"CUDA_INJECTION64_PATH": lib, "OCCTRACE_OUTPUT": db}
    variants = {
        "untraced": {},
        "tracing only": dict(traced, OCCTRACE_ACHIEVED="off"),
        "sample (default budget)": dict(traced, OCCTRACE_ACHIEVED="sample"),
        "sample (budget 100%)": dict(traced, OCCTRACE_ACHIEVED="sample", OCCTRACE_SAMPLE_BUDGET="100%"),
        "sample (100%, app-thread setup)": dict(traced, OCCTRACE_ACHIEVED="sample",
                                                OCCTRACE_SAMPLE_BUDGET="100%",
                                                OCCTRACE_ACHIEVED_BACKGROUND_SETUP="0"),
    }
    if args.variants:
        short = {"off": "tracing only", "sample": "sample (default budget)",
                 "every": "sample (budget 100%)", "every-app-setup": "sample (100%, app-thread setup)"}
        asked = [v.strip() for v in args.variants.split(",") if v.strip()]
        unknown = [v for v in asked if v not in short]
        if unknown:
            ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(short)}")
        keep = {"untraced"} | {short[v] for v in asked}
        variants = {n: v for n, v in variants.items() if n in keep}
    names = list(variants)
    walls = {n: [] for n in names}
    coverage = {n: [] for n in names}
    setup_ms = {n: [] for n in names}
    print(f"== whole-process wall time, train_small.py STEPS={args.steps}, {args.rounds} interleaved rounds",
          flush=True)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            extra = dict(variants[n], STEPS=str(args.steps))
            wall, _ = run(cmd, extra, db if n != "untraced" else None)
            walls[n].append(wall)
            if n != "untraced":
                m = meta(db)
                if m.get("achieved_mode", "off") != "off":
                    coverage[n].append(f"{m.get('achieved_signatures_measured')}/{m.get('achieved_signatures_seen')}")
                    setup_ms[n].append(f"{int(m.get('achieved_setup_ns', 0)) / 1e6:.0f}"
                                       f"+{int(m.get('achieved_background_setup_ns', 0)) / 1e6:.0f}bg")
        print(f"  round {r + 1}: " + ", ".join(f"{n} {walls[n][-1]:.2f} s" for n in names), flush=True)
    base = statistics.median(walls["untraced"])
    for n in names:
        ratios = [w / b for w, b in zip(walls[n], walls["untraced"])]
        print(f"  {n:24} median {statistics.median(walls[n]):.2f} s, ratio (median of rounds) "
              f"{statistics.median(ratios):.3f}, ratio of medians {statistics.median(walls[n]) / base:.3f}"
              + (f", signatures measured/seen per run {' '.join(coverage[n])}" if coverage[n] else "")
              + (f", setup ms app+background per run {' '.join(setup_ms[n])}" if setup_ms[n] else ""))
    if args.skip_all:
        return 0

    print("== cost per measured launch: OCCTRACE_ACHIEVED=all vs ncu (occupancy metric only), STEPS=5",
          flush=True)
    small = {"STEPS": "5"}
    bare = statistics.median([run(cmd, small)[0] for _ in range(3)])
    wall_all, _ = run(cmd, dict(small, CUDA_INJECTION64_PATH=lib, OCCTRACE_OUTPUT=db, OCCTRACE_ACHIEVED="all"), db)
    m = meta(db)
    measured = int(m.get("achieved_launches_measured", "0"))
    per_launch_ms = (wall_all - bare) / max(measured, 1) * 1e3
    print(f"  untraced {bare:.2f} s, all-mode {wall_all:.2f} s, {measured} launches measured: "
          f"{per_launch_ms:.2f} ms per measured launch")
    ncu = shutil.which("ncu")
    if ncu:
        ncu_cmd = [ncu, "--clock-control", "none", "--metrics",
                   "sm__warps_active.avg.pct_of_peak_sustained_active", "--csv"] + cmd
        wall_ncu, out = run(ncu_cmd, small)
        kernels = sum(1 for line in out.splitlines()
                      if line.startswith('"') and "sm__warps_active" in line)
        per_kernel_ms = (wall_ncu - bare) / max(kernels, 1) * 1e3
        print(f"  ncu {wall_ncu:.2f} s, {kernels} kernels profiled: {per_kernel_ms:.2f} ms per kernel; "
              f"ncu / occtrace per launch: {per_kernel_ms / per_launch_ms:.2f}")
    else:
        print("  ncu not found: Nsight Compute comparison skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
