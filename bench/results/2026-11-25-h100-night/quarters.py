# Whether a variant's cost drifts over a process's life: the median per-cycle ratio to BASE in
# each quarter of every process set's cycles, from a turns_bench.py log.
# python3 quarters.py LOG WORKLOAD BASE_VARIANT
import re
import statistics
import sys

path, workload, base = sys.argv[1:4]
sets = {}
for line in open(path):
    m = re.match(rf"\s+{workload} r(\d+) c\d+: (.*)", line)
    if m:
        values = {k: float(v) for k, v in (x.strip().rsplit(" ", 1) for x in m.group(2).split(","))}
        sets.setdefault(m.group(1), []).append(values)
for rep, cycles in sets.items():
    n = len(cycles)
    quarters = [cycles[i * n // 4:(i + 1) * n // 4] for i in range(4)]
    for v in cycles[0]:
        if v == base:
            continue
        print(f"{workload} set {rep} ({n} cycles) {v} / {base} by quarter: " +
              " ".join(f"{statistics.median(c[v] / c[base] for c in q):.3f}" for q in quarters if q))
