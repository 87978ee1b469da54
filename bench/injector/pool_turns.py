#!/usr/bin/env python3
"""One figure from several turns_bench.py runs of the same build: the median of per-cycle ratios
NUM / mean(DEN...) over every process set of every JSON given, with a 95 % bootstrap interval
that resamples process sets, then cycles within them (two identical processes differ by a few
per cent from set to set, so sets are the unit). Split as turns_bench does: cycles that began in
each process's first FIRST_S seconds, and the later ones.

    pool_turns.py --num default --den traced,traced-again run1.json run2.json
"""
import argparse
import json
import random
import statistics


def process_sets(paths, num, den):
    """Per process set: [(ratio, age of the NUM process at the cycle)]."""
    out = []
    for path in paths:
        with open(path) as f:
            results = json.load(f)
        for workload, result in results.items():
            if not isinstance(result, dict) or "cycles" not in result:
                continue
            for repeat in sorted({c["repeat"] for c in result["cycles"]}):
                cycles = [c for c in result["cycles"] if c["repeat"] == repeat]
                out.append([(c["ms_per_step"][num] / statistics.mean(c["ms_per_step"][d] for d in den),
                             c["age_s"][num]) for c in cycles])
    return out


def pooled(sets, keep, rounds=2000, seed=1):
    chosen = [[r for r, age in s if keep(age)] for s in sets]
    chosen = [s for s in chosen if s]
    if not chosen:
        return None
    rng = random.Random(seed)
    medians = []
    for _ in range(rounds):
        pool = []
        for s in (rng.choice(chosen) for _ in chosen):
            pool += (rng.choice(s) for _ in s)
        medians.append(statistics.median(pool))
    medians.sort()
    flat = [r for s in chosen for r in s]
    return statistics.median(flat), medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1], len(flat), len(chosen)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num", required=True)
    ap.add_argument("--den", required=True, help="comma-separated variants, their mean per cycle")
    ap.add_argument("--first-s", type=float, default=60.0)
    ap.add_argument("json", nargs="+")
    args = ap.parse_args()
    sets = process_sets(args.json, args.num, args.den.split(","))
    for label, keep in (("all", lambda age: True), (f"first {args.first_s:g} s", lambda age: age < args.first_s),
                        ("steady", lambda age: age >= args.first_s)):
        figure = pooled(sets, keep)
        if figure:
            print(f"{args.num} / mean({args.den}) {label}: {figure[0]:.3f} [{figure[1]:.3f}, {figure[2]:.3f}] "
                  f"({figure[3]} cycles, {figure[4]} process sets)")


if __name__ == "__main__":
    main()
