#!/usr/bin/env python3
"""PM-sampling checks on recorded traces (OCCTRACE_ACHIEVED=pm), for the GPU scripts
(pm_smoke.sh, pm_measure.sh). Reads only SQLite; runs on a CPU too.

  pm_checks.py summary DB [--wall-s S] [--label L]   pm_* rows, samples, bytes per second
  pm_checks.py align DB --expected pm_align.txt      sample times vs pm_align's kernel records;
                                                     occupancy over the samples inside each kernel
  pm_checks.py attribute DB [--json OUT]             per configuration: clean samples, achieved %

A sample is "clean" for a kernel when that kernel is the only one on the device that overlaps
the sample and the sample lies inside the kernel's [start, end] (a simple, independent form of
the rule occ-report applies; used here to print tables on the device).
Achieved occupancy over samples = sum(warpsActive) / (sum(smCyclesActive) x maxWarpsPerSm).
"""
import argparse
import bisect
import json
import os
import sqlite3
import sys


def connect(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def meta(db):
    return dict(db.execute("SELECT name, value FROM OCC_META"))


def max_warps(db):
    row = db.execute("SELECT maxWarpsPerSm FROM TARGET_INFO_GPU WHERE maxWarpsPerSm > 0 LIMIT 1").fetchone()
    return row[0] if row else 64


def kernels(db):
    """(start, end, configId, name, deviceId) sorted by start."""
    rows = db.execute(
        "SELECT k.start, k.\"end\", k.occConfigId, COALESCE(s.value, ''), k.deviceId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.shortName ORDER BY k.start").fetchall()
    return rows


def samples(db):
    return db.execute("SELECT deviceId, start, \"end\", smCyclesActive, warpsActive, dramThroughputPct "
                      "FROM OCC_PM_SAMPLE ORDER BY start").fetchall()


def summary(args):
    db = connect(args.db)
    m = meta(db)
    n = db.execute("SELECT count(*) FROM OCC_PM_SAMPLE").fetchone()[0]
    launches = db.execute("SELECT count(*) FROM OCC_LAUNCH").fetchone()[0]
    span = db.execute("SELECT min(start), max(\"end\") FROM OCC_PM_SAMPLE").fetchone()
    size = os.path.getsize(args.db)
    out = {
        "label": args.label, "db": os.path.basename(args.db), "bytes": size, "launches": launches,
        "pm_rows": n,
        "pm_rows_span_s": (span[1] - span[0]) / 1e9 if span[0] is not None else 0,
    }
    for key in ("pm_status", "pm_interval_ns", "pm_samples", "pm_samples_idle", "pm_samples_decoded",
                "pm_samples_lost", "pm_overflows", "pm_decode_errors", "pm_decodes", "pm_decode_ms",
                "pm_decode_max_us", "pm_sample_info_ms", "pm_writer_ms", "pm_reopens", "pm_metrics", "pm_image_bytes", "pm_image_samples", "pm_evaluate_errors",
                "achieved_mode", "dropped_records", "status"):
        out[key] = m.get(key)
    if args.wall_s:
        out["wall_s"] = args.wall_s
        out["bytes_per_s"] = size / args.wall_s
        # What the PM rows add: their share of the file, estimated from the row count and the
        # file's bytes per row of OCC_PM_SAMPLE (dbstat when available).
        try:
            pm_bytes = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'OCC_PM_SAMPLE'").fetchone()[0]
        except sqlite3.Error:
            pm_bytes = None
        if pm_bytes:
            out["pm_table_bytes"] = pm_bytes
            out["pm_bytes_per_s"] = pm_bytes / args.wall_s
    print(json.dumps(out))
    return 0


def overlapping(ks, starts, lo, hi):
    """Kernels overlapping [lo, hi): ks sorted by start; kernels are short, scan back a bit."""
    i = bisect.bisect_left(starts, hi)
    found = []
    j = i - 1
    while j >= 0:
        k = ks[j]
        if k[1] > lo:
            found.append(k)
        if lo - k[0] > 10_000_000_000:  # 10 s back is far enough for any kernel here
            break
        j -= 1
    return found


def attribute_samples(db):
    ks = kernels(db)
    starts = [k[0] for k in ks]
    per = {}
    mixed = 0
    outside = 0
    for dev, s, e, cyc, warps, dram in samples(db):
        over = [k for k in overlapping(ks, starts, s, e) if k[4] == dev]
        if not over:
            outside += 1
            continue
        if len(over) > 1:
            mixed += 1
            continue
        k = over[0]
        if s < k[0] or e > k[1]:
            mixed += 1  # the kernel started or ended inside the sample: the rest was idle or another
            continue
        p = per.setdefault(k[2], {"name": k[3], "samples": 0, "cycles": 0.0, "warps": 0.0})
        p["samples"] += 1
        p["cycles"] += cyc
        p["warps"] += warps
    return ks, per, mixed, outside


def attribute(args):
    db = connect(args.db)
    mw = max_warps(db)
    ks, per, mixed, outside = attribute_samples(db)
    gpu_time = {}
    names = {}
    for k in ks:
        gpu_time[k[2]] = gpu_time.get(k[2], 0) + (k[1] - k[0])
        names[k[2]] = k[3]
    total = sum(gpu_time.values()) or 1
    rows = []
    for cid, t in sorted(gpu_time.items(), key=lambda kv: -kv[1]):
        p = per.get(cid)
        ach = 100.0 * p["warps"] / (p["cycles"] * mw) if p and p["cycles"] > 0 else None
        rows.append({"config": cid, "name": names[cid], "gpu_time_ns": t, "share": t / total,
                     "clean_samples": p["samples"] if p else 0, "achieved_pct": ach})
    covered = sum(r["share"] for r in rows if r["clean_samples"] >= args.min_samples)
    out = {"db": os.path.basename(args.db), "configs": len(rows), "mixed_samples": mixed,
           "samples_outside_kernels": outside, "min_samples": args.min_samples,
           "configs_with_figure": sum(1 for r in rows if r["clean_samples"] >= args.min_samples),
           "gpu_time_share_with_figure": covered, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print(f"{out['db']}: {out['configs']} configurations, {out['configs_with_figure']} with >= {args.min_samples} "
          f"clean samples = {100 * covered:.1f} % of GPU time; mixed samples {mixed}, outside kernels {outside}")
    for r in rows[:args.top]:
        a = f"{r['achieved_pct']:.1f}" if r["achieved_pct"] is not None else "-"
        print(f"  {100 * r['share']:5.1f} %  n={r['clean_samples']:6d}  ach={a:>6}  {r['name'][:70]}")
    return 0


def align(args):
    db = connect(args.db)
    mw = max_warps(db)
    expected = {}
    with open(args.expected) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "kernel":
                expected[len(expected)] = (parts[1], float(parts[7]))
    ks = [k for k in kernels(db) if "spin" in k[3]]
    ss = samples(db)
    sstarts = [s[1] for s in ss]
    results = []
    ok = True
    for n, (start, end, _cid, _name, dev) in enumerate(ks):
        variant, pct = expected.get(n % max(1, len(expected)), ("?", float("nan")))
        # Active samples from 1 ms before to 1 ms after the kernel (the gaps are 5 ms idle).
        lo = bisect.bisect_left(sstarts, start - 1_000_000)
        near = [s for s in ss[lo:] if s[1] <= end + 1_000_000 and s[0] == dev]
        if not near:
            results.append({"kernel": n, "variant": variant, "samples": 0})
            ok = False
            continue
        first, last = near[0], near[-1]
        inside = [s for s in near if s[1] >= start and s[2] <= end]
        cyc = sum(s[3] for s in inside)
        ach = 100.0 * sum(s[4] for s in inside) / (cyc * mw) if cyc > 0 else None
        r = {"kernel": n, "variant": variant, "duration_us": (end - start) / 1e3, "active_samples": len(near),
             "inside_samples": len(inside),
             "first_sample_start_minus_kernel_start_us": (first[1] - start) / 1e3,
             "last_sample_end_minus_kernel_end_us": (last[2] - end) / 1e3,
             "expected_pct": pct, "pm_pct": ach}
        results.append(r)
    for r in results:
        if r.get("samples") == 0:
            print(f"kernel {r['kernel']} {r['variant']}: NO active samples near it")
            continue
        pm = f"{r['pm_pct']:.2f}" if r["pm_pct"] is not None else "-"
        print(f"kernel {r['kernel']:2d} {r['variant']:8s} {r['duration_us']:8.1f} us  active samples {r['active_samples']:4d} "
              f"inside {r['inside_samples']:4d}  first-start {r['first_sample_start_minus_kernel_start_us']:+8.1f} us  "
              f"last-end {r['last_sample_end_minus_kernel_end_us']:+8.1f} us  expected {r['expected_pct']:.2f} % pm {pm} %")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("summary")
    p.add_argument("db")
    p.add_argument("--wall-s", type=float)
    p.add_argument("--label", default="")
    p = sub.add_parser("align")
    p.add_argument("db")
    p.add_argument("--expected", required=True)
    p.add_argument("--json")
    p = sub.add_parser("attribute")
    p.add_argument("db")
    p.add_argument("--json")
    p.add_argument("--min-samples", type=int, default=20)
    p.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    return {"summary": summary, "align": align, "attribute": attribute}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
