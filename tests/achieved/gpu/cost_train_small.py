#!/usr/bin/env python3
"""Cost of achieved-occupancy measurement on tests/gpu/workloads/train_small.py.

usage: cost_train_small.py LIBRARY.so WORKLOAD.py OUTDIR [ROUNDS]

LIBRARY.so: libocctrace.so (session facts read from the trace's OCC_META) or the test harness
libocc_achieved_harness.so (facts from its CSV).

1. sample mode (default policy) vs untraced, STEPS=300 (+ the workload's 20 warm-up steps),
   interleaved ROUNDS times; whole-process wall time, medians.
2. cost per measured launch in `all` mode: STEPS=5 runs, (wall_all - median wall_bare) /
   launches measured; also the profiler's own in-callback time per launch.
3. Nsight Compute's cost per kernel for the same launches (only the occupancy metric,
   --clock-control none): (wall_ncu - median wall_bare) / kernels profiled.
Prints a summary and writes OUTDIR/cost.txt.
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import time


def run(cmd, env_extra, log):
    env = dict(os.environ)
    env.update(env_extra)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=400)
    wall = time.perf_counter() - t0
    with open(log, "a") as f:
        f.write(f"$ {env_extra} {' '.join(cmd)}\n{p.stdout}\nexit {p.returncode} wall {wall:.3f}s\n")
    if p.returncode != 0:
        print(p.stdout[-3000:])
        raise SystemExit(f"command failed: {cmd} {env_extra}")
    ms = None
    for line in p.stdout.splitlines():
        if line.startswith("steps/s"):
            ms = float(line.split()[3])
    return wall, ms, p.stdout


def meta(path):
    """Session facts: OCC_META of a trace file (.db), or the '# k=v' lines of a harness CSV."""
    if path.endswith(".db"):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return dict(con.execute("SELECT name, value FROM OCC_META").fetchall())
        finally:
            con.close()
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("# "):
                k, _, v = line[2:].strip().partition("=")
                out[k] = v
    return out


def output_env(library, path_base):
    """Where the run's session facts go: a trace file for libocctrace.so, a CSV for the harness."""
    if os.path.basename(library).startswith("libocctrace"):
        path = path_base + ".db"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return path, {"OCCTRACE_OUTPUT": path, "OCCTRACE_FORCE": "1"}
    path = path_base + ".csv"
    return path, {"OCC_HARNESS_CSV": path}


def main():
    harness, workload, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    steps = os.environ.get("COST_STEPS", "300")
    tag = os.environ.get("COST_TAG", "")
    log = os.path.join(outdir, f"cost_runs{tag}.log")
    py = [sys.executable, workload]
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    variants = {
        "untraced": {},
        # Tracing alone, for the split between tracing and achieved occupancy.
        "traced_only": {"CUDA_INJECTION64_PATH": harness, "OCCTRACE_ACHIEVED": "off"},
        "sample": {"CUDA_INJECTION64_PATH": harness, "OCCTRACE_ACHIEVED": "sample"},
        # Budget lifted: every signature is measured once.
        "sample_every_signature": {"CUDA_INJECTION64_PATH": harness, "OCCTRACE_ACHIEVED": "sample",
                                   "OCCTRACE_SAMPLE_BUDGET": "100%", "OCCTRACE_ACHIEVED_PARK_DEINIT": "0"},
        # The same, parking also ending CUPTI's profiler session.
        "sample_every_sig_deinit": {"CUDA_INJECTION64_PATH": harness, "OCCTRACE_ACHIEVED": "sample",
                                    "OCCTRACE_SAMPLE_BUDGET": "100%", "OCCTRACE_ACHIEVED_PARK_DEINIT": "1"},
    }
    if "harness" in os.path.basename(harness):  # the harness traces nothing: no tracing-only run
        del variants["traced_only"]
    walls = {k: [] for k in variants}
    steps_ms = {k: [] for k in variants}
    metas = {}
    names = list(variants)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:  # rotate: the machine drifts
            extra = variants[name]
            env = dict(extra, STEPS=steps)
            if extra:
                facts_path, facts_env = output_env(harness, os.path.join(outdir, f"{name}{tag}_{r}"))
                env.update(facts_env)
            w, ms, _ = run(py, env, log)
            walls[name].append(w)
            steps_ms[name].append(ms)
            if extra:
                metas[name] = meta(facts_path)
    base = statistics.median(walls["untraced"])
    for name in variants:
        med = statistics.median(walls[name])
        say(f"{name:24s} wall s {[round(x, 3) for x in walls[name]]} median {med:.3f} "
            f"(x{med / base:.3f}); ms/step median {statistics.median(steps_ms[name]):.3f}")
    for name, m in metas.items():
        say(f"{name} meta (last run): " + ", ".join(f"{k}={m.get(k)}" for k in (
            "achieved_status", "achieved_launches_measured", "achieved_signatures_measured",
            "achieved_signatures_seen", "achieved_launches_not_measured", "achieved_profiling_ns",
            "achieved_setup_ns", "achieved_budget_pauses", "achieved_skipped_for_budget",
            "achieved_parks", "achieved_unparks")))

    say(f"STEPS={steps} (+20 warm-up), {rounds} interleaved rounds")
    if os.environ.get("COST_SKIP_ALL") == "1":
        with open(os.path.join(outdir, f"cost{tag}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return
    b5 = []
    w, _, _ = run(py, {"STEPS": "5"}, log); b5.append(w)
    facts_all, facts_env = output_env(harness, os.path.join(outdir, "all"))
    w_all, _, _ = run(py, {"STEPS": "5", "CUDA_INJECTION64_PATH": harness,
                           "OCCTRACE_ACHIEVED": "all", **facts_env}, log)
    w, _, _ = run(py, {"STEPS": "5"}, log); b5.append(w)
    ma = meta(facts_all)
    n_all = int(ma["achieved_launches_measured"]) + int(ma["achieved_launches_not_measured"])
    per_launch = (w_all - statistics.median(b5)) / max(1, n_all)
    say(f"all mode STEPS=5: untraced {[round(x, 3) for x in b5]} s, all {w_all:.3f} s, "
        f"launches profiled {n_all} (measured {ma['achieved_launches_measured']}); "
        f"cost per profiled launch {per_launch * 1e3:.3f} ms (wall); in-callback "
        f"{int(ma['achieved_profiling_ns']) / max(1, n_all) / 1e6:.3f} ms")

    ncu_csv = os.path.join(outdir, "ncu_train.csv")
    with open(ncu_csv, "w") as f:
        t0 = time.perf_counter()
        p = subprocess.run(["ncu", "--clock-control", "none", "--csv", "--metrics",
                            "sm__warps_active.avg.pct_of_peak_sustained_active"] + py,
                           env=dict(os.environ, STEPS="5"), stdout=f, stderr=subprocess.STDOUT,
                           timeout=420)
        w_ncu = time.perf_counter() - t0
    with open(ncu_csv) as f:
        n_ncu = sum(1 for l in f if l.startswith('"') and "sm__warps_active" in l)
    ncu_per = (w_ncu - statistics.median(b5)) / max(1, n_ncu)
    say(f"ncu STEPS=5: exit {p.returncode}, wall {w_ncu:.3f} s, kernels profiled {n_ncu}; "
        f"cost per kernel {ncu_per * 1e3:.3f} ms")
    say(f"ratio ncu/occtrace per launch: {ncu_per / per_launch:.2f}")
    with open(os.path.join(outdir, f"cost{tag}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
