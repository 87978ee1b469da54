#!/usr/bin/env python3
"""Step-time cost of tracing variants, measured in turns: every variant's process stays alive and
they run in strict alternation, a fraction of a second each.

    turns_bench.py --lib libocctrace.so --workload train_small=tests/gpu/workloads/train_small.py:100
                   [--workload resnet50=tests/gpu/workloads/resnet50_step.py:12]
                   [--bare-cupti libbare_cupti_injection.so] [--variant NAME=BASE[:K=V,...]]
                   [--repeats 2] [--cycles 30] [--warm-s 12] [--first-s 60] [--stop-after-s S]
                   [--json OUT]

Why turns: on the GPU VMs, separate runs of one variant spread by more than the few percent
being measured (untraced ResNet-50 runs of one session: 19.6-27.5 ms/step), and a process keeps
its speed for minutes. gpu_bench.py's one-process-per-run rounds then need more rounds than a
device lease holds. Here the machine's drift reaches all variants alike: each cycle runs every
variant once (order rotating), so each cycle gives one ratio per variant against the untraced
process of the same cycle, and the figure is the median over cycles (95 % bootstrap interval
printed). Fresh processes per repeat show what stays with a process (its memory layout, the
cores it runs on): per-repeat medians are printed too.

Each process first warms up alone: --warm-s seconds where it samples achieved occupancy (it
measures every signature and parks its profiler), --warm-s-unsampled elsewhere; then only the
timed turns run. Processes that sample start one at a time, each after the one before has
warmed up: CUPTI's profiler serves one process per GPU at a time. Processes run on disjoint CPU sets
(rotated between repeats), so one process's background threads (the trace writer flushing its
last turn) do not take the CPU from the process whose turn it is. Light tracing's timing windows
open on wall-clock time, so part of a window can fall between a process's turns; at the default
duty cycle (200 ms every 5 s) that moves its cost by well under 0.1 %.

Two figures say where a cost comes from and whether it stays put: each variant's CPU per step
over the cycles, in total and for its busiest threads by name (occtrace's are occtrace-writer
and occtrace-setup; threads sharing a name are numbered in order of creation), and its ratio in each quarter of every process set (a cost that grows with
the process's age shows as rising quarters).

First minute and steady state: each variant's ratio is also given apart over the cycles whose
turn began within --first-s seconds (default 60) of the variant's process start, and over the
later ones, with the number of cycles in each. A mode whose cost falls once it has warmed up
(replay's re-attach did, after 80 s) shows a first-minute figure above its steady one.

A SIGTERM (the GPU scripts run it under `timeout`) ends the run after the cycle in progress and
still prints and writes the summary of every finished cycle; --stop-after-s does the same at a
time the caller picks, leaving room to close the processes and summarize before `timeout`.

Variants: untraced, bare-cupti (with --bare-cupti: CUPTI kernel records, discarded), traced
(occtrace, OCCTRACE_ACHIEVED=off), torchprof (torch.profiler, CUDA activity only; --no-torchprof
leaves it out) and every --variant, as in gpu_bench.py. The workloads serve turns through
tests/gpu/workloads/turns.py.
"""
import argparse
import os
import random
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench  # noqa: E402  (variants, their environments, sampling facts)


def samples(env):
    return env.get("OCCTRACE_ACHIEVED") == "sample"


class Worker:
    """One variant's workload process and the two pipes of its turn protocol."""

    def __init__(self, variant, cmd, env, cpus, log_path):
        cmd_read, self.cmd_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        env = dict(env, TURN_FDS=f"{cmd_read},{reply_write}")
        self.variant = variant
        # Sample mode needs its warm-up to measure every signature; other variants only settle.
        self.samples = samples(env)
        self.log_path = log_path
        self.log = open(log_path, "w")
        # The process's start, for each turn's age (--first-s): processes start one after
        # another, so the first minute is each process's own.
        self.started = time.monotonic()
        self.quit_sent = False
        # Its own session: a SIGTERM sent to the bench's process group (`timeout`) reaches the
        # bench alone, which then ends the processes in order (STOP).
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     pass_fds=(cmd_read, reply_write), start_new_session=True,
                                     preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        os.close(cmd_read)
        os.close(reply_write)
        self.pending = b""

    def send(self, line):
        os.write(self.cmd_write, (line + "\n").encode())

    def reply(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.reply_read], [], [], max(0.0, left))
            if not ready:
                raise RuntimeError(f"{self.variant}: no reply within {timeout:g} s ({self.tail()})")
            chunk = os.read(self.reply_read, 4096)
            if not chunk:
                raise RuntimeError(f"{self.variant}: the workload exited ({self.tail()})")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode().strip()

    def tail(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            lines = f.read().strip().splitlines()
        return lines[-1] if lines else "no output"

    def quit(self):
        if not self.quit_sent:
            self.send("quit")
            self.quit_sent = True

    def close(self, timeout):
        try:
            self.quit()
            self.reply(timeout)
            self.proc.wait(timeout=timeout)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        for fd in (self.cmd_write, self.reply_read):
            os.close(fd)
        self.log.close()
        return self.proc.returncode


def cpu_sets(count, per_process, rotation):
    cpus = sorted(os.sched_getaffinity(0))
    per = per_process or max(1, min(4, len(cpus) // count))
    if per * count > len(cpus):
        return [None] * count  # too few CPUs to give each its own: leave placement to the kernel
    slots = [set(cpus[i * per:(i + 1) * per]) for i in range(count)]
    return [slots[(i + rotation) % count] for i in range(count)]


def bootstrap_median_interval(values, iterations=2000, seed=1):
    """95 % interval of the median, resampling the values (cycles)."""
    return bootstrap_median_interval_over_sets([values], iterations, seed)


def bootstrap_median_interval_over_sets(values_by_set, iterations=2000, seed=1):
    """95 % interval of the median, resampling process sets and then cycles within each chosen
    set. Two identical processes differ by up to 2 % for as long as they run (where their threads
    land, what their memory layout hits), which no number of cycles averages out: an interval over
    cycles alone is too narrow for a claim about the next process. This one includes that spread
    once there are two sets or more; with one set it resamples cycles alone."""
    rng = random.Random(seed)
    sets = [list(values) for values in values_by_set if values]
    medians = []
    for _ in range(iterations):
        sample = []
        for chosen in rng.choices(sets, k=len(sets)):
            sample.extend(rng.choices(chosen, k=len(chosen)))
        medians.append(statistics.median(sample))
    medians.sort()
    return medians[int(0.025 * iterations)], medians[int(0.975 * iterations) - 1]


# SIGTERM (`timeout`, a device lease running out) ends the run after the cycle in progress: the
# processes quit, and the summary of every finished cycle is printed and written as usual.
# --stop-after-s sets `at`, the same end without a signal.
STOP = {"requested": False, "at": float("inf")}


def request_stop(signum, frame):
    STOP["requested"] = True


def stopping():
    return STOP["requested"] or time.monotonic() >= STOP["at"]


def thread_cpu_s(pid):
    """CPU seconds (user + system) of process `pid` per thread: {tid: (name, seconds)}, from
    /proc; empty when the process is gone. A thread inherits its creator's name, so threads
    CUPTI starts from occtrace's writer are also named occtrace-writer: names alone would add
    them to the writer's figure."""
    ticks = os.sysconf("SC_CLK_TCK")
    per_tid = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return per_tid
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()  # fields 3.. of proc(5): utime, stime at 14, 15
        per_tid[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / ticks)
    return per_tid


def thread_labels(per_tid):
    """{tid: label}: the thread's name, or, where several threads share it, name#k in the
    order of creation (tids ascending): occtrace-writer#1 is the writer, #2 a thread started
    from it."""
    by_name = {}
    for tid in sorted(per_tid):
        by_name.setdefault(per_tid[tid][0], []).append(tid)
    labels = {}
    for name, tids in by_name.items():
        for k, tid in enumerate(tids):
            labels[tid] = name if len(tids) == 1 else f"{name}#{k + 1}"
    return labels


def cpu_per_step(before, after, steps):
    """ms of CPU per step: the process's total, and its busiest threads (labelled by
    thread_labels; a thread that ended between the snapshots is not counted)."""
    labels = thread_labels(after)
    used = {labels[tid]: seconds - before.get(tid, (name, 0.0))[1] for tid, (name, seconds) in after.items()}
    busiest = sorted(used.items(), key=lambda kv: -kv[1])[:6]
    per_step = lambda seconds: seconds * 1e3 / max(steps, 1)
    return {"total_ms": per_step(sum(used.values())), "threads_ms": {k: per_step(v) for k, v in busiest}}


def run_workload(name, script, turn_steps, variants, args, lib, tmp):
    cycles = []  # per cycle: {variant: ms/step}, with the repeat it belongs to
    sampling = {}
    light = {}  # per variant: light traces' window and hook facts, one per process set
    pm = {}  # per variant: PM-sampling traces' facts (whether it sampled), one per process set
    cpu = {}  # per variant, per process set: CPU per step over the cycles (cpu_per_step)
    warm_steps = {v: [] for v in variants}
    for repeat in range(args.repeats):
        if stopping():
            break
        sets = dict(zip(variants, cpu_sets(len(variants), args.cores_per_process, repeat)))
        turns_started_ns = 0
        workers = {}

        def start(v):
            db = os.path.join(tmp, f"{name}-{v}-{repeat}.db")
            env = gpu_bench.env_for(v, lib, db, {"STEPS": "1"})
            workers[v] = Worker(v, [args.python, script], env, sets[v],
                                os.path.join(args.logs, f"{name}-{v}-{repeat}.log"))
            return workers[v]

        def ready(w):
            if w.reply(args.start_timeout) != "ready":
                raise RuntimeError(f"{w.variant}: unexpected first reply")

        def warm(w):
            warm_s = args.warm_s if w.samples else args.warm_s_unsampled
            w.send(f"warm {warm_s:g}")
            warm_steps[w.variant].append(int(w.reply(warm_s + 120).split()[1]))

        try:
            # The processes that do not sample start together. One that samples starts only
            # once the one before it has warmed up (measured every signature, parked): CUPTI's
            # profiler serves one process per GPU at a time, and a process that finds it busy
            # stops sampling (CUPTI_ERROR_HARDWARE_BUSY).
            unsampled = [start(v) for v in variants if not samples(gpu_bench.env_for(v, lib, "", {}))]
            for w in unsampled:
                ready(w)
            for v in variants:
                if v in workers:
                    continue
                w = start(v)
                ready(w)
                warm(w)
            for w in unsampled:  # alone on the GPU, one after another
                warm(w)
            workers = {v: workers[v] for v in variants}
            in_order = list(workers.values())
            cpu_before = {v: thread_cpu_s(w.proc.pid) for v, w in workers.items()}
            turns_started_ns = time.time_ns()  # CUPTI's clock is CLOCK_REALTIME's, within a us
            for c in range(args.cycles):
                if stopping():
                    why = "SIGTERM" if STOP["requested"] else "--stop-after-s"
                    print(f"  {name}: stopped ({why}) after {c} cycles of process set {repeat + 1}", flush=True)
                    break
                order = in_order[c % len(in_order):] + in_order[:c % len(in_order)]
                times = {}
                ages = {}  # per variant: seconds from its process's start to its turn's start
                for w in order:
                    ages[w.variant] = round(time.monotonic() - w.started, 2)
                    w.send(f"run {turn_steps}")
                    answer = w.reply(120).split()
                    if answer[0] != "ms/step":
                        raise RuntimeError(f"{w.variant}: {' '.join(answer)}")
                    times[w.variant] = float(answer[1])
                cycles.append({"repeat": repeat, "ms_per_step": times, "age_s": ages})
                print(f"  {name} r{repeat + 1} c{c + 1:02}: " +
                      ", ".join(f"{v} {times[v]:.4g}" for v in variants), flush=True)
        finally:
            done = sum(1 for c in cycles if c["repeat"] == repeat) * turn_steps
            if done and len(workers) == len(variants):
                for v, w in workers.items():
                    used = cpu_per_step(cpu_before[v], thread_cpu_s(w.proc.pid), done)
                    cpu.setdefault(v, []).append(used)
                    print(f"  {name} r{repeat + 1}: {v} CPU per step {used['total_ms']:.3f} ms; busiest threads: " +
                          ", ".join(f"{k} {ms:.3f}" for k, ms in used["threads_ms"].items()), flush=True)
            # After a SIGTERM, `timeout -k` kills the bench seconds later: every process is told
            # to quit at once and they share a few seconds, so that the summary is written first.
            quick = STOP["requested"]
            if quick:
                for w in workers.values():
                    w.quit()
            quick_deadline = time.monotonic() + 5.0
            for w in workers.values():
                rc = w.close(max(1.0, quick_deadline - time.monotonic()) if quick else args.quit_timeout)
                if rc not in (0, None):
                    print(f"  {name}: {w.variant} exited {rc} ({w.tail()})", flush=True)
                # What bare_cupti_injection.so's phase modes say at exit (attach, finalize times).
                with open(w.log_path, errors="replace") as f:
                    for line in f:
                        if line.startswith("bare_cupti:"):
                            print(f"  {name}: {w.variant} r{repeat + 1}: {line.strip()}", flush=True)
        for v in variants:
            db = os.path.join(tmp, f"{name}-{v}-{repeat}.db")
            facts = gpu_bench.sampling_facts(db)
            if facts is not None:
                # Whether the timed turns saw sampling's steady state: its last measurement came
                # before they began (negative: sampling ran into them).
                if facts.get("last_measured_ns") and turns_started_ns:
                    facts["last_measured_s_before_turns"] = (turns_started_ns - facts["last_measured_ns"]) / 1e9
                sampling.setdefault(v, []).append(facts)
            facts = gpu_bench.light_facts(db)
            if facts is not None:
                light.setdefault(v, []).append(facts)
            facts = gpu_bench.pm_facts(db)
            if facts is not None:
                pm.setdefault(v, []).append(facts)
    return cycles, sampling, light, pm, warm_steps, cpu


def quarters(cycles, variant, base):
    """Median per-cycle ratio in each quarter of every process set: whether a cost drifts."""
    out = []
    for r in sorted({c["repeat"] for c in cycles}):
        mine = [c["ms_per_step"] for c in cycles if c["repeat"] == r]
        n = len(mine)
        out.append([statistics.median(c[variant] / c[base] for c in mine[i * n // 4:(i + 1) * n // 4])
                    for i in range(4) if (i + 1) * n // 4 > i * n // 4])
    return out


def percentile(values, q):
    xs = sorted(values)
    return xs[int(q * (len(xs) - 1))]


def part_figures(by_set):
    """Median ratio of one part of the run (by_set: its per-cycle ratios, per process set) with
    the intervals summarize gives, and how many cycles it holds; None when it holds none."""
    ratios = [x for per_set in by_set for x in per_set]
    if not ratios:
        return None
    sets = [per_set for per_set in by_set if per_set]
    return {"cycles": len(ratios), "ratio": statistics.median(ratios),
            "ratio_ci95": list(bootstrap_median_interval(ratios)),
            "ratio_ci95_over_sets": list(bootstrap_median_interval_over_sets(sets)) if len(sets) > 1 else None}


def summarize(cycles, variants, base, first_s=None):
    """Per variant against `base`: median ms/step, median per-cycle ratio and its intervals. With
    first_s, also `first` and `steady` (part_figures): the cycles whose turn began within first_s
    seconds of the variant's process start, and the later ones."""
    out = {}
    for v in variants:
        ms = [c["ms_per_step"][v] for c in cycles]
        ratios = [c["ms_per_step"][v] / c["ms_per_step"][base] for c in cycles]
        low, high = bootstrap_median_interval(ratios)
        repeats = sorted({c["repeat"] for c in cycles})
        # The 25th percentile of each variant's turns against the base's: the cost without the
        # machine's slow spells, which hit single turns (one turn of one process 19 -> 28 ms/step).
        floor = percentile(ms, 0.25) / percentile([c["ms_per_step"][base] for c in cycles], 0.25)
        by_set = [[c["ms_per_step"][v] / c["ms_per_step"][base] for c in cycles if c["repeat"] == r] for r in repeats]
        out[v] = {"median_ms": statistics.median(ms), "ratio": statistics.median(ratios), "floor_ratio": floor,
                  "ratio_ci95": [low, high],
                  "ratio_ci95_over_sets": list(bootstrap_median_interval_over_sets(by_set)) if len(by_set) > 1 else None,
                  "ratio_per_repeat": [statistics.median(x) for x in by_set]}
        if first_s is not None:
            # The variant's own age decides: its process and the base's started seconds apart.
            for part, early in (("first", True), ("steady", False)):
                out[v][part] = part_figures([[c["ms_per_step"][v] / c["ms_per_step"][base] for c in cycles
                                              if c["repeat"] == r and (c["age_s"][v] < first_s) == early]
                                             for r in repeats])
    return out


def format_ratio(r):
    """`ratio [interval]  per set: …` and, with two sets or more, the interval over sets too."""
    text = (f"{r['ratio']:.3f} [{r['ratio_ci95'][0]:.3f}, {r['ratio_ci95'][1]:.3f}]  per set: "
            + ", ".join(f"{x:.3f}" for x in r["ratio_per_repeat"]))
    if r.get("ratio_ci95_over_sets"):
        low, high = r["ratio_ci95_over_sets"]
        text += f"  over sets and cycles [{low:.3f}, {high:.3f}]"
    return text


def format_parts(r, first_s):
    """`first N s: ratio [interval] (n cycles); steady: …` of a summarize entry made with first_s."""
    def one(p):
        if p is None:
            return "no cycles"
        text = f"{p['ratio']:.3f} [{p['ratio_ci95'][0]:.3f}, {p['ratio_ci95'][1]:.3f}]"
        if p.get("ratio_ci95_over_sets"):
            text += f" over sets [{p['ratio_ci95_over_sets'][0]:.3f}, {p['ratio_ci95_over_sets'][1]:.3f}]"
        return text + f" ({p['cycles']} cycles)"
    return f"first {first_s:g} s: {one(r['first'])}; steady: {one(r['steady'])}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--workload", action="append", required=True,
                    help="NAME=SCRIPT:STEPS_PER_TURN, e.g. train_small=tests/gpu/workloads/train_small.py:100")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--traces", help="keep the traced processes' traces in this folder (default: removed)")
    ap.add_argument("--bare-cupti", help="bare_cupti_injection.so: CUPTI's own record cost as a variant")
    ap.add_argument("--no-torchprof", action="store_true")
    ap.add_argument("--variant", action="append", default=[], type=gpu_bench.parse_variant)
    ap.add_argument("--repeats", type=int, default=2, help="fresh process sets per workload")
    ap.add_argument("--cycles", type=int, default=30, help="cycles of turns per repeat")
    ap.add_argument("--warm-s", type=float, default=12.0,
                    help="warm-up of each sample-mode process, alone on the GPU")
    ap.add_argument("--warm-s-unsampled", type=float, default=3.0,
                    help="warm-up of each process that does not sample achieved occupancy")
    ap.add_argument("--cores-per-process", type=int, default=0, help="0: the CPUs shared out evenly, at most 4")
    ap.add_argument("--start-timeout", type=float, default=300.0)
    ap.add_argument("--quit-timeout", type=float, default=180.0)
    ap.add_argument("--logs", help="folder for each process's output (default: a temporary one)")
    ap.add_argument("--only", help="comma-separated variants to run, e.g. traced,sample: fewer variants "
                                   "make shorter cycles, so more of them fit (ratios against untraced "
                                   "when it runs, and against traced when that runs)")
    ap.add_argument("--pool", help="NAME,NAME: two processes of one configuration (e.g. traced,traced-again, "
                                   "the A/A control); every other variant is also printed against the "
                                   "mean of the two in each cycle, which evens out what differs between "
                                   "two identical processes (their placement on the machine)")
    ap.add_argument("--first-s", type=float, default=60.0,
                    help="cycles whose turn began within this many seconds of the variant's process start "
                         "are the first minute; later ones the steady state (each with its own figure)")
    ap.add_argument("--stop-after-s", type=float, default=0.0,
                    help="start no cycle after this many seconds of the run, as a SIGTERM would (0: no limit)")
    ap.add_argument("--json")
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, request_stop)
    if args.stop_after_s > 0:
        STOP["at"] = time.monotonic() + args.stop_after_s
    lib = os.path.abspath(args.lib)
    variants = ["untraced"]
    if args.bare_cupti:
        gpu_bench.BARE_CUPTI_LIB = os.path.abspath(args.bare_cupti)
        variants.append("bare-cupti")
    variants.append("traced")
    if not args.no_torchprof:
        variants.append("torchprof")
    for name, base, env in args.variant:
        if base == "bare-cupti" and not args.bare_cupti:
            ap.error(f"--variant {name}: bare-cupti variants need --bare-cupti")
        gpu_bench.CUSTOM[name] = (base, env)
        variants.append(name)
    if args.only:
        keep = [v for v in args.only.split(",") if v]
        unknown = [v for v in keep if v not in variants]
        if unknown or len(keep) < 2:
            ap.error(f"--only {args.only!r}: name two or more of {', '.join(variants)}")
        variants = [v for v in variants if v in keep]
    base = "untraced" if "untraced" in variants else variants[0]
    workloads = []
    for text in args.workload:
        name, eq, rest = text.partition("=")
        script, colon, steps = rest.rpartition(":")
        if not eq or not colon or not steps.isdigit() or not os.path.exists(script):
            ap.error(f"--workload {text!r}: expected NAME=SCRIPT:STEPS_PER_TURN with an existing script")
        workloads.append((name, os.path.abspath(script), int(steps)))

    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "repeats": args.repeats, "cycles": args.cycles,
               "warm_s": args.warm_s, "warm_s_unsampled": args.warm_s_unsampled, "first_s": args.first_s,
               "variants": {n: {"base": b, "env": e} for n, (b, e) in gpu_bench.CUSTOM.items()}}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = args.traces or tmp_dir
        os.makedirs(tmp, exist_ok=True)
        args.logs = args.logs or tmp
        os.makedirs(args.logs, exist_ok=True)
        for name, script, turn_steps in workloads:
            if stopping():
                break
            print(f"== {name}: {turn_steps} steps per turn, {args.cycles} cycles x {args.repeats} process sets, "
                  f"{args.warm_s:g} s warm-up where sampling ({args.warm_s_unsampled:g} s elsewhere); variants: {', '.join(variants)} "
                  f"(traced = occtrace OCCTRACE_ACHIEVED=off, torchprof = torch.profiler CUDA activity only)",
                  flush=True)
            started = time.monotonic()
            cycles, sampling, light, pm, warm_steps, cpu = run_workload(name, script, turn_steps, variants, args, lib, tmp)
            if not cycles:
                print(f"  {name}: no cycle finished", flush=True)
                continue
            s = summarize(cycles, variants, base, args.first_s)
            off = summarize(cycles, variants, "traced", args.first_s) if "traced" in variants else {}
            results[name] = {"base": base, "turn_steps": turn_steps,
                             "vs_untraced" if base == "untraced" else f"vs_{base}": s,
                             "vs_traced": off, "cycles": cycles, "sampling": sampling, "light": light, "pm": pm,
                             "warm_steps": warm_steps, "cpu_per_step": cpu,
                             "quarters": {v: quarters(cycles, v, base) for v in variants if v != base},
                             "seconds": time.monotonic() - started}
            print(f"  {name}: median ms/step and step time vs {base} (median of per-cycle ratios, "
                  f"95 % bootstrap interval over cycles; per process set; with two sets or more, an interval over sets and cycles, which includes how much two identical processes differ)")
            for v in variants:
                r = s[v]
                print(f"  {v:18} {r['median_ms']:8.3f} ms/step  {format_ratio(r)}"
                      f"  25th percentiles' ratio {r['floor_ratio']:.3f}")
            print(f"  {name}: vs {base} in the first {args.first_s:g} s of each process's life and after "
                  f"(steady), median of per-cycle ratios, 95 % bootstrap intervals")
            for v in variants:
                if v != base:
                    print(f"  {v:18} {format_parts(s[v], args.first_s)}")
            for v in variants:
                if v in ("untraced", "traced", "torchprof", "bare-cupti") or not off or base == "traced":
                    continue
                r = off[v]
                print(f"  {name}: {v} vs traced (off) {format_ratio(r)}"
                      f"  25th percentiles' ratio {r['floor_ratio']:.3f}; {format_parts(r, args.first_s)}")
            pool = [p for p in (args.pool or "").split(",") if p]
            if len(pool) == 2 and all(p in variants for p in pool):
                pooled = [dict(c, ms_per_step=dict(c["ms_per_step"], pooled=sum(c["ms_per_step"][p] for p in pool) / 2))
                          for c in cycles]
                others = [v for v in variants if v not in pool]
                results[name]["vs_pooled"] = summarize(pooled, others, "pooled", args.first_s)
                for v in others:
                    r = results[name]["vs_pooled"][v]
                    print(f"  {name}: {v} vs the mean of {' and '.join(pool)} {format_ratio(r)}; "
                          f"{format_parts(r, args.first_s)}")
            for v, per_set in results[name]["quarters"].items():
                print(f"  {name}: {v} vs {base} by quarter of each process set: " +
                      "; ".join(" ".join(f"{x:.3f}" for x in q) for q in per_set))
            for v, runs in sampling.items():
                print(f"  {name}: {v} sampling per process: " + gpu_bench.format_sampling(runs))
            for v, runs in light.items():
                print(f"  {name}: {v} light trace per process: " + gpu_bench.format_light(runs))
            for v, runs in pm.items():  # format_light prints any facts dict as `key value`
                print(f"  {name}: {v} PM sampling per process: " + gpu_bench.format_light(runs))
            print(f"  {name}: {time.monotonic() - started:.0f} s", flush=True)
    gpu_bench.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
