#!/usr/bin/env python3
"""The timeline export (`occ-report --format trace`) checked three ways, for one input or a
set of rank files:

  structure  every event has the Chrome Trace Event fields, times are microseconds with at most
             nanosecond decimals, kernel slices carry Kineto's args and occtrace's (a Triton
             kernel's source names as the input's OCC_TRITON_SOURCE has them), and no two
             slices of one track (pid = device, tid = stream) overlap;
  round trip the export read back by occ-report's torch.profiler reader lists the same launches
             (configuration and duration, as a multiset) as the input does;
  HTA        Holistic Trace Analysis (PyPI holistictraceanalysis) loads the exported rank files
             with TraceAnalysis and finds, per rank, the input's kernel count and GPU time.

The expected counts and times come from `occ-report launches --format csv` on the input: the
reader's own per-launch listing, not the exporter. HTA comes from a venv made next to the build
(pip install holistictraceanalysis); where PyPI cannot be reached the HTA part is skipped with
the reason and the exit code 77 (ctest SKIP_RETURN_CODE), the other two still run first.

usage: timeline_check.py OCC_REPORT WORKDIR INPUT...
"""
import csv
import gzip
import io
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

SKIP = 77


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def launches(occ_report, path):
    """(config tuple, duration ns) per launch, from occ-report's own listing."""
    out = run([occ_report, "launches", path, "--format", "csv"])
    rows = []
    for r in csv.DictReader(io.StringIO(out)):
        # A launch the profiler replayed has no start time (an empty cell) and no place on a
        # timeline; starts count from the trace's first timed launch, which is 0.
        if r["Start (ns)"] == "":
            continue
        config = (r["Name"], r["GrdX"], r["GrdY"], r["GrdZ"], r["BlkX"], r["BlkY"], r["BlkZ"],
                  r["Reg/Trd"], r["StcSMem (B)"], r["DymSMem (B)"], r["Device"], r["Strm"])
        rows.append((config, int(r["Duration (ns)"])))
    return rows


def source_overlaps(occ_report, path):
    """Launches of one stream that overlap the one before in the input itself (Hopper's
    programmatic dependent launch lets a kernel start before its predecessor ends)."""
    out = run([occ_report, "launches", path, "--format", "csv"])
    tracks = defaultdict(list)
    for r in csv.DictReader(io.StringIO(out)):
        if r["Start (ns)"] == "":
            continue
        tracks[(r["Device"], r["Strm"])].append((int(r["Start (ns)"]), int(r["Duration (ns)"])))
    n = 0
    for slices in tracks.values():
        slices.sort()
        n += sum(1 for (t0, d0), (t1, _) in zip(slices, slices[1:]) if t0 + d0 > t1)
    return n


def expected_source_args(path):
    """{kernel name: args} a Triton kernel's slice must carry, read here from the input's
    OCC_TRITON_SOURCE rows (an occtrace trace, or its text SQL under the trace schema)."""
    import sqlite3
    if path.endswith(".sql"):
        schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema", "trace_schema.sql")
        db = sqlite3.connect(":memory:")
        text = open(path).read()
        if "CREATE TABLE" not in text:  # a golden's rows only (tests/golden/README.md)
            db.executescript(open(schema).read())
        db.executescript(text)
    elif path.endswith(".db"):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    else:
        return {}
    if not db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'OCC_TRITON_SOURCE'").fetchone()[0]:
        return {}
    expected = {}
    for name, file, line, nodes, aten in db.execute(
            "SELECT s.value, t.sourceFile, t.sourceLine, t.sourceNodes, t.originalAten "
            "FROM OCC_TRITON_SOURCE t JOIN StringIds s ON s.id = t.mangledName"):
        if nodes or aten:
            expected[name] = {k: v for k, v in (("source nodes", nodes), ("original aten", aten)) if v}
        elif file:
            expected[name] = {"defined at": os.path.basename(file) + (f":{line}" if line else "")}
    return expected


def check_source_args(doc, expected):
    """Every kernel slice of a function with a recorded source carries it; returns how many."""
    checked = 0
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"] in expected:
            got = {k: e["args"].get(k) for k in expected[e["name"]]}
            assert got == expected[e["name"]], f"{e['name']}: source args {got}, the input has {expected[e['name']]}"
            checked += 1
    return checked


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def micros_text_ok(value):
    # ns precision: at most 3 decimals, as torch.profiler writes ts and dur.
    text = repr(value)
    return "e" not in text and ("." not in text or len(text.split(".")[1]) <= 3)


def source_backend(path):
    """The process group's backend as a torch.profiler input states it; None for others (an
    occtrace trace does not know it, and the export must not guess)."""
    if not (path.endswith(".json") or path.endswith(".json.gz")):
        return None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f).get("distributedInfo", {}).get("backend")


def check_structure(path, allowed_overlaps):
    doc = load(path)
    for key in ("traceEvents", "deviceProperties", "baseTimeNanoseconds"):
        assert key in doc, f"{path}: no top-level {key}"
    tracks = defaultdict(list)
    kernels = 0
    for i, e in enumerate(doc["traceEvents"]):
        for key in ("ph", "name", "pid", "tid"):
            assert key in e, f"{path}: event {i} lacks {key}: {e}"
        ph = e["ph"]
        assert ph in ("X", "M", "C", "i"), f"{path}: event {i}: unexpected ph {ph}"
        if ph != "M":
            assert isinstance(e["ts"], (int, float)) and micros_text_ok(e["ts"]), f"event {i}: ts {e.get('ts')}"
        if ph == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0 and micros_text_ok(e["dur"]), \
                f"event {i}: dur {e['dur']}"
            assert e["cat"] == "kernel"
            args = e["args"]
            for key in ("device", "stream", "correlation", "registers per thread", "shared memory",
                        "grid", "block", "theoretical occupancy %", "limiter", "owner"):
                assert key in args, f"{path}: kernel event {i} lacks args.{key}"
            assert len(args["grid"]) == 3 and len(args["block"]) == 3
            assert e["pid"] == args["device"] and e["tid"] == args["stream"], f"event {i}: track != device/stream"
            tracks[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round(e["dur"] * 1000)))
            kernels += 1
        if ph == "C":
            value = e["args"]["achieved occupancy %"]
            assert 0 <= value <= 100.5, f"event {i}: counter {value}"
    overlaps = 0
    for track, slices in tracks.items():
        slices.sort()
        for (t0, d0), (t1, _) in zip(slices, slices[1:]):
            if t0 + d0 > t1:
                overlaps += 1

    # The export adds no overlap: the only ones are those the input recorded.
    assert overlaps == allowed_overlaps, (
        f"{path}: {overlaps} overlapping slices on one track, the input has {allowed_overlaps}")
    names = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert set(tracks) <= names, f"{path}: tracks without thread_name: {set(tracks) - names}"
    return doc, kernels


def hta_python(workdir):
    """A Python with HTA: this one, or a venv made in the build tree."""
    try:
        import hta  # noqa: F401
        return sys.executable, ""
    except ImportError:
        pass
    venv = os.path.join(os.path.dirname(os.path.abspath(workdir)), "hta-venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and subprocess.run([python, "-c", "import hta"], capture_output=True).returncode == 0:
        return python, ""
    r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "cannot make a venv: " + r.stderr.strip()[-300:]
    r = subprocess.run([python, "-m", "pip", "install", "-q", "holistictraceanalysis"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        return None, "pip install holistictraceanalysis failed (PyPI unreachable?): " + r.stderr.strip()[-300:]
    return python, ""


HTA_SCRIPT = r"""
import json, os, sys
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"   # keep ns decimals: compare exact durations
import logging
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
t = TraceAnalysis(trace_dir=sys.argv[1])
out = {}
for rank in sorted(t.t.get_all_traces()):
    df = t.t.get_trace(rank)
    sym = t.t.symbol_table.get_sym_id_map()
    k = df[df["cat"] == sym["kernel"]]
    out[rank] = {"kernels": int(len(k)), "dur_us": float(k["dur"].sum()),
                 "streams": sorted(int(s) for s in k["stream"].unique())}
# GPU kernel breakdown: per kernel (summed durations) and per kernel type (busy time).
types, kernels = t.get_gpu_kernel_breakdown(visualize=False, num_kernels=1_000_000, include_memory_kernels=True)
out["breakdown"] = {"kernels_us": float(kernels["sum (us)"].sum()), "types_us": float(types["sum"].sum())}
print(json.dumps(out))
"""


def busy_whole_us(doc):
    """Busy time of the export's kernel slices as HTA's kernel-type breakdown counts it: the
    slices merged into intervals (hta.utils.utils.merge_kernel_intervals), each interval's length
    truncated to whole microseconds (its `.astype(int)` in _get_gpu_kernel_type_time). That
    truncation is why the type total reads below the kernels' summed time on short kernels."""
    slices = sorted((e["ts"], e["ts"] + e["dur"]) for e in doc["traceEvents"] if e.get("cat") == "kernel")
    merged = []
    for start, end in slices:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return sum(int(end - start) for start, end in merged)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    occ_report, workdir, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(workdir, exist_ok=True)
    export_dir = os.path.join(workdir, "export")
    os.makedirs(export_dir, exist_ok=True)
    for f in os.listdir(export_dir):
        os.remove(os.path.join(export_dir, f))
    target = os.path.join(export_dir, "run.json.gz") if len(inputs) == 1 else export_dir
    run([occ_report, *inputs, "--format", "trace", "-o", target, "--force"])
    exports = sorted(os.path.join(export_dir, f) for f in os.listdir(export_dir))
    assert len(exports) == len(inputs), f"{len(exports)} files for {len(inputs)} inputs"

    per_rank = {}
    busy_us = 0
    for rank, (source, export) in enumerate(zip(inputs, exports)):
        expected = launches(occ_report, source)
        recorded_overlaps = source_overlaps(occ_report, source)
        doc, kernels = check_structure(export, recorded_overlaps)
        assert kernels == len(expected), f"{export}: {kernels} kernel slices, input has {len(expected)} launches"
        print(f"structure ok: {export}: {kernels} kernel slices, no overlap beyond the "
              f"{recorded_overlaps} the input recorded")
        sources = expected_source_args(source)
        if sources:
            checked = check_source_args(doc, sources)
            assert checked > 0, f"{export}: no kernel slice of the {len(sources)} functions with a source"
            print(f"source ok: {checked} kernel slices carry the source names the input recorded "
                  f"for {len(sources)} Triton functions")
        back = launches(occ_report, export)
        assert Counter(back) == Counter(expected), (
            f"round trip differs: {len(back)} vs {len(expected)} launches; first differences: "
            f"{list((Counter(back) - Counter(expected)).items())[:3]} / {list((Counter(expected) - Counter(back)).items())[:3]}")
        print(f"round trip ok: {len(back)} launches with the same configuration and duration")
        backend = source_backend(source)
        assert doc.get("distributedInfo", {}).get("backend") == backend, (
            f"{export}: backend {doc.get('distributedInfo', {}).get('backend')!r}, the input says {backend!r}")
        r = doc.get("distributedInfo", {}).get("rank", 0 if len(inputs) == 1 else None)
        assert r is not None, f"{export}: several inputs but no distributedInfo rank"
        per_rank[r] = (len(expected), sum(d for _, d in expected))
        busy_us += busy_whole_us(doc)

    python, why = hta_python(workdir)
    if python is None:
        print(f"SKIP HTA: {why}")
        return SKIP
    r = subprocess.run([python, "-c", HTA_SCRIPT, export_dir], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: HTA could not load the export: {r.stderr.strip()[-2000:]}")
    got = json.loads(r.stdout.strip().splitlines()[-1])
    total_us = 0.0
    for rank, (count, ns) in per_rank.items():
        h = got[str(rank)]
        assert h["kernels"] == count, f"HTA rank {rank}: {h['kernels']} kernels, trace has {count}"
        assert abs(h["dur_us"] * 1000 - ns) <= 1 + count * 0.001, f"HTA rank {rank}: {h['dur_us']} us, trace {ns} ns"
        total_us += ns / 1000
        print(f"HTA ok: rank {rank}: {count} kernels, {ns / 1000:.3f} us, streams {h['streams']}")
    b = got["breakdown"]
    assert abs(b["kernels_us"] - total_us) <= 0.001 * total_us + 1, (
        f"HTA kernel breakdown: {b['kernels_us']} us over kernels, trace {total_us} us")
    assert b["types_us"] == busy_us, (
        f"HTA kernel-type breakdown {b['types_us']} us, the export's busy intervals {busy_us} us")
    print(f"HTA ok: kernel breakdown {b['kernels_us']:.3f} us over kernels (the trace's), "
          f"{b['types_us']:.0f} us by type (busy intervals in whole us, as HTA counts them)")
    print("timeline check: 3 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
