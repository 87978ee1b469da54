#!/usr/bin/env python3
"""PM sampling's achieved occupancy against Nsight Compute's, and achieved-occupancy coverage,
per kernel configuration, from occ-report's JSON (#27 items 3 and 4). Runs on a CPU.

  pm_accuracy.py accuracy REPORT.json NCU.csv [--min-samples 0] [--tolerance 3] [--json OUT]
  pm_accuracy.py coverage REPORT.json [REPORT.json ...]
  pm_accuracy.py bound REPORT.json [--sms 132] [--max-warps 64]
  pm_accuracy.py coverage-row REPORT.json TRACE.db --label L [--wall-s S]

REPORT.json: `occ-report TRACE --format json --top 0` of a trace recorded with
OCCTRACE_ACHIEVED=pm (accuracy), or of any trace (coverage).
NCU.csv: `ncu --csv --cache-control none --clock-control none --print-kernel-base mangled
--metrics sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.sum PROGRAM` on
the same program (docs/accuracy.md). Its launches are grouped by (kernel, grid, block) and each
configuration's value is Σ(pct × active cycles) ÷ Σ active cycles over its launches -- the same
ratio of sums PM attribution estimates over its launches -- or the plain mean of the launches
when the CSV lacks sm__cycles_active.sum.

accuracy prints one row per configuration present in both (PM figure and its standard error,
whether mixed samples are in it, its clean, inside and mixed samples, replay's figure if any,
ncu's, the difference), then, over the configurations with a PM figure (and >= --min-samples
clean samples, 0 by default: occ-report shows a figure by its standard error), the share within
--tolerance points (target: 90 %), the distribution of the differences and the worst cases: for
all of them, and apart for figures from clean samples only and with mixed samples in them.
Exit 0 when the target is met over all of them, 1 when not, 2 on bad input.

coverage prints, per report, the share of GPU time in configurations with an achieved figure,
by source (PM samples, and of them with mixed samples in; replay), and the GPU time PM samples
touched without a figure, by the reason occ-report gives (target with PM: >= 95 %).

bound checks PM figures against arithmetic that needs no other tool: a grid of at most one block
per SM (blocks <= SMs) puts at most one block on each busy SM, so its achieved occupancy is at
most warps per block / max warps per SM, and equal to it while all of a block's warps live
equally long. Prints each such configuration's bound, PM figure and difference.
"""
import argparse
import csv
import json
import math
import re
import statistics
import sys

METRIC = "sm__warps_active.avg.pct_of_peak_sustained_active"
CYCLES = "sm__cycles_active.sum"


def die(msg):
    print(f"pm_accuracy: {msg}", file=sys.stderr)
    sys.exit(2)


def load_report(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")


def groups(report):
    return list(report.get("groups", [])) + list(report.get("unjudged", []))


def dims(text):
    """ncu's "(256, 1, 1)" -> (256, 1, 1)."""
    values = [int(v) for v in re.findall(r"\d+", text or "")]
    if not values:
        return None
    return tuple((values + [1, 1, 1])[:3])


def read_ncu(path):
    try:
        with open(path) as f:
            lines = [line for line in f if line.startswith('"')]
    except OSError as e:
        die(f"{path}: {e}")
    if not lines:
        die(f"{path}: no CSV rows")
    launches = {}  # ID -> {name, grid, block, pct, cycles}
    for row in csv.DictReader(lines):
        metric = row.get("Metric Name")
        if metric not in (METRIC, CYCLES):
            continue
        launch = launches.setdefault(row["ID"], {
            "name": row["Kernel Name"], "grid": dims(row.get("Grid Size")), "block": dims(row.get("Block Size")),
            "pct": None, "cycles": None})
        value = float(row["Metric Value"].replace(",", ""))
        launch["pct" if metric == METRIC else "cycles"] = value
    by_config, by_base, names_by_base = {}, {}, {}
    for launch in launches.values():
        if launch["pct"] is None or launch["grid"] is None or launch["block"] is None:
            continue
        key = (launch["name"], launch["grid"], launch["block"])
        by_config.setdefault(key, []).append(launch)
        # ncu demangles without --print-kernel-base mangled: `saxpy[v1,...](float, Array<...>)`
        # for a Numba kernel. Its base name also keys it (occ-report's short_name), but only
        # where no other kernel of the program shares that base name and configuration
        # (PyTorch's vectorized_elementwise_kernel<...> is one name for many functions).
        base_key = (base_name(launch["name"]), launch["grid"], launch["block"])
        if base_key[0] != launch["name"]:
            names_by_base.setdefault(base_key, set()).add(launch["name"])
            by_base.setdefault(base_key, []).append(launch)
    for key, rows in by_base.items():
        if len(names_by_base[key]) == 1 and key not in by_config:
            by_config[key] = rows
    out = {}
    for key, rows in by_config.items():
        if all(r["cycles"] for r in rows):
            total = sum(r["cycles"] for r in rows)
            out[key] = (sum(r["pct"] * r["cycles"] for r in rows) / total, len(rows))
        else:
            out[key] = (statistics.fmean(r["pct"] for r in rows), len(rows))
    return out


def base_name(name):
    """The function's own name: no namespace, template or ABI tags, no parameters."""
    depth, cut = 0, len(name)
    for i, c in enumerate(name):
        if c in "[(<" and depth == 0:
            cut = i
            break
    return name[:cut].split("::")[-1]


def group_keys(g):
    grid = (g.get("grid_x", 0), g.get("grid_y", 0), g.get("grid_z", 0))
    block = (g.get("block_x", 0), g.get("block_y", 0), g.get("block_z", 0))
    names = {g.get("mangled_name"), g.get("name"), g.get("short_name")} - {None, ""}
    return [(n, grid, block) for n in names]


def accuracy(args):
    report = load_report(args.report)
    ncu = read_ncu(args.ncu)
    rows = []
    report_groups = groups(report)
    short_count = {}
    for g in report_groups:
        k = (g.get("short_name"), *group_keys(g)[0][1:]) if group_keys(g) else None
        short_count[k] = short_count.get(k, 0) + 1
    for g in report_groups:
        keys = [k for k in group_keys(g) if k[0] != g.get("short_name") or short_count.get(k, 0) == 1]
        match = next((ncu[k] for k in keys if k in ncu), None)
        pm = g.get("achieved", {}).get("pm")
        if match is None or not pm:
            continue
        replay = g["achieved"].get("mean_pct") if g["achieved"].get("source") == "replay" else None
        rows.append({
            "name": g.get("short_name") or g.get("name"),
            "grid": "x".join(str(g[f"grid_{a}"]) for a in "xyz"),
            "block": "x".join(str(g[f"block_{a}"]) for a in "xyz"),
            "launches": int(g.get("launches", 0)), "total_ns": int(g.get("total_ns", 0)),
            "clean": pm.get("clean_samples", 0), "inside": pm.get("inside_samples", 0),
            "mixed": pm.get("mixed_samples", 0), "pm": pm.get("achieved_pct", -1),
            "pm_inside": pm.get("inside_pct", -1), "replay": replay, "ncu": match[0], "ncu_launches": match[1],
            "se": pm.get("standard_error", -1), "from_mixed": bool(pm.get("from_mixed", False)),
            "status": pm.get("status", ""),
        })
    if not rows:
        die("no configuration is in both the report (with PM samples) and the ncu CSV")
    rows.sort(key=lambda r: -r["total_ns"])
    print(f"{'kernel':40} {'grid':>12} {'block':>9} {'clean':>6} {'inside':>6} {'mixed':>6} "
          f"{'PM %':>7} {'±se':>5} {'inside%':>7} {'replay%':>7} {'ncu %':>7} {'diff':>6}")
    for r in rows:
        r["diff"] = r["pm"] - r["ncu"] if r["pm"] >= 0 else None
        r["diff_inside"] = r["pm_inside"] - r["ncu"] if r["pm_inside"] >= 0 else None
        fmt = lambda v: f"{v:7.2f}" if v is not None and v >= 0 else f"{'n/e':>7}"
        diff = "%+6.2f" % r["diff"] if r["diff"] is not None else "     -"
        se = f"{r['se']:5.2f}" if r["se"] >= 0 else f"{'-':>5}"
        mark = "m" if r["from_mixed"] and r["pm"] >= 0 else " "
        print(f"{r['name'][:40]:40} {r['grid']:>12} {r['block']:>9} {r['clean']:6d} {r['inside']:6d} "
              f"{r['mixed']:6d} {fmt(r['pm'])}{mark}{se} {fmt(r['pm_inside'])} {fmt(r['replay'])} {r['ncu']:7.2f} {diff}")
    judged = [r for r in rows if r["clean"] >= args.min_samples and r["diff"] is not None]
    summary = {"configurations": len(rows), "with_figure": len(judged), "tolerance_points": args.tolerance}
    ok = False
    for label, part in (("all", judged), ("clean samples only", [r for r in judged if not r["from_mixed"]]),
                        ("with mixed samples", [r for r in judged if r["from_mixed"]])):
        if not part:
            print(f"\n{label}: no configuration with a PM figure")
            continue
        within = [r for r in part if abs(r["diff"]) <= args.tolerance]
        diffs = sorted(abs(r["diff"]) for r in part)
        share = len(within) / len(part)
        summary[label] = {
            "configurations": len(part), "within_tolerance": len(within), "share_within": share,
            "abs_diff_median": statistics.median(diffs), "abs_diff_p90": diffs[max(0, math.ceil(0.9 * len(diffs)) - 1)],
            "abs_diff_max": diffs[-1],
            "share_within_2se": sum(abs(r["diff"]) <= 2 * r["se"] for r in part if r["se"] >= 0) / len(part)}
        if label == "all":
            ok = share >= 0.9
            summary["target_met"] = ok
        print(f"\n{label}: {len(within)} of {len(part)} configurations with a PM figure within {args.tolerance} points "
              f"of ncu ({100 * share:.1f} %; target 90 %{(': met' if ok else ': NOT met') if label == 'all' else ''}); "
              f"|PM - ncu| median {summary[label]['abs_diff_median']:.2f}, p90 {summary[label]['abs_diff_p90']:.2f}, "
              f"max {summary[label]['abs_diff_max']:.2f} points; within 2 standard errors "
              f"{100 * summary[label]['share_within_2se']:.1f} %")
        print("worst:")
        for r in sorted(part, key=lambda r: -abs(r["diff"]))[:5]:
            print(f"  {r['name'][:50]} {r['grid']} x {r['block']}: PM {r['pm']:.2f} ± {r['se']:.2f} vs ncu {r['ncu']:.2f} "
                  f"({r['clean']} clean, {r['inside']} inside, {r['mixed']} mixed; {r['launches']} launches)")
    inside = [r for r in judged if r["diff_inside"] is not None]
    if inside:
        summary["inside_only"] = {
            "configurations": len(inside),
            "share_within": sum(abs(r["diff_inside"]) <= args.tolerance for r in inside) / len(inside),
            "abs_diff_median": statistics.median(abs(r["diff_inside"]) for r in inside)}
        i = summary["inside_only"]
        print(f"inside samples only: {i['configurations']} configurations, "
              f"{100 * i['share_within']:.1f} % within {args.tolerance} points, median {i['abs_diff_median']:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "rows": rows}, f, indent=1)
    return 0 if ok else 1


def coverage(args):
    for path in args.reports:
        report = load_report(path)
        total = pm = pm_mixed = replay = 0
        no_figure = {}  # PM status -> GPU time
        for g in groups(report):
            ns = int(g.get("total_ns", 0))
            total += ns
            achieved = g.get("achieved", {})
            source = achieved.get("source", "")
            if source == "pm":
                pm += ns
                pm_mixed += ns if achieved.get("pm", {}).get("from_mixed") else 0
            elif source == "replay":
                replay += ns
            elif achieved.get("pm"):
                status = achieved["pm"].get("status", "") or "?"
                no_figure[status] = no_figure.get(status, 0) + ns
        files = report.get("files", [])
        mode = ",".join(sorted({f.get("achieved_mode", "") for f in files})) or "?"
        pct = lambda v: 100.0 * v / total if total else 0.0
        print(json.dumps({"report": path, "achieved_mode": mode, "gpu_ns": total,
                          "covered_pct": round(pct(pm + replay), 2), "pm_pct": round(pct(pm), 2),
                          "pm_with_mixed_pct": round(pct(pm_mixed), 2), "replay_pct": round(pct(replay), 2),
                          "pm_no_figure_pct": {k: round(pct(v), 2) for k, v in sorted(no_figure.items())},
                          "pm_samples": sum(int(f.get("pm_samples", 0)) for f in files),
                          "pm_clean_samples": sum(int(f.get("pm_clean_samples", 0)) for f in files),
                          "pm_mixed_samples": sum(int(f.get("pm_mixed_samples", 0)) for f in files),
                          "pm_concurrent_samples": sum(int(f.get("pm_concurrent_samples", 0)) for f in files),
                          "pm_unattributed_samples": sum(int(f.get("pm_unattributed_samples", 0)) for f in files),
                          "pm_overflows": sum(int(f.get("pm_overflows", 0)) for f in files)}))
    return 0


def coverage_row(args):
    """One Markdown row of tests/gpu/coverage.sh's table: the share of GPU time in configurations
    with an achieved figure (Achieved.source set), with the trace's PM sample accounting."""
    report = load_report(args.report)
    total = covered = figures = configs = 0
    for g in groups(report):
        ns = int(g.get("total_ns", 0))
        total += ns
        configs += 1
        if g.get("achieved", {}).get("source"):
            covered += ns
            figures += 1
    # Tuning overhead (autotune trials, cache flushes, redzone checks) is reported apart from
    # the workload, and so is its share here: the coverage above is of the workload's GPU time.
    tuning_ns = sum(int(g.get("total_ns", 0)) for g in report.get("tuning", []))
    tuning_covered = sum(int(g.get("total_ns", 0)) for g in report.get("tuning", []) if g.get("achieved", {}).get("source"))
    keys = ("pm_sampling_ms", "pm_gpu_busy_ms", "pm_starts", "pm_pauses", "pm_samples_expected", "pm_samples_decoded",
            "pm_samples", "pm_samples_lost_busy", "pm_samples_lost_idle", "pm_samples_undecoded", "pm_late_kernel_records",
            "pm_configs_seen", "pm_configs_sampled_enough", "pm_decode_ms", "pm_writer_ms", "pm_idle_sampling_ms",
            "pm_idle_stops")
    meta = {}
    try:
        import sqlite3
        meta = dict(sqlite3.connect(f"file:{args.db}?mode=ro", uri=True).execute("SELECT name, value FROM OCC_META"))
    except Exception as e:  # a trace that could not be read still gets its row
        meta = {"error": str(e)}
    facts = " ".join(f"{k.replace('pm_', '')}={meta.get(k, '-')}" for k in keys)
    if tuning_ns:
        facts = f"tuning {tuning_ns / 1e6:.1f} ms apart, {100.0 * tuning_covered / tuning_ns:.0f} % with achieved; " + facts
    share = 100.0 * covered / total if total else 0.0
    print(f"| {args.label} | {meta.get('launch_count', '?')} launches | {args.wall_s} | {share:.1f} % | "
          f"{figures} of {configs} | {facts} |")
    return 0


def bound(args):
    report = load_report(args.report)
    diffs = []
    print(f"{'kernel':40} {'blocks':>6} {'warps/blk':>9} {'bound %':>8} {'PM %':>7} {'diff':>6} {'clean':>6}")
    for g in groups(report):
        pm = g.get("achieved", {}).get("pm") or {}
        if pm.get("achieved_pct", -1) < 0:
            continue
        blocks = g["grid_x"] * g["grid_y"] * g["grid_z"]
        threads = g["block_x"] * g["block_y"] * g["block_z"]
        if blocks > args.sms or threads <= 0:
            continue
        limit = 100.0 * ((threads + 31) // 32) / args.max_warps
        diff = pm["achieved_pct"] - limit
        diffs.append(diff)
        print(f"{(g.get('short_name') or g.get('name'))[:40]:40} {blocks:6d} {(threads + 31) // 32:9d} "
              f"{limit:8.2f} {pm['achieved_pct']:7.2f} {diff:+6.2f} {pm['clean_samples']:6d}")
    if diffs:
        above = sum(d > 0.5 for d in diffs)
        near = sum(abs(d) <= 0.5 for d in diffs)
        print(f"\n{len(diffs)} configurations of <= {args.sms} blocks: {near} within 0.5 points of the bound, "
              f"{above} above it by more than 0.5 points (should be 0)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("accuracy")
    a.add_argument("report")
    a.add_argument("ncu")
    a.add_argument("--min-samples", type=int, default=0)
    a.add_argument("--tolerance", type=float, default=3.0)
    a.add_argument("--json")
    c = sub.add_parser("coverage")
    c.add_argument("reports", nargs="+")
    r = sub.add_parser("coverage-row")
    r.add_argument("report")
    r.add_argument("db")
    r.add_argument("--label", required=True)
    r.add_argument("--wall-s", default="?")
    b = sub.add_parser("bound")
    b.add_argument("report")
    b.add_argument("--sms", type=int, default=132)
    b.add_argument("--max-warps", type=int, default=64)
    args = parser.parse_args()
    return {"accuracy": accuracy, "coverage": coverage, "coverage-row": coverage_row,
            "bound": bound}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
