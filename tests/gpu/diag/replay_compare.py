#!/usr/bin/env python3
"""Achieved occupancy measured with CUPTI kernel replay against user replay, per configuration.

    replay_compare.py KERNEL_REPLAY.db USER_REPLAY.db

Both traces come from the same deterministic program with every signature measured once
(OCCTRACE_SAMPLE_BUDGET=1), one with OCCTRACE_ACHIEVED_REPLAY=kernel, one with =user. Prints
how many launches each measured, and for the configurations measured in both, the difference in
achieved occupancy (percentage points) and in the range's GPU time. One-pass metrics need no
replay, so the two should agree within run-to-run noise; a configuration measured in only one
trace, or differing by more than 5 points, is listed. Exit status 1 when the user-replay trace
measured nothing or more than a tenth of the shared configurations differ by more than 5 points.
Diagnostic for OCCTRACE_ACHIEVED_REPLAY (tests/gpu/replay_mode.sh).
"""
import sqlite3
import statistics
import sys

SQL = ("SELECT s.value, c.gridX, c.gridY, c.gridZ, c.blockX, c.blockY, c.blockZ, c.dynamicSharedMemory,"
       " a.status, a.achievedOccupancyPct, a.gpuTimeNs"
       " FROM OCC_ACHIEVED a JOIN OCC_LAUNCH l ON l.correlationId = a.correlationId"
       " JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.mangledName")


def measured(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out, statuses = {}, {}
    for name, gx, gy, gz, bx, by, bz, smem, status, occupancy, gpu_ns in con.execute(SQL):
        statuses[status] = statuses.get(status, 0) + 1
        if status == "measured" and occupancy is not None:
            out.setdefault((name, gx, gy, gz, bx, by, bz, smem), (occupancy, gpu_ns))
    meta = dict(con.execute("SELECT name, value FROM OCC_META"))
    con.close()
    return out, statuses, meta


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    kernel, kernel_statuses, kernel_meta = measured(sys.argv[1])
    user, user_statuses, user_meta = measured(sys.argv[2])
    for label, statuses, meta in (("kernel replay", kernel_statuses, kernel_meta), ("user replay", user_statuses, user_meta)):
        print(f"{label}: rows by status {statuses}; replay {meta.get('achieved_replay')}, status "
              f"{meta.get('achieved_status')}, profiling {int(meta.get('achieved_profiling_ns') or 0) / 1e6:.0f} ms, "
              f"phases {meta.get('achieved_phase_ms')}")
    shared = sorted(set(kernel) & set(user))
    diffs = [(abs(user[k][0] - kernel[k][0]), k) for k in shared]
    big = [d for d in diffs if d[0] > 5.0]
    times = [user[k][1] / kernel[k][1] for k in shared if kernel[k][1] and user[k][1]]
    print(f"configurations measured: kernel replay {len(kernel)}, user replay {len(user)}, both {len(shared)}")
    if diffs:
        print(f"achieved occupancy, |user - kernel| in points: median {statistics.median(d for d, _ in diffs):.2f}, "
              f"max {max(d for d, _ in diffs):.2f}; more than 5 points: {len(big)}")
    if times:
        print(f"GPU time of the measured range, user / kernel: median {statistics.median(times):.3f}")
    for d, k in sorted(big, reverse=True)[:10]:
        print(f"  {k[0][:70]} <<<{k[1]},{k[2]},{k[3]} x {k[4]},{k[5]},{k[6]}>>>: kernel {kernel[k][0]:.1f} %, user {user[k][0]:.1f} %")
    for k in sorted(set(kernel) ^ set(user))[:10]:
        print(f"  only in {'kernel' if k in kernel else 'user'} replay: {k[0][:70]} <<<{k[1]} x {k[4]}>>>")
    # Kernel records beyond one per launch call: a correlation id outside CUDA graphs carries
    # one kernel, so more than one there is a record of something the program did not launch.
    for label, db in (("kernel replay", sys.argv[1]), ("user replay", sys.argv[2])):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute(
            "SELECT l.correlationId, s.value, c.gridX, c.blockX, l.streamId, l.start, l.duration"
            " FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.mangledName"
            " WHERE l.correlationId IN (SELECT correlationId FROM OCC_LAUNCH GROUP BY correlationId HAVING COUNT(*) > 1)"
            " ORDER BY l.correlationId, l.start").fetchall()
        con.close()
        print(f"{label}: {len(rows)} kernel rows share a correlation id with another" + ("; the first:" if rows else ""))
        for corr, name, grid, block, stream, start, duration in rows[:6]:
            print(f"  corr {corr}: {name[:60]} <<<{grid} x {block}>>> stream {stream} start {start} duration {duration}")
    return 1 if not user or (shared and len(big) > len(shared) / 10) else 0


if __name__ == "__main__":
    sys.exit(main())
