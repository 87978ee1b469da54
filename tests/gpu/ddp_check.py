#!/usr/bin/env python3
"""Multi-GPU checks: a DistributedDataParallel run over NCCL traced one file per rank, and one
report across the ranks. Needs >= NPROC GPUs, torchrun and NCCL.

  ddp_check.py --occtrace BIN --lib libocctrace.so --occ-report BIN --workload train_ddp.py
               --out DIR [--nproc 2] [--json results.json]

Runs (each `torchrun --standalone --nproc_per_node=NPROC train_ddp.py`):
  launcher   occtrace -o 'DIR/launcher/trace-%q{RANK}.db' -- torchrun ...  (STEPS=40)
  injection  CUDA_INJECTION64_PATH + OCCTRACE_OUTPUT='DIR/injection/trace-%q{RANK}.db' (STEPS=20)
  torchprof  untraced, TORCHPROF=1 (STEPS=20): each rank's kernels per step by torch.profiler
  slow       the launcher way with SLOW_RANK=NPROC-1 (extra GPU work on the last rank)
  kill       the launcher way with KILL_RANK=NPROC-1 (SIGKILL mid-run)
  long       the launcher way with STEPS=--long-steps (default 4000), long enough for each rank's
             PM sampling to pause (its CPU bound: pm_collector.h); --long-steps 0 skips it
Checks: one file per rank with its rank, local rank, world size, device and host; NCCL kernels
recorded and classified as NCCL's; each rank's launches per step, (N40 - N20) / 20 from the two
traces, equal to torch.profiler's count; the cross-rank report over the directory and over
per-rank summaries; the report names the slowed rank as the compute straggler; after a rank is
killed every file passes integrity_check and the report still reads them; in the long run each
rank sampled its own GPU and paused, and its launches per step still equal torch.profiler's.
Exit status 0 only when every check passes.
"""
import argparse
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate_trace import Checks  # noqa: E402

NCCL_NAME = re.compile(r"^(nccl|ncclDevKernel|ncclKernel)", re.IGNORECASE)


def run(cmd, env_extra, timeout=600):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCCTRACE_") and k != "CUDA_INJECTION64_PATH"}
    env.update(env_extra)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def query(db, sql, *args):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def meta(db):
    return dict(query(db, "SELECT name, value FROM OCC_META"))


def rank_files(directory, nproc):
    return {r: os.path.join(directory, f"trace-{r}.db") for r in range(nproc)}


def check_rank_files(checks, label, directory, nproc, steps_expected=True):
    """Per-rank facts of one run's files; returns {rank: launches}."""
    launches = {}
    files = rank_files(directory, nproc)
    found = sorted(glob.glob(os.path.join(directory, "trace-*.db")))
    checks.check(f"{label}: one file per rank", sorted(files.values()) == found, ", ".join(map(os.path.basename, found)))
    for rank, db in files.items():
        if not os.path.exists(db):
            continue
        m = meta(db)
        integrity = query(db, "PRAGMA integrity_check")[0][0]
        checks.check(f"{label}: rank {rank} integrity", integrity == "ok", integrity)
        checks.check(f"{label}: rank {rank} identity recorded",
                     (m.get("rank"), m.get("local_rank"), m.get("world_size"), m.get("rank_source")) ==
                     (str(rank), str(rank), str(nproc), "torchrun"),
                     f"rank {m.get('rank')} local {m.get('local_rank')} world {m.get('world_size')} "
                     f"source {m.get('rank_source')} host {m.get('host')}")
        checks.check(f"{label}: rank {rank} host recorded", bool(m.get("host")), m.get("host", ""))
        devices = [d for (d,) in query(db, "SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")]
        checks.check(f"{label}: rank {rank} ran on device {rank}", devices == [rank], f"devices {devices}")
        names = [n for (n,) in query(db, "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                         "JOIN StringIds s ON s.id = k.shortName")]
        nccl = [n for n in names if NCCL_NAME.match(n)]
        checks.check(f"{label}: rank {rank} NCCL kernels recorded", bool(nccl), ", ".join(nccl[:3]))
        launches[rank] = query(db, "SELECT count(*) FROM OCC_LAUNCH")[0][0]
        if steps_expected:
            checks.check(f"{label}: rank {rank} status complete", m.get("status") == "complete", m.get("status", ""))
    return launches


def report_json(checks, label, occ_report, inputs):
    p = subprocess.run([occ_report, *inputs, "--format", "json"], capture_output=True, text=True, timeout=300)
    if not checks.check(f"{label}: occ-report exit 0", p.returncode == 0, p.stderr.strip()[-300:]):
        return None
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--occtrace", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--occ-report", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--long-steps", type=int, default=4000)
    ap.add_argument("--json")
    args = ap.parse_args()
    checks = Checks()
    nproc = args.nproc
    last = nproc - 1
    torchrun = [args.python, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
                args.workload]
    out = os.path.abspath(args.out)
    dirs = {k: os.path.join(out, k) for k in ("launcher", "injection", "slow", "kill", "summaries")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
        for f in glob.glob(os.path.join(d, "*")):
            os.remove(f)

    # 1. The launcher and the injection variable, 40 and 20 steps.
    p = run([args.occtrace, "--force", "-o", os.path.join(dirs["launcher"], "trace-%q{RANK}.db"), "--", *torchrun],
            {"STEPS": "40"})
    checks.check("launcher: torchrun exit 0", p.returncode == 0, p.stderr.strip()[-300:])
    n40 = check_rank_files(checks, "launcher", dirs["launcher"], nproc)
    p = run(torchrun, {"STEPS": "20", "CUDA_INJECTION64_PATH": os.path.abspath(args.lib), "OCCTRACE_FORCE": "1",
                       "OCCTRACE_OUTPUT": os.path.join(dirs["injection"], "trace-%q{RANK}.db")})
    checks.check("injection: torchrun exit 0", p.returncode == 0, p.stderr.strip()[-300:])
    n20 = check_rank_files(checks, "injection", dirs["injection"], nproc)

    # 2. An independent count: torch.profiler in each rank of an untraced run.
    p = run(torchrun, {"STEPS": "20", "TORCHPROF": "1"})
    checks.check("torchprof: torchrun exit 0", p.returncode == 0, p.stderr.strip()[-300:])
    prof = {int(r): (int(k), int(s)) for r, k, s in
            re.findall(r"rank (\d+) torch.profiler kernels (\d+) steps (\d+)", p.stdout)}
    for rank in range(nproc):
        if rank in n40 and rank in n20 and rank in prof:
            traced_per_20 = n40[rank] - n20[rank]
            kernels, steps = prof[rank]
            checks.check(f"rank {rank}: launches per 20 steps, traced (N40 - N20) == torch.profiler",
                         traced_per_20 == kernels * 20 // steps and kernels * 20 % steps == 0,
                         f"traced {n40[rank]} - {n20[rank]} = {traced_per_20}, torch.profiler {kernels} in {steps} steps")

    # 3. One report across ranks: the directory, and per-rank summaries of the same files.
    report = report_json(checks, "report over the directory", args.occ_report, [dirs["launcher"]])
    if report:
        cross = report.get("cross_rank", {})
        ranks = cross.get("ranks", [])
        checks.check("report: a cross-rank section with every rank", len(ranks) == nproc,
                     ", ".join(f"{r['label']} {int(r['total_gpu_ns']) / 1e6:.1f} ms "
                               f"(NCCL {int(r['communication_gpu_ns']) / 1e6:.1f} ms)" for r in ranks))
        checks.check("report: ranks identified by occtrace", cross.get("identity") == "occtrace", cross.get("identity", ""))
        checks.check("report: NCCL time split out on every rank",
                     all(int(r["communication_gpu_ns"]) > 0 for r in ranks))
    summaries = []
    for rank, db in rank_files(dirs["launcher"], nproc).items():
        target = os.path.join(dirs["summaries"], f"trace-{rank}.summary.json")
        p = subprocess.run([args.occ_report, "summarize", db, "-o", target], capture_output=True, text=True)
        checks.check(f"summarize rank {rank}", p.returncode == 0 and os.path.exists(target), p.stderr.strip()[-200:])
        summaries.append(target)
    from_summaries = report_json(checks, "report over the summaries", args.occ_report, summaries)
    if report and from_summaries:
        a, b = report.get("cross_rank", {}), from_summaries.get("cross_rank", {})
        checks.check("report from summaries: the same per-rank totals",
                     [r["total_gpu_ns"] for r in a.get("ranks", [])] == [r["total_gpu_ns"] for r in b.get("ranks", [])])

    # 4. A straggler on purpose.
    p = run([args.occtrace, "--force", "-o", os.path.join(dirs["slow"], "trace-%q{RANK}.db"), "--", *torchrun],
            {"STEPS": "40", "SLOW_RANK": str(last)})
    checks.check("slow: torchrun exit 0", p.returncode == 0, p.stderr.strip()[-300:])
    slow = report_json(checks, "slow: report", args.occ_report, [dirs["slow"]])
    if slow:
        cross = slow.get("cross_rank", {})
        files = slow.get("files", [])
        slowest = cross.get("slowest_file_index", -1)
        slowest_rank = files[slowest].get("rank") if 0 <= slowest < len(files) else None
        checks.check(f"slow: the report names rank {last} as the compute straggler", slowest_rank == last,
                     f"slowest rank {slowest_rank}, {cross.get('slowest_over_median_pct', 0):.1f} % over the median")

    # 5. A rank dies: every file stays valid and readable.
    p = run([args.occtrace, "--force", "-o", os.path.join(dirs["kill"], "trace-%q{RANK}.db"), "--", *torchrun],
            {"STEPS": "400", "KILL_RANK": str(last), "KILL_AT_STEP": "100"})
    checks.info("kill: torchrun exit", str(p.returncode))
    for rank, db in rank_files(dirs["kill"], nproc).items():
        if not checks.check(f"kill: rank {rank} file exists", os.path.exists(db)):
            continue
        integrity = query(db, "PRAGMA integrity_check")[0][0]
        m = meta(db)
        checks.check(f"kill: rank {rank} integrity", integrity == "ok",
                     f"{integrity}, status {m.get('status')}, launches {query(db, 'SELECT count(*) FROM OCC_LAUNCH')[0][0]}")
    report_json(checks, "kill: report over the surviving files", args.occ_report, [dirs["kill"]])

    # 6. Long enough for PM sampling to pause in each rank: every launch still recorded.
    if args.long_steps > 0:
        long_dir = os.path.join(out, "long")
        os.makedirs(long_dir, exist_ok=True)
        for f in glob.glob(os.path.join(long_dir, "*")):
            os.remove(f)
        steps = args.long_steps
        p = run([args.occtrace, "--force", "-o", os.path.join(long_dir, "trace-%q{RANK}.db"), "--", *torchrun],
                {"STEPS": str(steps)})
        checks.check(f"long: torchrun exit 0 ({steps} steps)", p.returncode == 0, p.stderr.strip()[-300:])
        checks.info("long: ms/step", " ".join(re.findall(r"ms/step ([0-9.]+)", p.stdout)))
        n_long = check_rank_files(checks, "long", long_dir, nproc)
        for rank, db in rank_files(long_dir, nproc).items():
            m = meta(db)
            facts = " ".join(f"{k}={m.get(k)}" for k in ("pm_devices_sampled", "pm_status", "pm_sampling_ms", "pm_run_ms",
                                                          "pm_pauses", "pm_samples", "pm_decode_errors"))
            checks.check(f"long: rank {rank} sampled its own GPU and paused",
                         m.get("pm_status") == "on" and int(m.get("pm_pauses") or 0) >= 1
                         and m.get("pm_decode_errors") == "0", facts)
            if rank in n_long and rank in n20 and rank in prof:
                kernels, prof_steps = prof[rank]
                per_step = (n_long[rank] - n20[rank]) / (steps - 20)
                checks.check(f"long: rank {rank} launches per step across the pauses == torch.profiler's",
                             per_step == kernels / prof_steps,
                             f"({n_long[rank]} - {n20[rank]}) / {steps - 20} = {per_step:g}, "
                             f"torch.profiler {kernels} / {prof_steps}")

    checks.print_table()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": checks.rows}, f, indent=1)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
