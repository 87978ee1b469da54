#!/usr/bin/env python3
"""Compares two builds of achieved_launch_bench (e.g. before/after a change to the launch path).

Runs them interleaved (A, B, A, B, ...) so that load from other processes hits both alike, and
prints per scenario the median ns/launch of each build over the rounds and the median of the
per-round ratios B/A.

  achieved_launch_compare.py OLD_BIN NEW_BIN [--rounds 7] [--launches 200000] [--repetitions 3]
"""
import argparse
import statistics
import subprocess
import sys


def run(binary, launches, repetitions):
    out = subprocess.run([binary, str(launches), str(repetitions)], check=True,
                         capture_output=True, text=True).stdout
    results = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            _, name, ns = line.split()
            results[name] = float(ns)
    if not results:
        sys.exit(f"achieved_launch_compare: no RESULT lines from {binary}")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--launches", type=int, default=200000)
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    old_runs, new_runs = [], []
    for round_index in range(args.rounds):
        old_runs.append(run(args.old, args.launches, args.repetitions))
        new_runs.append(run(args.new, args.launches, args.repetitions))
        print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr)
    print(f"ns per launch, medians of {args.rounds} interleaved rounds "
          f"(each the median of {args.repetitions} repetitions of {args.launches} launches/thread)")
    print(f"| scenario | old ns | new ns | new/old (median of per-round ratios) |")
    print(f"|---|---|---|---|")
    for name in old_runs[0]:
        old = [r[name] for r in old_runs]
        new = [r[name] for r in new_runs if name in r]
        ratios = [n / o for n, o in zip(new, old)]
        print(f"| {name} | {statistics.median(old):.1f} | {statistics.median(new):.1f} | "
              f"{statistics.median(ratios):.3f} |")


if __name__ == "__main__":
    main()
