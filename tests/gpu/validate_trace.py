#!/usr/bin/env python3
"""Checks an occtrace trace of launch_matrix against the EXPECTED.json the program wrote.

    validate_trace.py TRACE.db EXPECTED.json

Every expected value comes from the CUDA runtime/driver (cudaFuncGetAttributes,
cuFuncGetAttribute, cudaGetDeviceProperties) or from the launch itself, never from occtrace.
The trace is read through the nsys-compatible view CUPTI_ACTIVITY_KIND_KERNEL, so the view is
checked too. Prints a PASS/FAIL table; exit status 1 if any check failed.
"""
import json
import sqlite3
import sys
from collections import Counter, defaultdict

# CUpti_ActivityLaunchType / CUpti_FuncShmemLimitConfig values are written into EXPECTED.json by
# launch_matrix from cupti_activity.h; nothing here hard-codes them.

KERNEL_QUERY = """
SELECT k.start, k."end", k.deviceId, k.contextId, k.streamId, k.correlationId,
       dn.value, sn.value, mn.value, k.launchType, k.registersPerThread,
       k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ,
       k.staticSharedMemory, k.dynamicSharedMemory, k.localMemoryPerThread,
       k.sharedMemoryExecuted, k.sharedMemoryLimitConfig, k.sharedMemoryRequestedPercentage,
       k.graphId, k.graphNodeId, k.clusterX, k.clusterY, k.clusterZ, k.maxActiveClusters
FROM CUPTI_ACTIVITY_KIND_KERNEL k
JOIN StringIds dn ON dn.id = k.demangledName
JOIN StringIds sn ON sn.id = k.shortName
JOIN StringIds mn ON mn.id = k.mangledName
"""
FIELDS = ("start end deviceId contextId streamId correlationId demangled short mangled launchType "
          "regs gridX gridY gridZ blockX blockY blockZ staticSmem dynamicSmem localPerThread "
          "smemExecuted smemLimitConfig carveoutPct graphId graphNodeId clusterX clusterY "
          "clusterZ maxActiveClusters").split()


class Checks:
    """Collects (name, status, detail) rows; status is PASS, FAIL or INFO."""

    def __init__(self, prefix=""):
        self.prefix = prefix
        self.rows = []

    def check(self, name, ok, detail=""):
        self.rows.append((self.prefix + name, "PASS" if ok else "FAIL", detail))
        return ok

    def info(self, name, detail):
        self.rows.append((self.prefix + name, "INFO", detail))

    @property
    def failed(self):
        return [r for r in self.rows if r[1] == "FAIL"]

    def print_table(self, out=sys.stdout):
        width = max([len(r[0]) for r in self.rows] + [5])
        for name, status, detail in self.rows:
            print(f"{status:4}  {name:<{width}}  {detail}", file=out)
        n_pass = sum(1 for r in self.rows if r[1] == "PASS")
        print(f"{n_pass} passed, {len(self.failed)} failed", file=out)


def load_launches(db):
    return [dict(zip(FIELDS, row)) for row in db.execute(KERNEL_QUERY)]


def key_of(launch, keys):
    """The expected key whose text occurs in the kernel's mangled name (keys are unique)."""
    hits = [k for k in keys if k in launch["mangled"]]
    return hits[0] if len(hits) == 1 else None


def config_of(launch):
    return ((launch["gridX"], launch["gridY"], launch["gridZ"]),
            (launch["blockX"], launch["blockY"], launch["blockZ"]), launch["dynamicSmem"])


def validate(db_path, expected, checks):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    checks.check("sqlite integrity_check", integrity == "ok", integrity)

    launches = load_launches(db)
    # Launches the range profiler measured under kernel replay (OCCTRACE_ACHIEVED=sample|all):
    # CUPTI gives them no timestamps, by design (docs/achieved.md).
    try:
        replayed = {r[0] for r in db.execute("SELECT correlationId FROM OCC_ACHIEVED WHERE status = 'measured'")}
    except sqlite3.OperationalError:
        replayed = set()
    exp_groups = expected["launches"]
    keys = sorted({e["key"] for e in exp_groups})
    for k in keys:
        others = [o for o in keys if o != k and k in o]
        if others:
            raise SystemExit(f"validate_trace: expected key {k} is part of {others}: keys must be unique")

    checks.check("total launches", len(launches) == expected["totalLaunches"],
                 f"trace {len(launches)}, program made {expected['totalLaunches']}")
    unknown = [l["mangled"] for l in launches if key_of(l, keys) is None]
    checks.check("no unexpected kernels", not unknown,
                 f"{len(unknown)} unexpected: {sorted(set(unknown))[:3]}" if unknown else "")

    by_group = defaultdict(list)
    for l in launches:
        k = key_of(l, keys)
        if k is not None:
            by_group[(k,) + config_of(l)].append(l)

    for e in exp_groups:
        grid, block, dyn = tuple(e["grid"]), tuple(e["block"]), e["dynamicSmem"]
        label = f"{e['key']} {grid[0]}x{grid[1]}x{grid[2]} / {block[0]}x{block[1]}x{block[2]}"
        if dyn:
            label += f" +{dyn}B"
        got = by_group.pop((e["key"], grid, block, dyn), [])
        ok = checks.check(f"{label}: count", len(got) == e["count"],
                          f"trace {len(got)}, launched {e['count']} ({e['api']})")
        if not got:
            continue

        def same(field, want, name=None, rows=got, lbl=label):
            vals = Counter(r[field] for r in rows)
            good = set(vals) == {want}
            checks.check(f"{lbl}: {name or field}", good,
                         f"trace {dict(vals)}, runtime says {want}")
            return good

        # CUPTI reports the registers the driver allocates per thread, which is at least 16 on
        # H100 (driver 580, CUDA 13.0): kernels with numRegs < 16 read 16. Exact otherwise.
        # Occupancy is unaffected: 16 registers x 2048 threads = 32768 <= 65536 per SM.
        regs = Counter(r["regs"] for r in got)
        want_regs = {e["numRegs"], max(e["numRegs"], 16)}
        checks.check(f"{label}: registers (numRegs; min 16 as CUPTI allocates)",
                     set(regs) <= want_regs and len(regs) == 1,
                     f"trace {dict(regs)}, cudaFuncGetAttributes.numRegs {e['numRegs']}")
        same("staticSmem", e["staticSmem"], "static smem (sharedSizeBytes)")
        same("localPerThread", e["localBytesPerThread"], "local memory/thread (localSizeBytes)")
        same("launchType", e["launchType"], "launchType")
        same("smemLimitConfig", e["shmemLimitConfig"], "sharedMemoryLimitConfig")
        if e["carveoutPct"] >= 0:
            same("carveoutPct", e["carveoutPct"], "requested carveout %")
        else:
            same("carveoutPct", None, "requested carveout % (none requested: NULL)")
        cluster = tuple(e["cluster"])
        got_clusters = Counter((r["clusterX"], r["clusterY"], r["clusterZ"]) for r in got)
        if cluster != (0, 0, 0):
            checks.check(f"{label}: cluster dims", set(got_clusters) == {cluster},
                         f"trace {dict(got_clusters)}, launched {cluster}")
            mac = Counter(r["maxActiveClusters"] for r in got)
            checks.check(f"{label}: maxActiveClusters", set(mac) == {e["maxActiveClusters"]},
                         f"trace {dict(mac)}, cudaOccupancyMaxActiveClusters {e['maxActiveClusters']}")
        else:
            checks.check(f"{label}: no cluster", all(c in ((0, 0, 0), (1, 1, 1)) for c in got_clusters),
                         f"trace {dict(got_clusters)}")
        graph_ids = [r["graphId"] for r in got]
        if e["graph"]:
            checks.check(f"{label}: graphId != 0", all(g != 0 for g in graph_ids),
                         f"graphIds {sorted(set(graph_ids))}")
            node_ids = {r["graphNodeId"] for r in got}
            checks.check(f"{label}: graphNodeId != 0", 0 not in node_ids,
                         f"{len(node_ids)} distinct node ids")
        else:
            checks.check(f"{label}: graphId = 0", all(g == 0 for g in graph_ids),
                         f"graphIds {sorted(set(graph_ids))}")
        if e["streams"] > 1:
            n_streams = len({r["streamId"] for r in got})
            checks.check(f"{label}: distinct streams", n_streams == e["streams"],
                         f"trace {n_streams}, launched on {e['streams']}")
        timed = [r for r in got if r["start"] and r["end"] and r["end"] > r["start"]]
        untimed_replayed = [r for r in got if not r["start"] and not r["end"] and r["correlationId"] in replayed]
        checks.check(f"{label}: timestamps", len(timed) + len(untimed_replayed) == len(got),
                     f"{len(timed)}/{len(got)} with end > start > 0"
                     + (f", {len(untimed_replayed)} measured under kernel replay (no timestamps by design)"
                        if untimed_replayed else ""))
        executed = [r["smemExecuted"] for r in got if r["smemExecuted"]]
        need = e["staticSmem"] + e["dynamicSmem"]
        checks.check(f"{label}: sharedMemoryExecuted >= smem/block",
                     all(x >= need for x in executed),
                     f"executed {sorted(set(executed))[:4]}, block needs {need} "
                     f"({len(got) - len(executed)} not reported)")
        if e["cppName"]:
            dem = {r["demangled"] for r in got}
            want = f"occgpu::{e['key']}("
            checks.check(f"{label}: demangled name", all(d.startswith(want) or f" {want}" in d for d in dem),
                         f"{sorted(dem)[:2]}")
        checks.info(f"{label}: oracle", f"blocksPerSm {e['blocksPerSm']} (cudaOccupancy...), "
                                        f"regs {e['numRegs']}, api {e['api']}")

    leftover = {k: len(v) for k, v in by_group.items()}
    checks.check("no launches with unexpected configurations", not leftover,
                 f"{leftover}" if leftover else "")

    non_graph = [l for l in launches if l["graphId"] == 0]
    corr = Counter(l["correlationId"] for l in non_graph)
    dup = [c for c, n in corr.items() if n > 1]
    checks.check("correlationId unique per non-graph launch", not dup and 0 not in corr,
                 f"{len(dup)} duplicated" if dup else f"{len(corr)} ids")

    dev = expected["device"]
    row = db.execute("SELECT smCount, computeMajor, computeMinor, maxThreadsPerBlock, "
                     "maxRegistersPerSm, maxRegistersPerBlock, maxShmemPerBlock, "
                     "maxShmemPerBlockOptin, maxShmemPerSm, threadsPerWarp, maxBlocksPerSm "
                     "FROM TARGET_INFO_GPU").fetchall()
    if checks.check("TARGET_INFO_GPU has one row", len(row) == 1, f"{len(row)} rows"):
        got = dict(zip(["smCount", "computeMajor", "computeMinor", "maxThreadsPerBlock",
                        "maxRegistersPerSm", "maxRegistersPerBlock", "maxShmemPerBlock",
                        "maxShmemPerBlockOptin", "maxShmemPerSm", "threadsPerWarp",
                        "maxBlocksPerSm"], row[0]))
        for k, v in got.items():
            checks.check(f"TARGET_INFO_GPU.{k}", v == dev[k],
                         f"trace {v}, cudaGetDeviceProperties {dev[k]}")
    occ_dev = db.execute("SELECT reservedSharedMemPerBlock, maxThreadsPerMultiprocessor "
                         "FROM OCC_DEVICE").fetchall()
    if checks.check("OCC_DEVICE has one row", len(occ_dev) == 1, f"{len(occ_dev)} rows"):
        checks.check("OCC_DEVICE.reservedSharedMemPerBlock",
                     occ_dev[0][0] == dev["reservedSharedMemPerBlock"],
                     f"trace {occ_dev[0][0]}, runtime {dev['reservedSharedMemPerBlock']}")
        checks.check("OCC_DEVICE.maxThreadsPerMultiprocessor",
                     occ_dev[0][1] == dev["maxThreadsPerMultiprocessor"],
                     f"trace {occ_dev[0][1]}, runtime {dev['maxThreadsPerMultiprocessor']}")
    meta = dict(db.execute("SELECT name, value FROM OCC_META").fetchall())
    checks.check("OCC_META.schema_version", meta.get("schema_version") == "1",
                 f"{meta.get('schema_version')!r}")
    checks.info("OCC_META", ", ".join(f"{k}={v}" for k, v in sorted(meta.items()))[:300])
    db.close()
    return checks


def main(argv):
    if len(argv) != 3:
        print("usage: validate_trace.py TRACE.db EXPECTED.json", file=sys.stderr)
        return 2
    with open(argv[2]) as f:
        expected = json.load(f)
    checks = validate(argv[1], expected, Checks())
    checks.print_table()
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
