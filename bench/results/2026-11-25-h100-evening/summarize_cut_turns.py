# Summary of a turns_bench.py log cut off before its own summary (same method: median of
# per-cycle ratios, 95 % bootstrap interval over cycles, per-process-set medians).
# python3 summarize_cut_turns.py LOG WORKLOAD BASE_VARIANT
import re,random,statistics,sys
path=sys.argv[1]; wl=sys.argv[2]; base=sys.argv[3]
rows=[l for l in open(path) if re.match(rf'\s+{wl} r\d+ c\d+:',l)]
ratios={}; sets={}; ms={}
for l in rows:
    m=re.match(rf'\s+{wl} r(\d+) c\d+: (.*)',l)
    rep=m.group(1); vals={k:float(v) for k,v in (x.strip().split(' ') for x in m.group(2).split(','))}
    for k,v in vals.items():
        ms.setdefault(k,[]).append(v)
        if k==base: continue
        ratios.setdefault(k,[]).append(v/vals[base]); sets.setdefault(k,{}).setdefault(rep,[]).append(v/vals[base])
random.seed(1)
print(f"{wl}: {len(rows)} cycles, vs {base}")
for k in ms:
    if k==base: print(f"  {k:12s} {statistics.median(ms[k]):.3f} ms/step"); continue
    r=ratios[k]; bs=sorted(statistics.median(random.choices(r,k=len(r))) for _ in range(2000))
    print(f"  {k:12s} {statistics.median(ms[k]):.3f} ms/step  {statistics.median(r):.3f} [{bs[50]:.3f}, {bs[1950]:.3f}]  per set: "+", ".join(f"{statistics.median(v):.3f}" for v in sets[k].values()))
