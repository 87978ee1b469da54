#!/usr/bin/env python3
"""Checks occ-report's kernel owners against the code itself, independently of how occtrace
decides them (issue #29): for every function in a trace whose module was loaded by a shared
object, the loaded object that *holds the function's code* must be the owner occ-report names.

    check_owners.py OCC_REPORT TRACE.db [--jit-dir DIR ...] [--inductor-dir DIR]

- The owner occ-report gives each kernel comes from `occ-report report --format json`.
- The independent side: `cuobjdump -symbols OBJECT` lists the device functions compiled into each
  loader object the trace recorded (OCC_MODULE.loader, full paths on the machine that traced),
  compressed fatbins included. A function found in an object is owned by what that object is
  (libcudnn* -> cuDNN, libcublas* -> cuBLAS, libtorch* -> PyTorch (ATen), the program -> yours).
- Kernels compiled at run time (Triton, CuPy, Numba, XLA) are in no object file: their names are
  looked for in the compilers' own output folders given with --jit-dir (Triton's cache, CuPy's
  kernel cache, an XLA dump), as bytes, and must be owned by that compiler's kind.

- With --inductor-dir (Inductor's cache, $TORCHINDUCTOR_CACHE_DIR): the source nodes and ATen ops
  the trace recorded for each torch.compile kernel (OCC_TRITON_SOURCE) are checked against the
  output code modules there, read here with a parser of its own: one of the modules that declare
  the kernel name must list them, and, when the trace names the kernel's file, that module's
  "# kernel path:" must be that file. Every Inductor kernel's source names are printed.

Prints one line per function and a summary; exits 1 on any mismatch, 2 on bad input.
Run on the GPU machine (cuobjdump from the CUDA toolkit on PATH) right after the workload.
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys

# What a holding object's file name says its owner is: (prefix, origin, owner_library).
OBJECT_OWNERS = [
    ("libcudnn", "vendor", "cuDNN"), ("libcublasLt", "vendor", "cuBLASLt"), ("libcublas", "vendor", "cuBLAS"),
    ("libnccl", "vendor", "NCCL"), ("libcufft", "vendor", "cuFFT"), ("libcusparse", "vendor", "cuSPARSE"),
    ("libcurand", "vendor", "cuRAND"), ("libcusolver", "vendor", "cuSOLVER"),
    ("libtorch", "aten", "PyTorch (ATen)"), ("libc10_cuda", "aten", "PyTorch (ATen)"),
]
# JIT folders: which origins may own a name found there.
JIT_KINDS = {"triton": {"triton", "inductor"}, "cupy": {"cupy", "vendor"}, "xla": {"vendor"},
             "numba": {"numba"}}


# Python packages whose compiled objects hold their own kernels: (folder under site-packages, ...).
PACKAGE_OWNERS = [("cupy/", "vendor", "CuPy"), ("jaxlib/", "vendor", "XLA"), ("jax_plugins/", "vendor", "XLA")]


def expected_owner(path):
    base = os.path.basename(path)
    for prefix, origin, library in OBJECT_OWNERS:
        if base.startswith(prefix):
            return origin, library
    rel = re.split(r"(?:site|dist)-packages/", path)[-1]
    for folder, origin, library in PACKAGE_OWNERS:
        if rel.startswith(folder):
            return origin, library
    if "site-packages" in path or "dist-packages" in path:
        return None  # a package occtrace does not name: unknown is right, nothing to compare
    return "cuda_cpp", ""


def device_symbols(path, cache={}):
    if path not in cache:
        try:
            out = subprocess.run(["cuobjdump", "-symbols", path], capture_output=True, text=True,
                                 timeout=900).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"  cuobjdump {path}: {e}", file=sys.stderr)
            out = ""
        cache[path] = set(re.findall(r"STT_FUNC\s+STB_\w+\s+(?:STO_\w+\s+)?(\S+)", out))
    return cache[path]


def jit_files(jit_dirs, cache={}):
    """(kind, path, bytes) of every file under the JIT folders, read once (files under 64 MiB)."""
    key = tuple(jit_dirs)
    if key not in cache:
        files = []
        for d in jit_dirs:
            kind = next((k for k in JIT_KINDS if k in d.lower()), None)
            for root, _, names in os.walk(d):
                for f in names:
                    p = os.path.join(root, f)
                    try:
                        if os.path.getsize(p) < 64 << 20:
                            files.append((kind, p, open(p, "rb").read()))
                    except OSError:
                        pass
        cache[key] = files
    return cache[key]


def jit_holder(name, jit_dirs):
    needle = name.encode()
    for kind, p, data in jit_files(jit_dirs):
        if needle in data:
            return kind, p
    return None, None


KERNEL_DECL = re.compile(r"^(\w+) = async_compile\.triton\('(\w+)'")
NODES = re.compile(r"^# (?:Topologically Sorted|Unsorted) Source Nodes: \[(.*)\], Original ATen: \[(.*)\]$")


def inductor_declarations(inductor_dir):
    """{kernel name: [(kernel file name, source nodes, ATen ops, module path)]} over the output
    code modules under Inductor's cache."""
    declared = {}
    for root, dirs, files in os.walk(inductor_dir):
        dirs[:] = [d for d in dirs if d != "triton"]  # Triton's own cache: no output code there
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(root, f)
            try:
                text = open(path, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            kernel_file = nodes = None
            for line in text.splitlines():
                if line.startswith("# kernel path: "):
                    kernel_file, nodes = os.path.basename(line[len("# kernel path: "):].strip()), None
                elif (m := NODES.match(line)) is not None:
                    nodes = (m.group(1), m.group(2))
                elif (m := KERNEL_DECL.match(line)) is not None and m.group(1) == m.group(2):
                    if nodes is not None:
                        declared.setdefault(m.group(1), []).append((kernel_file, nodes[0], nodes[1], path))
                    kernel_file = nodes = None
    return declared


def check_sources(db, groups, inductor_dir):
    """Returns (checked, mismatched) and prints each torch.compile kernel's recorded source."""
    has_table = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'OCC_TRITON_SOURCE'").fetchone()[0]
    rows = {}
    if has_table:
        for name, file, line, nodes, aten, wrapper in db.execute(
                "SELECT s.value, t.sourceFile, t.sourceLine, t.sourceNodes, t.originalAten, t.wrapperFile "
                "FROM OCC_TRITON_SOURCE t JOIN StringIds s ON s.id = t.mangledName"):
            rows[name] = (file, line, nodes, aten, wrapper)
    declared = inductor_declarations(inductor_dir) if inductor_dir else {}
    checked = mismatched = 0
    inductor_names = sorted({g.get("mangledName") or g.get("mangled_name") for g in groups
                             if g.get("origin") == "inductor"})
    for name in inductor_names:
        row = rows.get(name)
        if row is None or row[2] is None:
            print(f"source      {name[:90]}: none recorded"
                  f"{' (declared by ' + str(len(declared[name])) + ' module(s))' if name in declared else ''}")
            continue
        file, line, nodes, aten, wrapper = row
        if not inductor_dir:
            print(f"source      {name[:90]}: from [{nodes}] ({aten}) (not checked: no --inductor-dir)")
            continue
        candidates = declared.get(name, [])
        if file:
            candidates = [c for c in candidates if c[0] == os.path.basename(file)]
        ok = any(c[1] == nodes and c[2] == aten for c in candidates)
        checked += 1
        mismatched += not ok
        print(f"source {'ok   ' if ok else 'MISMATCH'} {name[:90]}: from [{nodes}] ({aten})"
              f"{'' if ok else f'; the modules say {candidates[:2]}'}")
    for name, (file, line, nodes, aten, wrapper) in sorted(rows.items()):
        if nodes is None and file:
            print(f"source      {name[:90]}: defined at {os.path.basename(file)}:{line}")
    recorded = sum(1 for n in inductor_names if n in rows and rows[n][2] is not None)
    print(f"check_owners: {checked} torch.compile kernels' source nodes checked against Inductor's output code, "
          f"{mismatched} mismatched, {len(inductor_names) - recorded} Inductor kernels without source nodes")
    return checked, mismatched


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("occ_report")
    ap.add_argument("trace")
    ap.add_argument("--jit-dir", action="append", default=[],
                    help="a JIT compiler's output folder; its kind from its path (triton, cupy, xla, numba)")
    ap.add_argument("--inductor-dir", help="Inductor's cache ($TORCHINDUCTOR_CACHE_DIR): check the recorded source nodes")
    args = ap.parse_args()
    if not os.path.isfile(args.trace):
        print(f"check_owners: no such trace: {args.trace}", file=sys.stderr)
        return 2
    report = json.loads(subprocess.run([args.occ_report, "report", args.trace, "--format", "json", "--top", "0"],
                                       capture_output=True, text=True, check=True).stdout)
    db = sqlite3.connect(f"file:{args.trace}?mode=ro", uri=True)
    loaders = {}
    for name, loader in db.execute(
            "SELECT DISTINCT s.value, m.loader FROM OCC_FUNCTION f JOIN StringIds s ON s.id = f.mangledName "
            "JOIN OCC_MODULE m ON m.moduleId = f.moduleId WHERE m.loader IS NOT NULL"):
        loaders.setdefault(name, set()).add(loader)
    checked = mismatched = unverified = 0
    seen = set()
    for g in report.get("groups", []):
        name = g.get("mangledName") or g.get("mangled_name")
        if name in seen:
            continue
        seen.add(name)
        origin, library = g.get("origin", ""), g.get("ownerLibrary", g.get("owner_library", ""))
        verdict = None
        for loader in sorted(loaders.get(name, ())):
            if name in device_symbols(loader):
                want = expected_owner(loader)
                if want is None:
                    verdict = ("ok" if origin == "unknown" else "MISMATCH", f"code in {loader} (unnamed package)")
                else:
                    ok = origin == want[0] and (not want[1] or library.startswith(want[1][:6]))
                    verdict = ("ok" if ok else "MISMATCH", f"code in {loader}: expected {want[0]} {want[1]}")
                break
        if verdict is None and args.jit_dir:
            kind, holder = jit_holder(name, args.jit_dir)
            if kind is not None:
                verdict = ("ok" if origin in JIT_KINDS[kind] else "MISMATCH", f"compiled by {kind}: {holder}")
        if verdict is None:
            unverified += 1
            print(f"unverified  {origin:9} {library:18} {name[:100]}")
            continue
        checked += 1
        mismatched += verdict[0] != "ok"
        print(f"{verdict[0]:11} {origin:9} {library:18} {name[:100]}  ({verdict[1]})")
    print(f"check_owners: {checked} functions checked against the code's holder, {mismatched} mismatched, "
          f"{unverified} not verifiable (code in no listed object)")
    _, source_mismatched = check_sources(db, report.get("groups", []), args.inductor_dir)
    return 1 if mismatched or source_mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
