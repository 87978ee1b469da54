#!/usr/bin/env python3
"""Per-launch cost of PM sampling's phases: reads tests/gpu/pm_pause_checks.sh's log
(launch_overhead's rounds, LAUNCH_OVERHEAD_VERBOSE=1, per process and variant) and prints, per
variant, the median us/launch of the rounds that ended in each phase of the CPU bound, by time
since the first round: sampling (the free first FREE_S, less a margin) and paused (after it,
before the first window could fit).

  launch_phases.py LOG [--free-s 5] [--window-at-s 14.5]

A process's rounds are contiguous, so a round's end time is the sum of the rounds' times so
far (launch loop and drain). The ratio column divides by variant `off`'s median of the same phase.
"""
import argparse
import re
import statistics
import sys

HEAD = re.compile(r"^== (\S+) process (\d+)")
ROUND = re.compile(r"^round (\d+): us/launch ([0-9.]+) drain_us ([0-9.]+)")


def parse(path, per_round):
    runs = []  # (variant, process, [(end_s, us)])
    for line in open(path, errors="replace"):
        m = HEAD.match(line)
        if m:
            runs.append((m.group(1), int(m.group(2)), []))
            continue
        m = ROUND.match(line)
        if m and runs:
            rounds = runs[-1][2]
            us = float(m.group(2))
            end = (rounds[-1][0] if rounds else 0.0) + us * per_round / 1e6
            if int(m.group(1)) > 0:  # round 0: warm-up
                rounds.append((end, us))
            else:
                rounds.append((end, None))
    return runs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("log")
    p.add_argument("--per-round", type=int, default=20000)
    p.add_argument("--free-s", type=float, default=5.0)
    p.add_argument("--window-at-s", type=float, default=14.5)
    args = p.parse_args()
    runs = parse(args.log, args.per_round)
    if not runs:
        print(f"launch_phases: no runs in {args.log}", file=sys.stderr)
        return 1
    phases = {"sampling": (0.5, args.free_s - 0.5), "paused": (args.free_s + 1.0, args.window_at_s - 0.5)}
    by = {}  # (variant, phase) -> [per-process medians]
    print("| variant | process | " + " | ".join(f"{p} us/launch (rounds)" for p in phases) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in phases) + " |")
    for variant, process, rounds in runs:
        cells = []
        for phase, (lo, hi) in phases.items():
            values = [us for end, us in rounds if us is not None and lo <= end <= hi]
            if values:
                med = statistics.median(values)
                by.setdefault((variant, phase), []).append(med)
                cells.append(f"{med:.3f} ({len(values)})")
            else:
                cells.append("-")
        print(f"| {variant} | {process} | " + " | ".join(cells) + " |")
    print()
    variants = list(dict.fromkeys(v for v, _, _ in runs))
    print("| variant | " + " | ".join(f"{p}: median of processes, ÷ off" for p in phases) + " |")
    print("| --- | " + " | ".join("---" for _ in phases) + " |")
    for variant in variants:
        cells = []
        for phase in phases:
            mine, off = by.get((variant, phase)), by.get(("off", phase))
            if not mine:
                cells.append("-")
                continue
            m = statistics.median(mine)
            ratio = f" ({m / statistics.median(off):.3f})" if off else ""
            cells.append(f"{m:.3f}{ratio}")
        print(f"| {variant} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
