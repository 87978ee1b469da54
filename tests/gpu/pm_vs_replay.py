import json, sys, statistics
def groups(path):
    d = json.load(open(path))
    out = {}
    for g in d["groups"]:
        key = (g.get("mangled_name") or g.get("name"), tuple(g.get(f"grid_{a}") for a in "xyz"), tuple(g.get(f"block_{a}") for a in "xyz"))
        out.setdefault(key, []).append(g)
    return out
pm, rp = groups(sys.argv[1]), groups(sys.argv[2])
rows = []
for key, gs in pm.items():
    if key not in rp or len(gs) != 1 or len(rp[key]) != 1: continue
    a = gs[0].get("achieved", {}); b = rp[key][0].get("achieved", {})
    p = a.get("pm") or {}
    if not p or p.get("clean_samples", 0) < 20 or p.get("achieved_pct", -1) < 0: continue
    if b.get("source") != "replay" or b.get("mean_pct") is None: continue
    rows.append((gs[0].get("short_name"), key[1], key[2], p["clean_samples"], p["achieved_pct"], float(b["mean_pct"])))
within = sum(abs(r[4]-r[5]) <= 3 for r in rows)
for r in sorted(rows, key=lambda r: -abs(r[4]-r[5]))[:6]:
    print(f"  {r[0][:40]:40} {r[1]} {r[2]} clean {r[3]} PM {r[4]:.2f} replay {r[5]:.2f} diff {r[4]-r[5]:+.2f}")
d = [abs(r[4]-r[5]) for r in rows]
print(f"{within} of {len(rows)} within 3 points of replay; median {statistics.median(d) if d else 0:.2f}, max {max(d) if d else 0:.2f}")
