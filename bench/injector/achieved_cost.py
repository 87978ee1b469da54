#!/usr/bin/env python3
"""Cost of achieved-occupancy measurement on train_small.py (docs/performance.md).

usage: achieved_cost.py LIBRARY.so TRAIN_SMALL.py [--rounds 5] [--steps 300] [--variants ...]
                        [--skip-all] [--out FILE]

LIBRARY.so: libocctrace.so (session facts from the trace's OCC_META) or the test harness
libocc_achieved_harness.so (facts from its CSV; it traces nothing, so no tracing-only variant).

1. Whole-process wall time of `python train_small.py` (STEPS plus its 20 warm-up steps,
   interpreter start and lazy module loading included), interleaved rounds whose order rotates
   (the machine drifts), medians: untraced vs the variants below, with the signatures measured /
   seen and the profiler set-up time of each run. Target: sample <= 1.10 x untraced with every
   signature measured.
     off              tracing alone (OCCTRACE_ACHIEVED=off): the split between tracing and measurement
     sample           OCCTRACE_ACHIEVED=sample, default budget (5 % of wall time)
     every            budget 100 %: every signature measured once
     every-deinit     the same, parking also ends CUPTI's profiler session
     every-app-setup  the same, profiler set up on the application's thread
                      (OCCTRACE_ACHIEVED_BACKGROUND_SETUP=0): what the background set-up saves
2. Cost per measured launch in `all` mode: (wall_all - median wall_untraced) / launches measured,
   STEPS=5, and the profiler's own time in callbacks per launch; Nsight Compute's cost per kernel
   for the same program with only the occupancy metric (`ncu --clock-control none --metrics
   sm__warps_active.avg.pct_of_peak_sustained_active`): (wall_ncu - median wall_untraced) /
   kernels profiled. Both in the same run, and their ratio.
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

OCC_VARS = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "OCCTRACE_OUTPUT", "OCCTRACE_FORCE", "OCCTRACE_ACHIEVED",
            "OCCTRACE_SAMPLE_BUDGET", "OCCTRACE_SAMPLES", "OCCTRACE_ACHIEVED_BACKGROUND_SETUP",
            "OCCTRACE_ACHIEVED_PARK_DEINIT", "OCC_HARNESS_CSV")

EVERY = {"OCCTRACE_ACHIEVED": "sample", "OCCTRACE_SAMPLE_BUDGET": "100%"}
VARIANTS = {  # name: (label, environment on top of the library's)
    "off": ("tracing only", {"OCCTRACE_ACHIEVED": "off"}),
    "sample": ("sample (default budget)", {"OCCTRACE_ACHIEVED": "sample"}),
    "every": ("sample (budget 100%)", dict(EVERY, OCCTRACE_ACHIEVED_PARK_DEINIT="0")),
    "every-deinit": ("sample (100%, park deinit)", dict(EVERY, OCCTRACE_ACHIEVED_PARK_DEINIT="1")),
    "every-app-setup": ("sample (100%, app-thread setup)", dict(EVERY, OCCTRACE_ACHIEVED_BACKGROUND_SETUP="0")),
}
DEFAULT_VARIANTS = "off,sample,every,every-app-setup"


class Library:
    """libocctrace.so writes a trace; the harness writes a CSV with '# key=value' facts."""

    def __init__(self, path, tmp):
        self.path = os.path.abspath(path)
        self.is_occtrace = os.path.basename(path).startswith("libocctrace")
        self.facts = os.path.join(tmp, "facts.db" if self.is_occtrace else "facts.csv")

    def env(self):
        out = {"CUDA_INJECTION64_PATH": self.path}
        if self.is_occtrace:
            out.update(OCCTRACE_OUTPUT=self.facts, OCCTRACE_FORCE="1")
        else:
            out["OCC_HARNESS_CSV"] = self.facts
        return out

    def clear(self):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.facts + suffix):
                os.remove(self.facts + suffix)

    def meta(self):
        if self.is_occtrace:
            con = sqlite3.connect(f"file:{self.facts}?mode=ro", uri=True)
            try:
                return dict(con.execute("SELECT name, value FROM OCC_META WHERE name LIKE 'achieved%'"))
            finally:
                con.close()
        out = {}
        with open(self.facts) as f:
            for line in f:
                if line.startswith("# "):
                    key, _, value = line[2:].strip().partition("=")
                    out[key] = value
        return out


def run(cmd, extra, library=None):
    env = {k: v for k, v in os.environ.items() if k not in OCC_VARS}
    env.update(extra)
    if library:
        library.clear()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=500)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{extra}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    return wall, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib")
    ap.add_argument("train")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--skip-all", action="store_true", help="skip the all-mode / ncu part")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS,
                    help=f"comma-separated subset of {', '.join(VARIANTS)} (untraced always runs; "
                         f"default {DEFAULT_VARIANTS})")
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args()
    asked = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in asked if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    tmp = tempfile.mkdtemp()
    library = Library(args.lib, tmp)
    if not library.is_occtrace and "off" in asked:
        asked.remove("off")  # the harness traces nothing
    cmd = [args.python, args.train]
    lines = []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    variants = {"untraced": {}}
    for v in asked:
        label, env = VARIANTS[v]
        variants[label] = dict(library.env(), **env)
    names = list(variants)
    walls = {n: [] for n in names}
    coverage = {n: [] for n in names}
    setup_ms = {n: [] for n in names}
    say(f"== whole-process wall time, train_small.py STEPS={args.steps} (+20 warm-up), "
        f"{args.rounds} interleaved rounds, {os.path.basename(library.path)}")
    for r in range(args.rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            traced = n != "untraced"
            wall, _ = run(cmd, dict(variants[n], STEPS=str(args.steps)), library if traced else None)
            walls[n].append(wall)
            if traced:
                m = library.meta()
                if m.get("achieved_mode", "off") != "off":
                    coverage[n].append(f"{m.get('achieved_signatures_measured')}/{m.get('achieved_signatures_seen')}")
                    setup_ms[n].append(f"{int(m.get('achieved_setup_ns', 0) or 0) / 1e6:.0f}"
                                       f"+{int(m.get('achieved_background_setup_ns', 0) or 0) / 1e6:.0f}bg")
        print(f"  round {r + 1}: " + ", ".join(f"{n} {walls[n][-1]:.2f} s" for n in names), flush=True)
    base = statistics.median(walls["untraced"])
    for n in names:
        ratios = [w / b for w, b in zip(walls[n], walls["untraced"])]
        say(f"  {n:32} median {statistics.median(walls[n]):.2f} s, ratio (median of rounds) "
            f"{statistics.median(ratios):.3f}, ratio of medians {statistics.median(walls[n]) / base:.3f}"
            + (f", signatures measured/seen per run {' '.join(coverage[n])}" if coverage[n] else "")
            + (f", setup ms app+background per run {' '.join(setup_ms[n])}" if setup_ms[n] else ""))

    if not args.skip_all:
        say("== cost per measured launch: OCCTRACE_ACHIEVED=all vs ncu (occupancy metric only), STEPS=5")
        small = {"STEPS": "5"}
        bare = statistics.median([run(cmd, small)[0] for _ in range(3)])
        wall_all, _ = run(cmd, dict(small, **library.env(), OCCTRACE_ACHIEVED="all"), library)
        m = library.meta()
        measured = int(m.get("achieved_launches_measured", "0"))
        profiled = measured + int(m.get("achieved_launches_not_measured", "0"))
        per_launch_ms = (wall_all - bare) / max(measured, 1) * 1e3
        in_callbacks_ms = int(m.get("achieved_profiling_ns", "0")) / max(profiled, 1) / 1e6
        say(f"  untraced {bare:.2f} s, all-mode {wall_all:.2f} s, {measured} launches measured: "
            f"{per_launch_ms:.2f} ms per measured launch (in callbacks {in_callbacks_ms:.2f} ms)")
        ncu = shutil.which("ncu")
        if ncu:
            ncu_cmd = [ncu, "--clock-control", "none", "--metrics",
                       "sm__warps_active.avg.pct_of_peak_sustained_active", "--csv"] + cmd
            wall_ncu, out = run(ncu_cmd, small)
            kernels = sum(1 for line in out.splitlines() if line.startswith('"') and "sm__warps_active" in line)
            per_kernel_ms = (wall_ncu - bare) / max(kernels, 1) * 1e3
            say(f"  ncu {wall_ncu:.2f} s, {kernels} kernels profiled: {per_kernel_ms:.2f} ms per kernel; "
                f"ncu / occtrace per launch: {per_kernel_ms / per_launch_ms:.2f}")
        else:
            say("  ncu not found: Nsight Compute comparison skipped")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
