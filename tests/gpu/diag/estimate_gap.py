#!/usr/bin/env python3
"""Why a light trace's estimate of a configuration's GPU time differs from the full trace's.

    estimate_gap.py FULL.db LIGHT.db NAME_SUBSTRING

For every configuration whose kernel name contains NAME_SUBSTRING: the full trace's launch
durations (count, mean, quantiles; the mean by the launch's slot within a step, when the
configuration runs several times per step) and the light trace's timed samples (the same, and
their mean per timing window). A configuration with slots of different durations whose samples
over-represent one slot is estimated off by the difference. Diagnostic only (tests/gpu/light_hook.sh
GAP_KERNEL=...).
"""
import sqlite3
import statistics
import sys

SQL = ("SELECT l.start, l.duration, s.value, c.gridX, c.blockX, c.dynamicSharedMemory FROM OCC_LAUNCH l"
       " JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.mangledName"
       " WHERE s.value LIKE ? AND l.duration > 0 ORDER BY l.start")


def durations(db, pattern):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    by_key = {}
    for start, duration, name, grid, block, smem in con.execute(SQL, (f"%{pattern}%",)):
        by_key.setdefault((name[:70], grid, block, smem), []).append((start, duration))
    return by_key


def describe(label, rows):
    d = sorted(r[1] for r in rows)
    if not d:
        print(f"  {label}: none")
        return
    q = lambda f: d[min(len(d) - 1, int(f * len(d)))]
    print(f"  {label}: n {len(d)}, mean {statistics.fmean(d) / 1e3:.2f} us, p10 {q(.1) / 1e3:.2f}, "
          f"p50 {q(.5) / 1e3:.2f}, p90 {q(.9) / 1e3:.2f}, max {d[-1] / 1e3:.2f}")


def slots(rows, gap_ns=200_000):
    """Launches grouped into bursts (a step's launches of this configuration, gaps < gap_ns
    between them); the mean duration of the k-th launch of each burst."""
    bursts, current = [], []
    for start, duration in rows:
        if current and start - current[-1][0] > gap_ns:
            bursts.append(current)
            current = []
        current.append((start, duration))
    if current:
        bursts.append(current)
    by_slot = {}
    for burst in bursts:
        for k, (_, duration) in enumerate(burst):
            by_slot.setdefault(k, []).append(duration)
    return {k: (len(v), statistics.fmean(v) / 1e3) for k, v in sorted(by_slot.items()) if len(v) > 2}


def main():
    full_db, light_db, pattern = sys.argv[1:4]
    full, light = durations(full_db, pattern), durations(light_db, pattern)
    for key in sorted(set(full) | set(light)):
        print(f"{key[0]} <<<{key[1]} x {key[2]} smem {key[3]}>>>")
        describe("full ", full.get(key, []))
        describe("light timed", light.get(key, []))
        print("  full  by slot in a burst (n, mean us):", slots(full.get(key, [])))
        print("  light by slot in a burst (n, mean us):", slots(light.get(key, [])))
        # Light samples per window (windows are > 1 s apart).
        windows, current = [], []
        for start, duration in light.get(key, []):
            if current and start - current[-1][0] > 1_000_000_000:
                windows.append(current)
                current = []
            current.append((start, duration))
        if current:
            windows.append(current)
        print("  light per window (n, mean us):",
              [(len(w), round(statistics.fmean(x[1] for x in w) / 1e3, 2)) for w in windows][:30])


if __name__ == "__main__":
    main()
