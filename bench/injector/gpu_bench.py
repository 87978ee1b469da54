#!/usr/bin/env python3
"""GPU benchmarks of libocctrace: tracing cost against untraced runs measured in the same run.

    gpu_bench.py --lib libocctrace.so --launch-overhead BIN --train train_small.py
                 [--rounds 6] [--steps 2000] [--launches 100000] [--achieved-sample] [--json OUT]

1. Empty-kernel launch throughput (launch_overhead): untraced vs traced (OCCTRACE_ACHIEVED=off),
   and with --achieved-sample also OCCTRACE_ACHIEVED=sample. Target: traced/untraced >= 0.80.
2. train_small.py ms/step: untraced, traced, torch.profiler with CUDA activity only (the baseline
   to beat) and optionally traced with OCCTRACE_ACHIEVED=sample. Target: traced/untraced <= 1.03.
3. With --resnet resnet50_step.py: the same variants on a real model's training step (ResNet-50,
   bf16, channels_last, batch 64). --warmup-s T makes both workloads warm up until T s after
   start, so the timed steps are the steady state of sample mode (every signature measured and
   the profiler parked); each sample-mode run reports how many signatures it measured.

Runs are interleaved (the variant order rotates every round) because the machine drifts between
runs; each figure is the median over rounds and each ratio the median of the per-round ratios
(the ratio of medians is printed too). Every process is a fresh one, so lazy module loading and
CUPTI start-up are outside the timed region (both programs time only after their warm-up).
"""
import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

OCC_VARS = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "OCCTRACE_OUTPUT", "OCCTRACE_FORCE", "OCCTRACE_MODE",
            "OCCTRACE_QUIET", "OCCTRACE_ACHIEVED")


BARE_CUPTI_LIB = None  # --bare-cupti: CUPTI's own floor (bench/injector/bare_cupti_injection.cc)
CUSTOM = {}  # --variant NAME=BASE:K=V,...: name -> (base variant, extra environment)
SAMPLING = {}  # variant -> per-run sampling facts of sample-mode traces


def parse_variant(text):
    """'light=traced:OCCTRACE_MODE=light' -> ('light', 'traced', {...}). An empty value (K=)
    leaves K unset: 'default=traced:OCCTRACE_ACHIEVED=' is occtrace in its default mode, as a
    user who sets nothing runs it, where the base `traced` sets OCCTRACE_ACHIEVED=off."""
    name, sep, rest = text.partition("=")
    base, _, settings = rest.partition(":")
    if not sep or not name or base not in ("untraced", "traced", "bare-cupti", "torchprof"):
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME=BASE[:K=V,...] with BASE one of "
                                         "untraced, traced, bare-cupti, torchprof")
    env = {}
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise argparse.ArgumentTypeError(f"--variant {text!r}: {item!r} is not K=V")
        env[key] = value
    return name, base, env


def env_for(variant, lib, db, extra):
    env = {k: v for k, v in os.environ.items() if k not in OCC_VARS}
    env.update(extra)
    if variant in CUSTOM:
        base, custom_env = CUSTOM[variant]
        env = env_for(base, lib, db, extra)
        env.update(custom_env)
        for key in [k for k, v in custom_env.items() if v == ""]:
            del env[key]
        return env
    if variant.startswith("traced"):
        env.update(CUDA_INJECTION64_PATH=lib, OCCTRACE_OUTPUT=db, OCCTRACE_FORCE="1",
                   OCCTRACE_QUIET="1",
                   OCCTRACE_ACHIEVED="sample" if variant == "traced+sample" else "off")
    elif variant == "bare-cupti":
        env.update(CUDA_INJECTION64_PATH=BARE_CUPTI_LIB)
    elif variant == "torchprof":
        env.update(TORCHPROF="1", CUDAONLY="1")
    return env


def pinned(cmd):
    """Pins the run to one CPU when BENCH_CPU is set (less scheduler noise between runs)."""
    cpu = os.environ.get("BENCH_CPU")
    return (["taskset", "-c", cpu] + cmd) if cpu else cmd


def run_once(cmd, variant, lib, tmp, extra, pattern):
    db = os.path.join(tmp, "bench.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    p = subprocess.run(pinned(cmd), env=env_for(variant, lib, db, extra), capture_output=True, text=True,
                       timeout=600)
    m = re.search(pattern, p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"{variant}: {' '.join(cmd)} failed (exit {p.returncode}): "
                           f"{(p.stderr.strip().splitlines() or [''])[-1]}")
    size = os.path.getsize(db) if os.path.exists(db) else 0
    facts = sampling_facts(db)
    if facts is not None:
        SAMPLING.setdefault(variant, []).append(facts)
    return float(m.group(1)), size


def write_json(path, results):
    """The run's results as JSON at `path` (--json), if given."""
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)


def trace_meta(db):
    """The OCC_META rows of trace `db` as a dict, or None when there is no readable trace."""
    if not os.path.exists(db) or os.path.getsize(db) == 0:
        return None
    try:
        con = sqlite3.connect(db)
        meta = dict(con.execute("SELECT name, value FROM OCC_META"))
        con.close()
    except sqlite3.Error:
        return None
    return meta


SAMPLING_FACTS = ("achieved_signatures_measured", "achieved_signatures_seen", "achieved_skipped_for_budget",
                  "achieved_profiling_ns", "achieved_parks", "achieved_unparks", "achieved_quiet_parks",
                  "achieved_listens", "achieved_busy_waits", "achieved_park_deinit",
                  "achieved_profiler_session_ends", "achieved_status", "achieved_phase_ms", "achieved_setup_ns",
                  "achieved_background_setup_ns", "launch_count", "stale_forced_flushes",
                  "incomplete_kernel_records")


def last_measured_ns(db):
    """When trace `db`'s last measured launch was made (CUPTI's clock, ns), or None.

    A full trace stores a replayed launch with start 0, so the next launch with a start stands in
    for it; a light trace has every launch call's time."""
    try:
        con = sqlite3.connect(db)
        (corr,) = con.execute("SELECT max(correlationId) FROM OCC_ACHIEVED WHERE status = 'measured'").fetchone()
        if corr is None:
            return None
        (ns,) = con.execute("SELECT min(apiStart) FROM OCC_LAUNCH_CALL WHERE correlationId >= ?", (corr,)).fetchone()
        if ns is None:
            (ns,) = con.execute("SELECT min(start) FROM OCC_LAUNCH WHERE correlationId >= ? AND start > 0",
                                (corr,)).fetchone()
        con.close()
        return ns
    except sqlite3.Error:
        return None


def sampling_facts(db):
    """A sample-mode trace's sampling facts (signatures measured, profiling time, parks), else None."""
    meta = trace_meta(db)
    if meta is None or meta.get("achieved_mode") != "sample":
        return None
    facts = {k: meta.get(k) for k in SAMPLING_FACTS}
    facts["last_measured_ns"] = last_measured_ns(db)
    return facts


LIGHT_FACTS = ("light_windows", "light_windows_for_new_configs", "light_windows_for_under_timed",
               "light_records_on_pct", "light_records_switch_off_ms_total", "light_timed_dropped_at_switch",
               "light_hook_launches", "light_hook_launches_outside", "light_hook_callback_switches",
               "light_hook_rescans", "light_hook_scan_ms_total", "light_hook_callbacks_on_ms", "light_detaches",
               "light_reattach_ms",
               "light_finalize_ms", "light_detach_wait_ms", "light_reattach_refusals",
               "light_detach_contexts_learned_equal", "light_detach_streams_learned_equal",
               "light_detach_untranslated_context_launches", "light_detach_untranslated_stream_launches",
               "light_detach_graphs_read_by_hook", "launch_count")


def light_facts(db):
    """A light trace's facts about its timing windows and launch hook (OCC_META), else None."""
    meta = trace_meta(db)
    if meta is None or meta.get("trace_mode") != "light":
        return None
    return {k: meta[k] for k in LIGHT_FACTS if k in meta}


PM_FACTS = ("pm_status", "pm_interval_ns", "pm_devices_sampled", "pm_samples", "pm_samples_lost", "pm_overflows",
            "pm_setup_ms", "pm_decode_ms", "pm_writer_ms", "pm_budget", "pm_pauses", "pm_sampling_ms",
            "pm_run_ms", "launch_count")


def pm_facts(db):
    """A PM-sampling trace's facts (OCC_META), else None: whether the process sampled at all
    (another process holding the counters stops it, CUPTI_ERROR_HARDWARE_BUSY), so that a cost
    is not read as PM sampling's when it never ran."""
    meta = trace_meta(db)
    if meta is None or meta.get("achieved_mode") != "pm":
        return None
    return {k: meta[k] for k in PM_FACTS if k in meta}


def format_light(runs):
    return "; ".join(", ".join(f"{k.removeprefix('light_')} {v}" for k, v in r.items()) for r in runs)


def format_sampling(runs):
    return "; ".join(f"{r['achieved_signatures_measured']}/{r['achieved_signatures_seen']} signatures, "
                     f"{int(r['achieved_profiling_ns'] or 0) / 1e6:.0f} ms profiling, "
                     f"skipped for budget {r['achieved_skipped_for_budget']}, parks {r['achieved_parks']}, "
                     f"busy waits {r.get('achieved_busy_waits')}, profiler sessions ended "
                     f"{r.get('achieved_profiler_session_ends')}, status {r.get('achieved_status')}, "
                     f"phases (ms) {r.get('achieved_phase_ms')}, setup on program threads "
                     f"{int(r.get('achieved_setup_ns') or 0) / 1e6:.0f} ms, on setup threads "
                     f"{int(r.get('achieved_background_setup_ns') or 0) / 1e6:.0f} ms"
                     + (f", last measurement {r['last_measured_s_before_turns']:.1f} s before the timed turns"
                        if r.get("last_measured_s_before_turns") is not None else "")
                     for r in runs)


def interleaved(name, cmd, variants, rounds, lib, extra, pattern, tmp):
    values = {v: [] for v in variants}
    sizes = {v: [] for v in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for v in order:
            value, size = run_once(cmd, v, lib, tmp, extra, pattern)
            values[v].append(value)
            sizes[v].append(size)
        print(f"  {name} round {r + 1}/{rounds}: " +
              ", ".join(f"{v} {values[v][-1]:.4g}" for v in variants), flush=True)
    return values, sizes


def summarize(values, base, higher_is_better):
    """Per variant: median, min, max, and ratio to base (median of per-round ratios)."""
    out = {}
    for v, xs in values.items():
        per_round = [x / b for x, b in zip(xs, values[base])]
        out[v] = {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": xs,
                  "ratio_median_of_rounds": statistics.median(per_round),
                  "ratio_of_medians": statistics.median(xs) / statistics.median(values[base]),
                  # Best run against best run: the least noise-sensitive figure on a VM whose
                  # untraced runs alone spread by +-20 % (docs/performance.md).
                  "ratio_of_mins": min(xs) / min(values[base])}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--launch-overhead", required=True)
    ap.add_argument("--train", required=True, help="path of tests/gpu/workloads/train_small.py")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--steps", type=int, default=2000,
                    help="timed steps per run: 300-step runs spread +-18 %% between processes on the test VMs, 2000-step runs +-6 %%")
    ap.add_argument("--launches", type=int, default=100000)
    ap.add_argument("--achieved-sample", action="store_true")
    ap.add_argument("--no-torchprof", action="store_true", help="leave out the torch.profiler variant")
    ap.add_argument("--bare-cupti", help="bare_cupti_injection.so: adds CUPTI's own cost as a variant")
    ap.add_argument("--skip-bare-cupti", action="store_true", help="leave out the --bare-cupti variant")
    ap.add_argument("--skip-launch", action="store_true", help="only the train_small.py part")
    ap.add_argument("--skip-train", action="store_true", help="only the launch-throughput part")
    ap.add_argument("--train-rounds", type=int, help="rounds of the train_small.py part (default --rounds)")
    ap.add_argument("--variant", action="append", default=[], type=parse_variant,
                    help="extra variant NAME=BASE[:K=V,...], e.g. pinned=bare-cupti:BARE_CUPTI_HOST_PINNED=1; "
                         "runs in both parts, interleaved with the others")
    ap.add_argument("--resnet", help="path of tests/gpu/workloads/resnet50_step.py: adds the real-model part")
    ap.add_argument("--resnet-steps", type=int, default=150)
    ap.add_argument("--resnet-rounds", type=int, help="rounds of the ResNet-50 part (default --rounds)")
    ap.add_argument("--warmup-s", type=float, default=0.0,
                    help="warm up until this many seconds after start (steady state of sample mode)")
    ap.add_argument("--skip-train-small", action="store_true", help="leave out the train_small.py part")
    ap.add_argument("--json")
    args = ap.parse_args()
    lib = os.path.abspath(args.lib)
    global BARE_CUPTI_LIB
    bare = []
    if args.bare_cupti and not args.skip_bare_cupti:
        BARE_CUPTI_LIB = os.path.abspath(args.bare_cupti)
        bare = ["bare-cupti"]
    for name, base, env in args.variant:
        if base == "bare-cupti" and not args.bare_cupti:
            ap.error(f"--variant {name}: bare-cupti variants need --bare-cupti")
        CUSTOM[name] = (base, env)
    custom = list(CUSTOM)
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "rounds": args.rounds,
               "variants": {name: {"base": base, "env": env} for name, (base, env) in CUSTOM.items()}}

    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_launch:
            variants = (["untraced"] + bare + ["traced"] + (["traced+sample"] if args.achieved_sample else [])
                        + custom)
            print(f"== empty-kernel launch throughput: {args.launches} launches x 5 rounds per run, "
                  f"{args.rounds} interleaved runs per variant", flush=True)
            vals, sizes = interleaved("launch", [args.launch_overhead, str(args.launches), "5"], variants,
                                      args.rounds, lib, {}, r"us/launch ([0-9.]+)", tmp)
            s = summarize(vals, "untraced", higher_is_better=False)
            launches_traced = args.launches * 6
            for v in variants:
                # Throughput ratio traced/untraced = (us/launch untraced) / (us/launch traced).
                s[v]["throughput_ratio"] = 1 / s[v]["ratio_median_of_rounds"]
                s[v]["trace_bytes_per_launch"] = statistics.median(sizes[v]) / launches_traced
            results["launch"] = s
            for v in variants:
                print(f"  {v:14} {s[v]['median']:.3f} us/launch (min {s[v]['min']:.3f}, max {s[v]['max']:.3f})"
                      f"  throughput vs untraced {s[v]['throughput_ratio']:.3f}"
                      + (f"  trace {s[v]['trace_bytes_per_launch']:.1f} B/launch" if v.startswith("traced") else ""))

        if not args.skip_train:
            variants = (["untraced"] + bare + ["traced"] + ([] if args.no_torchprof else ["torchprof"])
                        + (["traced+sample"] if args.achieved_sample else []) + custom)
            parts = []
            if not args.skip_train_small:
                parts.append(("train_small", "train_small.py", args.train, args.steps,
                              args.train_rounds or args.rounds))
            if args.resnet:
                parts.append(("resnet50", "resnet50_step.py", args.resnet, args.resnet_steps,
                              args.resnet_rounds or args.rounds))
            for key, title, script, steps, rounds in parts:
                SAMPLING.clear()
                print(f"== {title}: STEPS={steps}, WARMUP_S={args.warmup_s:g}, {rounds} interleaved runs per "
                      f"variant (torchprof = torch.profiler CUDA activity only)", flush=True)
                vals, sizes = interleaved(key, [args.python, script], variants, rounds, lib,
                                          {"STEPS": str(steps), "WARMUP_S": str(args.warmup_s)},
                                          r"ms/step ([0-9.]+)", tmp)
                s = summarize(vals, "untraced", higher_is_better=False)
                results[key] = s
                results[key + "_sampling"] = dict(SAMPLING)
                for v in variants:
                    print(f"  {v:14} {s[v]['median']:.3f} ms/step (min {s[v]['min']:.3f}, max {s[v]['max']:.3f})"
                          f"  step time vs untraced {s[v]['ratio_median_of_rounds']:.3f}"
                          f" (ratio of medians {s[v]['ratio_of_medians']:.3f}, of minima {s[v]['ratio_of_mins']:.3f})")
                for v, runs in SAMPLING.items():
                    print(f"  {v} sampling per run: " + format_sampling(runs))
                # Every other tracing variant against occtrace's `off` mode of the same round:
                # the default mode's steady state is meant to cost what `off` costs.
                for v in [x for x in variants if x not in ("untraced", "traced", "torchprof", "bare-cupti")]:
                    per_round = [a / b for a, b in zip(vals[v], vals["traced"])]
                    print(f"  {key}: {v} vs off step time, median of per-round ratios "
                          f"{statistics.median(per_round):.3f} (rounds: "
                          + ", ".join(f"{x:.3f}" for x in per_round) + ")")
                if "traced+sample" in s:
                    off = s["traced"]["ratio_median_of_rounds"]
                    print(f"  {key}: sample vs off step time {s['traced+sample']['ratio_median_of_rounds'] / off:.3f}"
                          f" (target <= 1.02)")

    print("== summary")
    launch, train = results.get("launch"), results.get("train_small")
    if launch:
        launch_ratio = launch["traced"]["throughput_ratio"]
        print(f"  launch throughput traced/untraced {launch_ratio:.3f} (target >= 0.80): "
              f"{'MET' if launch_ratio >= 0.80 else 'MISSED'}")
    if train:
        step_ratio = train["traced"]["ratio_median_of_rounds"]
        prof_ratio = train.get("torchprof", {}).get("ratio_median_of_rounds", float("nan"))
        print(f"  train_small step time traced/untraced {step_ratio:.3f} (target <= 1.03): "
              f"{'MET' if step_ratio <= 1.03 else 'MISSED'}; torch.profiler CUDA-only {prof_ratio:.3f}")
    if bare:
        parts = []
        if train:
            bare_step = train["bare-cupti"]["ratio_median_of_rounds"]
            parts.append(f"step time {bare_step:.3f}; occtrace vs bare CUPTI step {step_ratio / bare_step:.3f}")
        if launch:
            bare_launch = launch["bare-cupti"]["throughput_ratio"]
            parts.append(f"launch throughput {bare_launch:.3f}, occtrace vs bare CUPTI launch "
                         f"{launch_ratio / bare_launch:.3f}")
        print("  bare CUPTI (records discarded): " + "; ".join(parts))
    for v in (["traced+sample"] if args.achieved_sample else []) + custom:
        parts = []
        if train:
            parts.append(f"step time {train[v]['ratio_median_of_rounds']:.3f}")
        if launch:
            parts.append(f"launch throughput {launch[v]['throughput_ratio']:.3f}")
        print(f"  {v}: " + ", ".join(parts))
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
