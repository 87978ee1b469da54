#!/usr/bin/env python3
"""GPU checks of the default mode's re-attach after sampling (injector/cupti_reattach.cc).

    reattach_checks.py --lib libocctrace.so --workloads DIR --cuda-bin continuous_cuda --out DIR [--json OUT]

A full trace that samples achieved occupancy finalizes CUPTI once sampling rests and attaches it
again; the launch hook records the launches that get no kernel record meanwhile (OCC_LAUNCH_CALL).
From the trace files with plain SQL:

  1. train_small.py (PyTorch eager, deterministic): the default mode's trace (sampling,
     re-attach) against an OCCTRACE_ACHIEVED=off trace of the same steps: launches per
     configuration (mangled name, grid, block, dynamic shared memory), OCC_LAUNCH plus
     OCC_LAUNCH_CALL, equal -- nothing lost in the gap, nothing counted twice; at least one
     re-attach completed; integrity; every configuration sampled.
  2. continuous_cuda (a plain CUDA loop), stopped with SIGTERM after --cuda-seconds: the trace's
     launches (both tables) at least what the program had completed 1 s before the signal and at
     most its last 'completed N' + 512 (it runs on while occtrace closes the file).
  3. occ-report reads a re-attached trace (--report BIN).
Prints one line per check and PASS/FAIL totals; OCC_META reattach_* / full_* rows per trace.
"""
import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

OCC_VARS = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "OCCTRACE_OUTPUT", "OCCTRACE_FORCE", "OCCTRACE_QUIET",
            "OCCTRACE_ACHIEVED", "OCCTRACE_MODE", "OCCTRACE_ACHIEVED_REATTACH")


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if k not in OCC_VARS}
    env.update(extra)
    return env


def remove_db(db):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


def per_config(db):
    """({shape: launches}, meta, integrity): OCC_LAUNCH and OCC_LAUNCH_CALL rows by launch shape."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    shape = {row[0]: tuple(row[1:]) for row in con.execute(
        "SELECT c.id, s.value, c.gridX, c.gridY, c.gridZ, c.blockX, c.blockY, c.blockZ, c.dynamicSharedMemory"
        " FROM OCC_KERNEL_CONFIG c JOIN StringIds s ON s.id = c.mangledName")}
    counts = {}
    for table in ("OCC_LAUNCH", "OCC_LAUNCH_CALL"):
        for cid, n in con.execute(f"SELECT configId, COUNT(*) FROM {table} GROUP BY configId"):
            key = shape.get(cid, ("?", cid))
            counts[key] = counts.get(key, 0) + n
    meta = dict(con.execute("SELECT name, value FROM OCC_META"))
    integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    con.close()
    return counts, meta, integrity


def meta_line(meta):
    keys = [k for k in sorted(meta) if k.startswith(("reattach", "full_")) or k in (
        "launch_count", "achieved_launches_measured", "achieved_signatures_measured", "achieved_status",
        "incomplete_kernel_records", "dropped_records", "status")]
    return ", ".join(f"{k}={meta[k]}" for k in keys)


def short(key):
    name = str(key[0])
    return f"{name[:60]}{'...' if len(name) > 60 else ''} {key[1:]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workloads", required=True)
    ap.add_argument("--cuda-bin")
    ap.add_argument("--report")
    ap.add_argument("--out", required=True)
    ap.add_argument("--json")
    ap.add_argument("--steps", default="15000")
    ap.add_argument("--cuda-seconds", type=float, default=35)
    ap.add_argument("--skip-train", action="store_true", help="only the CUDA program")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = {"checks": [], "meta": {}}
    failures = 0

    def check(name, ok, detail):
        nonlocal failures
        failures += 0 if ok else 1
        results["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)

    # 1. train_small.py: off against the default mode.
    if not args.skip_train:
        cmd = [sys.executable, f"{args.workloads}/train_small.py"]
        dbs = {}
        for variant, extra in (("off", {"OCCTRACE_ACHIEVED": "off"}),
                               ("default", {"OCCTRACE_SAMPLE_BUDGET": "0.5"})):
            db = os.path.join(args.out, f"train_small-{variant}.db")
            remove_db(db)
            started = time.time()
            proc = subprocess.run(cmd, env=clean_env({"STEPS": args.steps, "CUDA_INJECTION64_PATH": args.lib,
                                                      "OCCTRACE_OUTPUT": db, **extra}),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=400)
            print(f"== train_small {variant}: exit {proc.returncode}, {time.time() - started:.1f} s; "
                  f"{proc.stdout.decode(errors='replace').strip()[-200:]}", flush=True)
            err = proc.stderr.decode(errors="replace")
            if err.strip():
                print("   stderr: " + err.strip()[-1500:], flush=True)
            dbs[variant] = db
        off_counts, off_meta, off_ok = per_config(dbs["off"])
        counts, meta, ok = per_config(dbs["default"])
        results["meta"]["train_small"] = meta
        print("   default OCC_META: " + meta_line(meta), flush=True)
        check("train_small: trace integrity and status", ok == "ok" and meta.get("status") == "complete",
              f"integrity {ok}, status {meta.get('status')}")
        check("train_small: re-attached after sampling",
              meta.get("reattach") == "on" and int(meta.get("reattach_completed", "0")) >= 1,
              f"reattach {meta.get('reattach')}, began {meta.get('reattach_began')}, completed "
              f"{meta.get('reattach_completed')}, stopped {meta.get('reattach_stopped')}, gap {meta.get('reattach_gap_ms')}")
        keys = set(off_counts) | set(counts)
        differing = [(k, off_counts.get(k, 0), counts.get(k, 0)) for k in keys if off_counts.get(k, 0) != counts.get(k, 0)]
        total_off, total = sum(off_counts.values()), sum(counts.values())
        check("train_small: launches per configuration equal to the off trace (OCC_LAUNCH + OCC_LAUNCH_CALL)",
              not differing,
              f"{len(keys)} configurations, off {total_off}, default {total} (gap launches "
              f"{meta.get('reattach_gap_launches')}, duplicates dropped {meta.get('reattach_gap_duplicates')}); "
              f"{len(differing)} differ" + "".join(f"\n    {short(k)}: off {a} default {b}" for k, a, b in sorted(differing)[:8]))
        check("train_small: every signature measured",
              meta.get("achieved_signatures_measured") not in (None, "0"),
              f"signatures measured {meta.get('achieved_signatures_measured')}, status {meta.get('achieved_status')}")

    # 2. continuous_cuda under the default mode, SIGTERM after --cuda-seconds.
    if args.cuda_bin:
        db = os.path.join(args.out, "continuous_cuda-default.db")
        remove_db(db)
        proc = subprocess.Popen([args.cuda_bin], env=clean_env({"CUDA_INJECTION64_PATH": args.lib, "OCCTRACE_OUTPUT": db,
                                                                "OCCTRACE_SAMPLE_BUDGET": "0.5"}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # Read as it comes: a full pipe would stop the program (and its CUDA calls) mid-run.
        out_lines = []
        reader = threading.Thread(target=lambda: out_lines.extend(proc.stdout), daemon=True)
        reader.start()
        started = time.monotonic()
        time.sleep(args.cuda_seconds)
        signalled_at = time.monotonic() - started
        proc.send_signal(signal.SIGTERM)
        err = proc.stderr.read()
        proc.wait(timeout=60)
        reader.join(timeout=30)
        lines = [l.decode(errors="replace").split() for l in out_lines if l.startswith(b"completed ")]
        completed = int(lines[-1][1]) if lines else -1
        # The program keeps running while occtrace writes its last rows (the signal is sent again
        # once the file is closed): what must be in the trace is what had completed 1 s before
        # the signal. Its 'completed N T' lines count T from its first launch, up to a second
        # after it was started: T <= signal - 2 s is at least 1 s before the signal.
        required = max([int(n) for _, n, t in lines if float(t) <= signalled_at - 2.0] or [0])
        counts, meta, ok = per_config(db)
        results["meta"]["continuous_cuda"] = meta
        total = sum(counts.values())
        print("   continuous_cuda OCC_META: " + meta_line(meta), flush=True)
        if err.strip():
            print("   stderr: " + err.decode(errors="replace").strip()[-1500:], flush=True)
        check("continuous_cuda: re-attached after sampling", int(meta.get("reattach_completed", "0")) >= 1,
              f"began {meta.get('reattach_began')}, completed {meta.get('reattach_completed')}, stopped "
              f"{meta.get('reattach_stopped')}, gap {meta.get('reattach_gap_ms')}")
        check("continuous_cuda: every launch completed 1 s before the signal, none beyond the program's last count + 512",
              ok == "ok" and required > 0 and required <= total <= completed + 512,
              f"completed 1 s before the signal {required}, at the end {completed}, trace {total} (gap launches "
              f"{meta.get('reattach_gap_launches')}, duplicates {meta.get('reattach_gap_duplicates')}), integrity {ok}")

    # 3. occ-report on the re-attached trace.
    if args.report and not args.skip_train:
        proc = subprocess.run([args.report, dbs["default"], "--top", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=120)
        text = proc.stdout.decode(errors="replace")
        check("occ-report reads the re-attached trace", proc.returncode == 0 and "re-attached" in text + proc.stderr.decode(),
              f"exit {proc.returncode}; " + next((l.strip() for l in text.splitlines() if "re-attached" in l), "no re-attach line"))

    print(f"{len(results['checks']) - failures} PASS, {failures} FAIL", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
