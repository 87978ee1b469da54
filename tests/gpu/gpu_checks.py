#!/usr/bin/env python3
"""End-to-end checks of libocctrace on a real GPU (ctest label `gpu`; tests/gpu/run.sh runs all).

    gpu_checks.py --case CASE[,CASE...]|all --lib libocctrace.so --launcher occtrace
                  --matrix launch_matrix --work DIR [--workloads DIR]
    gpu_checks.py --skip-reason TEXT          (prints it, exits 77: ctest SKIP_RETURN_CODE)

Cases:
  kernels        launch_matrix traced via CUDA_INJECTION64_PATH, LD_PRELOAD and the launcher;
                 validate_trace.py compares every launch with the runtime's own answers
  torch-count    train_small.py kernels/step: two traced runs (STEPS 10, 30) vs torch.profiler;
                 C++ names demangled
  numba, triton  kernels of both JITs are recorded with their names, counts, grid, block
  sigterm, sigkill, os-exit
                 killed / exiting without atexit after 'launched N' markers: the file passes
                 PRAGMA integrity_check and holds every launch made before the last marker
  workers        train_small.py WORKERS=2 (forked DataLoader) completes, one trace, same launches
  torchprof      torch.profiler in the same process: the program completes normally and
                 occtrace's stderr names the conflict
  cupti-client   a second CUPTI client (cupti_client_probe) subscribing after occtrace: occtrace
                 names it; subscribing before the first CUDA call: occtrace steps aside, says so
  output         stdout of traced and untraced runs identical, exit codes preserved,
                 OCCTRACE_QUIET=1 silences occtrace
  achieved       launch_matrix with OCCTRACE_ACHIEVED=sample: launch counts unchanged, OCC_ACHIEVED
                 rows join launches, measured values lie in (0, theoretical] where theoretical
                 comes from cudaOccupancyMaxActiveBlocksPerMultiprocessor (skipped when the build
                 has no achieved-occupancy support)
Exit status: 0 all checks passed, 1 a check failed, 77 nothing could run (reason printed).
"""
import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from validate_trace import Checks, validate  # noqa: E402

SKIP = 77
ALL_CASES = ["kernels", "torch-count", "numba", "triton", "sigterm", "sigkill", "os-exit",
             "workers", "torchprof", "cupti-client", "output", "achieved"]
OCC_VARS = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "OCCTRACE_OUTPUT", "OCCTRACE_FORCE",
            "OCCTRACE_QUIET", "OCCTRACE_ACHIEVED")


class Skip(Exception):
    pass


class Ctx:
    def __init__(self, args):
        self.lib = os.path.abspath(args.lib) if args.lib else None
        self.launcher = os.path.abspath(args.launcher) if args.launcher else None
        self.matrix = os.path.abspath(args.matrix) if args.matrix else None
        self.probe = os.path.abspath(args.probe) if args.probe else None
        self.work = os.path.abspath(args.work)
        self.workloads = os.path.abspath(args.workloads or os.path.join(HERE, "workloads"))
        self.python = args.python or sys.executable
        self.timeout = args.timeout
        self.achieved = args.achieved
        self.cache = {}
        os.makedirs(self.work, exist_ok=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def workload(self, name):
        return os.path.join(self.workloads, name)

    @staticmethod
    def bare_env(**extra):
        env = {k: v for k, v in os.environ.items() if k not in OCC_VARS}
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def traced_env(self, db, how="inject", **extra):
        """Environment tracing into db; how = inject (CUDA_INJECTION64_PATH) or preload."""
        achieved = {} if self.achieved == "default" else {"OCCTRACE_ACHIEVED": self.achieved}
        env = self.bare_env(**{"OCCTRACE_OUTPUT": db, "OCCTRACE_FORCE": 1, **achieved, **extra})
        if how == "inject":
            env["CUDA_INJECTION64_PATH"] = self.lib
        else:
            env["LD_PRELOAD"] = self.lib
        return env

    def run(self, cmd, env, log, timeout=None):
        """Runs cmd, saves stdout/stderr under work/log.*, returns CompletedProcess."""
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=timeout or self.timeout)
        with open(self.path(log + ".out"), "w") as f:
            f.write(p.stdout)
        with open(self.path(log + ".err"), "w") as f:
            f.write(p.stderr)
        return p

    def fresh(self, name):
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(self.path(name) + suffix):
                os.remove(self.path(name) + suffix)
        return self.path(name)


def need_gpu():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Skip(f"no NVIDIA GPU: nvidia-smi not usable ({e})")
    if p.returncode != 0 or "GPU" not in p.stdout:
        raise Skip("no NVIDIA GPU: nvidia-smi -L lists none")


def need_module(ctx, module, probe):
    key = "module:" + module
    if key not in ctx.cache:
        p = subprocess.run([ctx.python, "-c", probe], capture_output=True, text=True,
                           env=ctx.bare_env(), timeout=300)
        ctx.cache[key] = (p.returncode == 0, (p.stderr.strip().splitlines() or [""])[-1])
    ok, why = ctx.cache[key]
    if not ok:
        raise Skip(f"{module} with CUDA not usable in {ctx.python}: {why}")


def need_torch(ctx):
    need_module(ctx, "torch", "import torch; assert torch.cuda.is_available()")


def need(ctx, *what):
    for w in what:
        if getattr(ctx, w) is None or not os.path.exists(getattr(ctx, w)):
            raise Skip(f"--{w} not given or missing (not built?)")


def one(db, sql, *args):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchone()[0]
    finally:
        con.close()


def integrity(db):
    return one(db, "PRAGMA integrity_check")


def launch_count(db, name_like=None):
    # Every launch in every mode: the Nsight Systems view counts light traces' launch calls too
    # (OCC_LAUNCH holds only the launches their timing windows recorded).
    if name_like is None:
        return one(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    return one(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                   "ON s.id = k.mangledName WHERE s.value LIKE ?", f"%{name_like}%")


def stderr_tail(p, n=3):
    lines = [l for l in p.stderr.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def demangle_with_cxxfilt(names):
    """{mangled: c++filt's output} or None when c++filt is not installed."""
    try:
        p = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                           text=True, timeout=60)
    except OSError:
        return None
    out = p.stdout.split("\n")
    return dict(zip(names, out)) if p.returncode == 0 and len(out) >= len(names) else None


def check_ran(checks, name, p, want_rc=0):
    return checks.check(name, p.returncode == want_rc,
                        f"exit {p.returncode}" + ("" if p.returncode == want_rc else
                                                  f" (want {want_rc}): {stderr_tail(p)}"))


# --- cases ------------------------------------------------------------------------------------

def case_kernels(ctx, checks):
    need_gpu()
    need(ctx, "lib", "matrix")
    modes = [("inject", None), ("preload", None)]
    if ctx.launcher and os.path.exists(ctx.launcher):
        modes.append(("launcher", None))
    else:
        checks.info("kernels[launcher]", "launcher not given: skipped")
    for how, _ in modes:
        db = ctx.fresh(f"kernels_{how}.db")
        expected_path = ctx.path(f"kernels_{how}.expected.json")
        if how == "launcher":
            achieved = [] if ctx.achieved == "default" else ["--achieved", ctx.achieved]
            cmd = [ctx.launcher, "-o", db, "--force", *achieved, "--", ctx.matrix, expected_path]
            env = ctx.bare_env()
        else:
            cmd = [ctx.matrix, expected_path]
            env = ctx.traced_env(db, how)
        p = ctx.run(cmd, env, f"kernels_{how}")
        if p.returncode == SKIP:
            raise Skip(f"launch_matrix: {stderr_tail(p)}")
        if not check_ran(checks, f"kernels[{how}]: launch_matrix ran", p):
            continue
        if not checks.check(f"kernels[{how}]: trace written", os.path.exists(db), db):
            continue
        with open(expected_path) as f:
            expected = json.load(f)
        sub = validate(db, expected, Checks(f"kernels[{how}]: "))
        if how == "inject":
            checks.rows.extend(sub.rows)  # the full table once
        else:
            n = len([r for r in sub.rows if r[1] == "PASS"])
            checks.rows.extend(sub.failed)
            checks.check(f"kernels[{how}]: same validation", not sub.failed,
                         f"{n} checks passed, {len(sub.failed)} failed")


def traced_train(ctx, steps, log, workers=0, extra=None):
    db = ctx.fresh(f"{log}.db")
    env = ctx.traced_env(db, STEPS=steps, WORKERS=workers, **(extra or {}))
    p = ctx.run([ctx.python, ctx.workload("train_small.py")], env, log)
    return p, db


def case_torch_count(ctx, checks):
    need_gpu()
    need(ctx, "lib")
    need_torch(ctx)
    counts = {}
    for steps in (10, 30):
        p, db = traced_train(ctx, steps, f"torch_steps{steps}")
        if not check_ran(checks, f"torch-count: traced STEPS={steps} ran", p):
            return
        checks.check(f"torch-count: STEPS={steps} integrity", integrity(db) == "ok")
        counts[steps] = launch_count(db)
    ctx.cache["torch_steps30_db"] = db
    ctx.cache["torch_steps30_count"] = counts[30]
    traced_per_step = (counts[30] - counts[10]) / 20
    checks.info("torch-count: traced launches", f"STEPS=10: {counts[10]}, STEPS=30: {counts[30]}")

    env = ctx.bare_env(TORCHPROF=1, CUDAONLY=1, STEPS=20)
    p = ctx.run([ctx.python, ctx.workload("torchprof_kernels.py"), ctx.workload("train_small.py")],
                env, "torch_profiler_count")
    if not check_ran(checks, "torch-count: torch.profiler run", p):
        return
    line = [l for l in p.stdout.splitlines() if l.startswith("torchprof kernels")]
    if not checks.check("torch-count: torch.profiler count printed", bool(line), p.stdout[-200:]):
        return
    prof_per_step = float(line[0].split()[6])
    checks.check("torch-count: kernels/step traced == torch.profiler",
                 abs(traced_per_step - prof_per_step) < 1e-9,
                 f"occtrace (30-10 steps)/20 = {traced_per_step:.3f}, torch.profiler {prof_per_step:.3f}"
                 f" ({line[0]})")

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT DISTINCT mn.value, dn.value, sn.value FROM OCC_KERNEL_CONFIG c "
                       "JOIN StringIds mn ON mn.id = c.mangledName "
                       "JOIN StringIds dn ON dn.id = c.demangledName "
                       "JOIN StringIds sn ON sn.id = c.shortName").fetchall()
    untimed = con.execute("SELECT COUNT(*) FROM OCC_LAUNCH WHERE start = 0 OR duration <= 0").fetchone()[0]
    con.close()
    cpp = [r for r in rows if r[0].startswith("_Z")]
    oracle = demangle_with_cxxfilt([r[0] for r in cpp])
    if oracle is None:
        bad = [r for r in cpp if r[1].startswith("_Z") or not r[1]]
        checks.check("torch-count: C++ kernel names demangled (no c++filt: not _Z...)", cpp and not bad,
                     f"{len(cpp)} mangled C++ kernels, {len(bad)} not demangled {[r[0][:60] for r in bad[:2]]}")
    else:
        # c++filt (binutils) is the independent demangler; names it cannot demangle either
        # (seen: a 1675-character cuDNN cutlass name) may stay mangled.
        demangleable = [r for r in cpp if oracle[r[0]] != r[0]]
        bad = [r for r in demangleable if r[1] != oracle[r[0]]]
        checks.check("torch-count: demangledName == c++filt's for every C++ kernel", cpp and not bad,
                     f"{len(demangleable)}/{len(cpp)} demangleable by c++filt, {len(bad)} differ"
                     + (f": {bad[0][1][:60]!r} vs {oracle[bad[0][0]][:60]!r}" if bad else ""))
    no_short = [r for r in rows if not r[2]]
    checks.check("torch-count: every kernel has a shortName", not no_short, f"{len(rows)} kernels")
    checks.check("torch-count: every launch timed (start > 0, duration > 0)", untimed == 0,
                 f"{untimed} untimed")


def case_jit(ctx, checks, name, script, kernel):
    need_gpu()
    need(ctx, "lib")
    need_module(ctx, name, f"import {'numba.cuda as m' if name == 'numba' else 'triton, torch'};"
                           + ("assert m.is_available()" if name == "numba" else "assert torch.cuda.is_available()"))
    db = ctx.fresh(f"{name}.db")
    p = ctx.run([ctx.python, ctx.workload(script)], ctx.traced_env(db), name, timeout=600)
    if not check_ran(checks, f"{name}: workload ran", p):
        return
    words = [l for l in p.stdout.splitlines() if l.startswith(f"{name} launches")][0].split()
    launches, grid, block = int(words[2]), int(words[4]), int(words[6])
    checks.check(f"{name}: integrity", integrity(db) == "ok")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT dn.value, k.gridX, k.blockX FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN StringIds mn ON mn.id = k.mangledName "
                       "JOIN StringIds dn ON dn.id = k.demangledName WHERE mn.value LIKE ?",
                       (f"%{kernel}%",)).fetchall()
    total = con.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0]
    con.close()
    checks.check(f"{name}: {kernel} launches recorded", len(rows) == launches,
                 f"trace {len(rows)}, launched {launches} (all kernels in trace: {total})")
    if rows:
        checks.check(f"{name}: grid/block", {(r[1], r[2]) for r in rows} == {(grid, block)},
                     f"trace {sorted({(r[1], r[2]) for r in rows})}, launched ({grid}, {block})")
        checks.check(f"{name}: name readable", all(kernel in r[0] for r in rows), rows[0][0][:80])


def run_until_markers(ctx, env, log, markers, sig):
    """Starts kill_target.py, waits for `markers` 'launched N' lines, then sends sig."""
    out_path, err_path = ctx.path(log + ".out"), ctx.path(log + ".err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([ctx.python, "-u", ctx.workload("kill_target.py")], env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        last, seen = 0, 0
        deadline = time.time() + ctx.timeout
        for line in proc.stdout:
            out.write(line)
            if line.startswith("launched "):
                last, seen = int(line.split()[1]), seen + 1
                if sig is not None and seen >= markers:
                    # Inside the program's 0.6 s pause after the marker, and more than one
                    # flush period (250 ms) after the launches completed.
                    time.sleep(0.45)
                    proc.send_signal(sig)
            if time.time() > deadline:
                proc.kill()
                break
        rc = proc.wait(timeout=120)
    return rc, last


def case_kill(ctx, checks, label, sig):
    need_gpu()
    need(ctx, "lib")
    need_torch(ctx)
    db = ctx.fresh(f"{label}.db")
    mode = "os_exit" if sig is None else "loop"
    env = ctx.traced_env(db, MODE=mode, BATCH=200, BATCHES=3, PAUSE=0.6, EXIT_CODE=3)
    rc, last = run_until_markers(ctx, env, label, 3, sig)
    want_rc = 3 if sig is None else -sig
    checks.check(f"{label}: exit status", rc == want_rc, f"{rc} (want {want_rc})")
    if not checks.check(f"{label}: trace exists", os.path.exists(db), db):
        return
    checks.check(f"{label}: integrity_check", integrity(db) == "ok", integrity(db))
    n = launch_count(db)
    # Setup launches one fill kernel; every add_ before the last marker must be there, and
    # nothing can follow it (the program sleeps after each marker).
    checks.check(f"{label}: launches before last marker kept", last <= n <= last + 5,
                 f"trace {n}, program had launched {last} adds (+1 fill) before the last marker")


def case_workers(ctx, checks):
    need_gpu()
    need(ctx, "lib")
    need_torch(ctx)
    wdir = ctx.path("workers")
    os.makedirs(wdir, exist_ok=True)
    for f in os.listdir(wdir):
        os.remove(os.path.join(wdir, f))
    db = os.path.join(wdir, "trace.db")
    env = ctx.traced_env(db, STEPS=30, WORKERS=2)
    p = ctx.run([ctx.python, ctx.workload("train_small.py")], env, "workers", timeout=600)
    check_ran(checks, "workers: WORKERS=2 completes", p)
    checks.check("workers: normal output", "ms/step" in p.stdout, p.stdout.strip()[-80:])
    files = sorted(f for f in os.listdir(wdir) if not f.endswith(("-wal", "-shm", "-journal")))
    checks.check("workers: one trace file (forked children write none)", files == ["trace.db"],
                 f"{files}")
    if not os.path.exists(db):
        return
    checks.check("workers: integrity_check", integrity(db) == "ok")
    n = launch_count(db)
    ref = ctx.cache.get("torch_steps30_count")
    if ref is None:
        p0, db0 = traced_train(ctx, 30, "workers_ref")
        ref = launch_count(db0) if p0.returncode == 0 else None
    checks.check("workers: same launches as WORKERS=0", ref is not None and n == ref,
                 f"WORKERS=2: {n}, WORKERS=0: {ref}")


def case_torchprof(ctx, checks):
    need_gpu()
    need(ctx, "lib")
    need_torch(ctx)
    db = ctx.fresh("torchprof.db")
    env = ctx.traced_env(db, TORCHPROF=1, CUDAONLY=1, STEPS=20)
    p = ctx.run([ctx.python, ctx.workload("train_small.py")], env, "torchprof")
    check_ran(checks, "torchprof: program completes", p)
    checks.check("torchprof: normal output", "ms/step" in p.stdout and "loss" in p.stdout,
                 " | ".join(p.stdout.strip().splitlines()[-3:]))
    ours = [l for l in p.stderr.splitlines() if l.startswith("occtrace:")]
    named = [l for l in ours if "torch.profiler" in l and "refused" in l]
    checks.check("torchprof: occtrace names the conflict on stderr", bool(named),
                 (named or ours or ["no occtrace line on stderr"])[0][:200])
    torch_lines = [l for l in p.stderr.splitlines() if "CUPTI" in l and "occtrace" not in l.lower()]
    checks.info("torchprof: PyTorch's own message", (torch_lines or ["none"])[0][:160])
    if os.path.exists(db):
        checks.info("torchprof: trace", f"integrity {integrity(db)}, {launch_count(db)} launches")

    # The other order: torch.profiler active before the first CUDA call.
    db = ctx.fresh("torchprof_first.db")
    p = ctx.run([ctx.python, ctx.workload("torchprof_first.py")], ctx.traced_env(db), "torchprof_first")
    check_ran(checks, "torchprof-first: program completes", p)
    line = [l for l in p.stdout.splitlines() if l.startswith("torchprof-first")]
    n_events = int(line[0].split()[3]) if line else -1
    n_launch = launch_count(db) if os.path.exists(db) else 0
    ours = [l for l in p.stderr.splitlines() if l.startswith("occtrace:")]
    checks.info("torchprof-first: who traced", f"torch.profiler CUDA events {n_events}, occtrace launches {n_launch}")
    if n_launch > 0:
        # torch 2.11 initializes CUDA before Kineto subscribes: occtrace is first again.
        named = [l for l in ours if "torch.profiler" in l and "refused" in l]
    else:
        # Kineto's own CUPTI call initialized CUDA: it came first and occtrace stepped aside.
        named = [l for l in ours if "torch.profiler" in l and "running untraced" in l]
        checks.check("torchprof-first: torch.profiler records CUDA events", n_events > 0, str(n_events))
    checks.check("torchprof-first: occtrace names the conflict on stderr", bool(named),
                 (named or ours or ["no occtrace line on stderr"])[0][:200])


def case_cupti_client(ctx, checks):
    need_gpu()
    need(ctx, "lib", "probe")
    # After: occtrace holds the subscription; the probe's cuptiSubscribe calls are refused.
    db = ctx.fresh("cupti_after.db")
    p = ctx.run([ctx.probe, "after"], ctx.traced_env(db), "cupti_after")
    check_ran(checks, "cupti-client after: program completes", p)
    probe_name = os.path.basename(ctx.probe)
    named = [l for l in p.stderr.splitlines()
             if l.startswith("occtrace:") and probe_name in l and "refused" in l]
    checks.check("cupti-client after: occtrace names the refused client", len(named) == 1,
                 (named or p.stderr.strip().splitlines() or ["nothing on stderr"])[0][:200])
    checks.check("cupti-client after: the client is told who holds CUPTI",
                 "existing_subscriber_name='CUPTI for occtrace'" in p.stdout, p.stdout.strip()[-120:])
    checks.info("cupti-client after: CUPTI's last error after the refusal",
                " ".join(l for l in p.stdout.splitlines() if "last_error" in l)[:200])
    if os.path.exists(db):
        checks.check("cupti-client after: the trace records the refusal",
                     (one(db, "SELECT value FROM OCC_META WHERE name = 'cupti_refused_subscriber'") or "")
                     .find(probe_name) >= 0, "OCC_META.cupti_refused_subscriber")
    # Before: the probe subscribes before any CUDA call; occtrace starts at the probe's cuInit,
    # finds the subscription taken, and steps aside.
    db = ctx.fresh("cupti_before.db")
    p = ctx.run([ctx.probe, "before"], ctx.traced_env(db), "cupti_before")
    check_ran(checks, "cupti-client before: program completes", p)
    checks.check("cupti-client before: the client's subscription succeeds",
                 "probe subscribe_before_cuda=0" in p.stdout, p.stdout.strip()[-120:])
    stepped_aside = [l for l in p.stderr.splitlines()
                     if l.startswith("occtrace: another CUPTI client") and "running untraced" in l]
    checks.check("cupti-client before: occtrace steps aside and names the client", len(stepped_aside) == 1,
                 (stepped_aside or p.stderr.strip().splitlines() or ["nothing on stderr"])[0][:200])
    checks.check("cupti-client before: no trace file", not os.path.exists(db), db)


def case_output(ctx, checks):
    need_gpu()
    need(ctx, "lib")
    runs = []
    if ctx.matrix and os.path.exists(ctx.matrix):
        runs.append(("launch_matrix", [ctx.matrix, ctx.path("output.expected.json"), "--empty", "100",
                                       "--exit-code", "3"], 3))
    try:
        need_torch(ctx)
        runs.append(("deterministic.py", [ctx.python, ctx.workload("deterministic.py")], 5))
    except Skip as e:
        checks.info("output: deterministic.py", f"skipped: {e}")
    if not runs:
        raise Skip("neither launch_matrix nor PyTorch available")
    for name, cmd, rc in runs:
        bare = ctx.run(cmd, ctx.bare_env(), f"output_{name}_bare")
        db = ctx.fresh(f"output_{name}.db")
        traced = ctx.run(cmd, ctx.traced_env(db), f"output_{name}_traced")
        checks.check(f"output[{name}]: exit code untraced / traced", bare.returncode == rc == traced.returncode,
                     f"{bare.returncode} / {traced.returncode} (program exits {rc})")
        checks.check(f"output[{name}]: stdout identical", bare.stdout == traced.stdout and bare.stdout != "",
                     f"{len(bare.stdout)} bytes" if bare.stdout == traced.stdout else
                     f"untraced {bare.stdout[-80:]!r} traced {traced.stdout[-80:]!r}")
        checks.check(f"output[{name}]: traced run recorded launches",
                     os.path.exists(db) and launch_count(db) > 0,
                     f"{launch_count(db) if os.path.exists(db) else 'no file'}")
        quiet_db = ctx.fresh(f"output_{name}_quiet.db")
        quiet = ctx.run(cmd, ctx.traced_env(quiet_db, OCCTRACE_QUIET=1), f"output_{name}_quiet")
        ours = [l for l in quiet.stderr.splitlines() if "occtrace" in l.lower()]
        checks.check(f"output[{name}]: OCCTRACE_QUIET=1 prints nothing of occtrace's",
                     not ours and quiet.returncode == rc, ours[0][:120] if ours else f"exit {quiet.returncode}")
        if ctx.launcher and os.path.exists(ctx.launcher):
            ldb = ctx.fresh(f"output_{name}_launcher.db")
            lp = ctx.run([ctx.launcher, "-o", ldb, "--force", "--achieved", "off", "--"] + cmd,
                         ctx.bare_env(), f"output_{name}_launcher")
            checks.check(f"output[{name}]: launcher keeps exit code and stdout",
                         lp.returncode == rc and lp.stdout == bare.stdout,
                         f"exit {lp.returncode}, stdout {'same' if lp.stdout == bare.stdout else 'differs'}")


def case_achieved(ctx, checks):
    need_gpu()
    need(ctx, "lib", "matrix")
    db = ctx.fresh("achieved.db")
    expected_path = ctx.path("achieved.expected.json")
    # A 100 % budget lets every signature be measured once (the default 5 % of a 1-second
    # program covers one or two: seen on H100, 1 of 24 signatures).
    p = ctx.run([ctx.matrix, expected_path],
                ctx.traced_env(db, OCCTRACE_ACHIEVED="sample", OCCTRACE_SAMPLE_BUDGET="100%"), "achieved")
    if not check_ran(checks, "achieved: launch_matrix ran with OCCTRACE_ACHIEVED=sample", p):
        return
    with open(expected_path) as f:
        expected = json.load(f)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    meta = dict(con.execute("SELECT name, value FROM OCC_META").fetchall())
    rows = con.execute(
        "SELECT a.status, a.achievedOccupancyPct, a.policy, mn.value, c.blockX * c.blockY * c.blockZ, "
        "c.gridX, c.gridY, c.gridZ, c.dynamicSharedMemory, c.graphId "
        "FROM OCC_ACHIEVED a JOIN OCC_LAUNCH l ON l.correlationId = a.correlationId "
        "JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId AND c.contextId = a.contextId "
        "JOIN StringIds mn ON mn.id = c.mangledName").fetchall()
    # A launch made while its stream captures is recorded as 'capturing' and never runs as a
    # launch of its own (it becomes a graph node), so it has no kernel record to join.
    n_achieved = con.execute("SELECT COUNT(*) FROM OCC_ACHIEVED WHERE status != 'capturing'").fetchone()[0]
    n_capturing = con.execute("SELECT COUNT(*) FROM OCC_ACHIEVED WHERE status = 'capturing'").fetchone()[0]
    n_unjoined = con.execute(
        "SELECT COUNT(*) FROM OCC_ACHIEVED a WHERE a.status != 'capturing' AND NOT EXISTS "
        "(SELECT 1 FROM OCC_LAUNCH l WHERE l.correlationId = a.correlationId)").fetchone()[0]
    n_launch = con.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0]
    con.close()
    ach_meta = {k: v for k, v in meta.items() if "achiev" in k.lower()}
    if n_achieved == 0 and meta.get("achieved_mode", "off") == "off":
        # Asked for 'sample', the library recorded 'off': built without the range profiler.
        raise Skip(f"no achieved-occupancy support in this build (OCC_META {ach_meta or 'has none'})")
    checks.info("achieved: OCC_META", ", ".join(f"{k}={v}" for k, v in ach_meta.items()
                                                 if k != "achieved_metrics"))
    checks.check("achieved: launch count unchanged by sampling", n_launch == expected["totalLaunches"],
                 f"trace {n_launch}, program made {expected['totalLaunches']}")
    checks.info("achieved: captured launches (not measured, no kernel record of their own)", n_capturing)
    checks.check("achieved: every OCC_ACHIEVED row but 'capturing' joins a launch",
                 n_achieved > 0 and n_unjoined == 0, f"{n_achieved} rows, {n_unjoined} without a launch")
    measured = [r for r in rows if r[0] == "measured"]
    checks.check("achieved: some launches measured", bool(measured),
                 f"{len(measured)} measured, statuses {dict(Counter(r[0] for r in rows))}")
    checks.check("achieved: graph launches never 'measured'", not [r for r in measured if r[9]],
                 f"{len([r for r in measured if r[9]])} graph launches measured")
    by_key = {}
    for e in expected["launches"]:
        by_key[(e["key"], tuple(e["grid"]), tuple(e["block"]), e["dynamicSmem"])] = e
    bad, compared = [], 0
    for status, pct, _policy, mangled, threads, gx, gy, gz, dyn, _g in measured:
        e = next((v for (k, grid, block, d), v in by_key.items()
                  if k in mangled and grid == (gx, gy, gz) and d == dyn
                  and block[0] * block[1] * block[2] == threads), None)
        if e is None or pct is None:
            continue
        warps = -(-threads // 32)
        theoretical = min(e["blocksPerSm"] * warps, 64) / 64 * 100
        compared += 1
        if not (0 < pct <= theoretical + 1.0):
            bad.append(f"{e['key']}: {pct:.2f}% > theoretical {theoretical:.2f}%")
    checks.check("achieved: 0 < measured <= theoretical (+1 pt)", compared > 0 and not bad,
                 f"{compared} compared; " + "; ".join(bad[:3]))


CASES = {
    "kernels": case_kernels,
    "torch-count": case_torch_count,
    "numba": lambda c, k: case_jit(c, k, "numba", "numba_kernels.py", "occ_numba_axpy"),
    "triton": lambda c, k: case_jit(c, k, "triton", "triton_kernels.py", "occ_triton_add_kernel"),
    "sigterm": lambda c, k: case_kill(c, k, "sigterm", signal.SIGTERM),
    "sigkill": lambda c, k: case_kill(c, k, "sigkill", signal.SIGKILL),
    "os-exit": lambda c, k: case_kill(c, k, "os-exit", None),
    "workers": case_workers,
    "torchprof": case_torchprof,
    "cupti-client": case_cupti_client,
    "output": case_output,
    "achieved": case_achieved,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", default="all")
    ap.add_argument("--lib")
    ap.add_argument("--launcher")
    ap.add_argument("--matrix")
    ap.add_argument("--probe", help="cupti_client_probe (case cupti-client)")
    ap.add_argument("--work", default="gpu-work")
    ap.add_argument("--workloads")
    ap.add_argument("--python", help="interpreter for the workloads (default: this one)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--achieved", default="off",
                    help="OCCTRACE_ACHIEVED of the traced runs (cases that set their own keep it); "
                         "'default': left unset, the mode users get")
    ap.add_argument("--json", help="also write the result rows here")
    ap.add_argument("--skip-reason")
    args = ap.parse_args()
    if args.skip_reason:
        print(f"SKIPPED: {args.skip_reason}")
        return SKIP

    ctx = Ctx(args)
    cases = ALL_CASES if args.case == "all" else args.case.split(",")
    checks = Checks()
    skipped = []
    printed = 0
    width = 60
    for name in cases:
        if name not in CASES:
            print(f"gpu_checks: unknown case {name!r} (known: {', '.join(ALL_CASES)})", file=sys.stderr)
            return 2
        t0 = time.time()
        try:
            CASES[name](ctx, checks)
        except Skip as e:
            skipped.append(name)
            checks.rows.append((name, "SKIP", str(e)))
        except Exception as e:  # a broken case is a failed case, with the reason in the table
            checks.rows.append((name, "FAIL", f"{type(e).__name__}: {e}"))
        checks.info(f"{name}: time", f"{time.time() - t0:.1f} s")
        for row_name, status, detail in checks.rows[printed:]:  # as we go: a timeout keeps them
            print(f"{status:4}  {row_name:<{width}}  {detail}", flush=True)
        printed = len(checks.rows)
    n_pass = sum(1 for r in checks.rows if r[1] == "PASS")
    print(f"{n_pass} passed, {len(checks.failed)} failed, {len(skipped)} cases skipped")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"check": r[0], "status": r[1], "detail": r[2]} for r in checks.rows], f, indent=1)
    if checks.failed:
        return 1
    if skipped and len(skipped) == len(cases):
        print(f"SKIPPED: {'; '.join(sorted({r[2] for r in checks.rows if r[1] == 'SKIP'}))}")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
