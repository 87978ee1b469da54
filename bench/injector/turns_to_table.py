#!/usr/bin/env python3
"""docs/performance.md's first table from mode_cost.sh's JSON files (turns_bench.py --json):

    turns_to_table.py mode_cost_resnet50.json [mode_cost_train_small.json]

One row per mode, each workload's step time against the untraced process of the same cycle
(median of per-cycle ratios) in steady state and in the first minute of each process's life,
with its 95 % bootstrap interval: over process sets and cycles where the run had two sets or
more (it includes how much two identical processes differ), else over cycles. Where the run had
two `off` processes (traced, traced-again), `off` is their mean in each cycle, and a third
column per workload gives every mode against that mean over all cycles: two identical processes
differ by several per cent (the A/A control read 1.058 on ResNet-50, H200, 2026-11-28), so one
`off` process alone is no baseline to compare modes with. Then the A/A control (the second `off` process against the first) and each run's
GPU, driver, date, cycles and command. A mode or part the run lacks reads "-".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import turns_bench  # noqa: E402  (summarize: the same medians and intervals as the run printed)

# (row label, turns_bench variant): mode_cost.sh's variants.
MODES = [("untraced", "untraced"),
         ("light (`OCCTRACE_MODE=light OCCTRACE_LIGHT_DETACH=1`)", "light"),
         ("`off` (`OCCTRACE_ACHIEVED=off`)", "traced"),
         ("default (PM sampling, 20 µs)", "default"),
         ("bare CUPTI (kernel records, discarded)", "bare-cupti"),
         ("torch.profiler (CUDA activity only)", "torchprof")]
TITLES = {"resnet50": "ResNet-50", "train_small": "`train_small.py`"}
PARTS = (("steady", "steady state"), ("first", "first minute"))
OFF_PAIR = ("traced", "traced-again")  # mode_cost.sh's A/A pair, pooled by turns_bench --pool


def workload_of(results):
    """The (name, figures) of the one workload a mode_cost.sh JSON file holds."""
    names = [k for k, v in results.items() if isinstance(v, dict) and "vs_untraced" in v]
    if len(names) != 1:
        raise SystemExit(f"expected one workload with figures against untraced, found {names or 'none'}")
    return names[0], results[names[0]]


def interval(p):
    return p.get("ratio_ci95_over_sets") or p["ratio_ci95"]


def cell(part):
    if part is None:
        return "-"
    low, high = interval(part)
    return f"{part['ratio']:.3f}× [{low:.3f}, {high:.3f}]"


def env_line(results):
    """`GPU, driver N, torch V, date` from the env.txt text mode_cost.sh adds."""
    lines = results.get("env", "").splitlines()
    date = lines[0].strip() if lines else results.get("date", "?")
    gpu = next((line for line in lines if line[:1].isdigit() and "," in line), None)
    torch = next((line.strip() for line in lines if line.startswith("torch ")), "")
    if gpu:
        fields = [f.strip() for f in gpu.split(",")]
        gpu = f"{fields[1]}, driver {fields[2]}" if len(fields) > 2 else gpu
    return ", ".join(x for x in (gpu or "GPU unknown", torch, date) if x)


def off_mean_vs_untraced(results, w):
    """The two `off` processes' mean step time in each cycle against untraced's (summarize's
    figures: all cycles, first minute, steady), or None without both `off` processes. A cycle's
    age is the first `off` process's: the two start together."""
    cycles = w.get("cycles") or []
    if not cycles or not all(v in cycles[0]["ms_per_step"] for v in OFF_PAIR + ("untraced",)):
        return None
    pooled = [dict(c, ms_per_step=dict(c["ms_per_step"], off=sum(c["ms_per_step"][v] for v in OFF_PAIR) / 2),
                   age_s=dict(c["age_s"], off=c["age_s"][OFF_PAIR[0]]))
              for c in cycles]
    return turns_bench.summarize(pooled, ["off"], "untraced", results.get("first_s", 60))["off"]


def table(runs):
    pooled = [bool(w.get("vs_pooled")) and off_mean is not None for _, _, w, off_mean in runs]
    heads = ["Mode"]
    for (name, _, _, _), has_pool in zip(runs, pooled):
        heads += [f"{TITLES.get(name, name)}, {label}" for _, label in PARTS]
        if has_pool:
            heads.append(f"{TITLES.get(name, name)}, ÷ `off`")
    rows = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for label, variant in MODES:
        cells = [label + (", the mean of two processes" if variant == "traced" and any(pooled) else "")]
        for (_, _, w, off_mean), has_pool in zip(runs, pooled):
            figures = off_mean if variant == "traced" and has_pool else w["vs_untraced"].get(variant)
            if variant == "untraced":  # the base: its step time, not a ratio
                cells += [f"1 ({figures['median_ms']:.2f} ms/step)" if figures else "-"] + ["1"] * (len(PARTS) - 1)
            else:
                cells += [cell(figures.get(part)) if figures else "-" for part, _ in PARTS]
            if has_pool:
                cells.append("1" if variant == "traced" else cell(w["vs_pooled"].get(variant)))
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main(paths):
    if not 1 <= len(paths) <= 2:
        raise SystemExit(__doc__)
    runs = []
    for path in paths:
        with open(path) as f:
            results = json.load(f)
        name, figures = workload_of(results)
        runs.append((name, results, figures, off_mean_vs_untraced(results, figures)))
    runs.sort(key=lambda run: list(TITLES).index(run[0]) if run[0] in TITLES else len(TITLES))
    lines = table(runs)
    lines.append("")
    for name, results, w, _ in runs:
        first_s = results.get("first_s", 60)
        again = w.get("vs_traced", {}).get("traced-again")
        if again:
            lines.append(f"A/A control, {TITLES.get(name, name)}: a second `off` process against the first, "
                         f"steady {cell(again.get('steady'))}, first minute {cell(again.get('first'))}.")
    lines.append("")
    for name, results, w, _ in runs:
        first_s = results.get("first_s", 60)
        parts = w["vs_untraced"]["untraced"]
        counts = ", ".join(f"{(parts.get(p) or {}).get('cycles', 0)} {label}" for p, label in PARTS)
        sets = results.get("repeats")
        interval_kind = ("over process sets and cycles" if sets and sets > 1 else "over cycles")
        lines.append(f"{TITLES.get(name, name)}: {env_line(results)}; {len(w['cycles'])} cycles "
                     f"({counts} by the untraced process's age; first minute: turns begun within {first_s:g} s "
                     f"of the process's start) "
                     f"in {sets} process sets, {w.get('turn_steps', '?')} steps a turn; "
                     f"95 % bootstrap intervals {interval_kind}; `{results.get('command', '?')}`.")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
