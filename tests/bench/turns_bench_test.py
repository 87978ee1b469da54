#!/usr/bin/env python3
"""CPU test of bench/injector/turns_bench.py: the turn protocol (tests/gpu/workloads/turns.py),
the per-cycle ratios, and that processes which sample achieved occupancy start one at a time.

A stand-in workload sleeps a fixed time per step; the variant with OCCTRACE_MODE=light
sleeps 25 % longer, so its ratio against untraced must come out near 1.25 and every other
variant's near 1.00 (tolerances wide enough for other tests' load on a 2-core CI machine). Each process logs when it started and when its warm-up
ended, so the test can see that the second sampling process started after the first one had
warmed up (CUPTI's profiler serves one process per GPU at a time). The light process also runs a
thread named busy-helper that burns ~2 ms of CPU every 10 ms, and a thread it started (so of the
same name) that burns ~1 ms: the bench's CPU per step by thread must find both, apart, there
and nowhere else, and it writes a light trace's OCC_META rows, which the
summary must show. Under `timeout`, the run stops after a turn and still
prints its summary; --stop-after-s does the same without a signal. The first-minute and steady
figures are checked on made-up cycles, and turns_to_table.py's table on them."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKLOAD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {workloads!r})
    import turns
    log = open({log!r}, "a")
    variant = os.environ.get("OCCTRACE_MODE", "") + "/" + os.environ.get("OCCTRACE_ACHIEVED", "")
    log.write(f"start {{variant}} {{time.monotonic()}}\\n"); log.flush()
    slow = 1.25 if os.environ.get("OCCTRACE_MODE") == "light" else 1.0
    if slow > 1 and os.environ.get("OCCTRACE_OUTPUT"):  # what a light trace's OCC_META says
        import sqlite3
        con = sqlite3.connect(os.environ["OCCTRACE_OUTPUT"])
        con.execute("CREATE TABLE OCC_META(name TEXT PRIMARY KEY, value TEXT)")
        con.executemany("INSERT INTO OCC_META VALUES (?, ?)", [("trace_mode", "light"), ("light_windows", "7"),
                        ("light_records_on_pct", "4.5"), ("launch_count", "1234")])
        con.commit()
        con.close()
    if slow > 1:  # a named thread that burns CPU: the bench must find it by name
        import ctypes, threading
        def burn(ms=0.002, named=True):
            if named:  # its child inherits the name, as CUPTI's threads started from occtrace's do
                ctypes.CDLL(None).prctl(15, b"busy-helper", 0, 0, 0)  # PR_SET_NAME
                threading.Thread(target=burn, args=(0.001, False), daemon=True).start()
            while True:
                end = time.thread_time() + ms
                while time.thread_time() < end:
                    pass
                time.sleep(0.010 - ms)
        threading.Thread(target=burn, daemon=True).start()
    def step():  # a sleep, not a spin: other tests' load on the CPU does not stretch it
        time.sleep(0.010 * slow)
    def synchronize():
        log.write(f"sync {{variant}} {{time.monotonic()}}\\n"); log.flush()
    turns.serve(step, synchronize)
""")


def run_bench(tmp, *arguments):
    """Runs turns_bench.py on the stand-in workload; returns its JSON result and the event log."""
    log = os.path.join(tmp, "events.log")
    script = os.path.join(tmp, "workload.py")
    with open(script, "w") as f:
        f.write(WORKLOAD.format(workloads=os.path.join(ROOT, "tests/gpu/workloads"), log=log))
    out = os.path.join(tmp, "out.json")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench/injector/turns_bench.py"),
                        "--lib", os.path.join(tmp, "libnothing.so"), "--no-torchprof",
                        "--workload", f"fake={script}:10", *arguments, "--json", out],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    with open(log) as f:
        events = [line.split() for line in f]
    with open(out) as f:
        return json.load(f)["fake"], events, p.stdout


class TurnsBenchTest(unittest.TestCase):
    def assertLightRatio(self, ratio):
        """The light stand-in sleeps 12.5 ms per step against 10: 1.25. On a loaded machine
        sleepers wake late, by different amounts in different turns (a CI run next to a build
        read 1.35 over 9 cycles), so 1.10-1.45: still a failure for no effect (1.0) or an
        inverted one (0.8)."""
        self.assertGreaterEqual(ratio, 1.10)
        self.assertLessEqual(ratio, 1.45)

    def test_ratios_and_sampling_processes_one_at_a_time(self):
        with tempfile.TemporaryDirectory() as tmp:
            result, events, stdout = run_bench(
                tmp, "--variant", "sample=traced:OCCTRACE_ACHIEVED=sample",
                "--variant", "light=traced:OCCTRACE_MODE=light,OCCTRACE_ACHIEVED=sample",
                "--repeats", "2", "--cycles", "9", "--warm-s", "0.3", "--warm-s-unsampled", "0.05",
                "--cores-per-process", "1", "--pool", "traced,sample")
            self.assertIn("fake: light vs traced (off)", stdout)
            # Against the per-cycle mean of two processes that run alike (an A/A pair).
            self.assertEqual(sorted(result["vs_pooled"]), ["light", "untraced"])
            self.assertLightRatio(result["vs_pooled"]["light"]["ratio"])
            self.assertIn("fake: light vs the mean of traced and sample", stdout)
            self.assertEqual(len(result["cycles"]), 18)
            ratios = {v: r["ratio"] for v, r in result["vs_untraced"].items()}
            self.assertLightRatio(ratios["light"])
            for v in ("traced", "sample"):
                self.assertAlmostEqual(ratios[v], 1.0, delta=0.12, msg=ratios)
            self.assertEqual(len(result["vs_untraced"]["light"]["ratio_per_repeat"]), 2)
            # Two process sets: an interval over sets and cycles as well, printed beside.
            over_sets = result["vs_untraced"]["light"]["ratio_ci95_over_sets"]
            self.assertLessEqual(over_sets[0], result["vs_untraced"]["light"]["ratio"])
            self.assertGreaterEqual(over_sets[1], result["vs_untraced"]["light"]["ratio"])
            self.assertIn("over sets and cycles [", stdout)
            self.assertGreater(min(result["warm_steps"]["sample"]), min(result["warm_steps"]["traced"]))
            # CPU per step by thread: the light process's burning threads are found, ~2 and ~1 ms
            # of every 10 ms (a step lasts 12.5 ms there), apart although they share a name,
            # numbered in order of creation; no other variant has them.
            light_cpu = result["cpu_per_step"]["light"]
            self.assertEqual(len(light_cpu), 2)
            for used in light_cpu:
                threads = used["threads_ms"]
                self.assertNotIn("busy-helper", threads)
                self.assertGreater(threads.get("busy-helper#1", 0.0), 0.8, used)
                self.assertGreater(threads.get("busy-helper#2", 0.0), 0.4, used)
                self.assertGreater(threads["busy-helper#1"], threads["busy-helper#2"], used)
                # The total is summed in another order than the two threads: allow rounding.
                self.assertGreaterEqual(used["total_ms"] + 1e-9,
                                        threads["busy-helper#1"] + threads["busy-helper#2"], used)
            self.assertFalse([t for t in result["cpu_per_step"]["traced"][0]["threads_ms"] if "busy" in t])
            self.assertIn("light CPU per step", stdout)
            # A light trace's window facts, per process set, read from its OCC_META.
            self.assertEqual(result["light"]["light"], [{"light_windows": "7", "light_records_on_pct": "4.5",
                                                          "launch_count": "1234"}] * 2)
            self.assertNotIn("traced", result["light"])
            self.assertIn("fake: light light trace per process: windows 7, records_on_pct 4.5", stdout)
            # Drift by quarter, per process set: light stays near 1.25 in every quarter. A quarter
            # holds 2-3 cycles, so one cycle stretched by a loaded machine moves it (1.56 once,
            # with ctest -j2 on 2 cores, the light process's own burning threads competing with
            # its steps): each quarter above 1.05 and below 2 (an inverted ratio, 0.8, fails),
            # their median within 0.08.
            self.assertEqual(len(result["quarters"]["light"]), 2)
            for per_set in result["quarters"]["light"]:
                self.assertEqual(len(per_set), 4)
                for ratio in per_set:
                    self.assertGreater(ratio, 1.05)
                    self.assertLess(ratio, 2.0)
            every_quarter = sorted(r for per_set in result["quarters"]["light"] for r in per_set)
            self.assertLightRatio(every_quarter[len(every_quarter) // 2])

            # The light process (sampling, started second) starts only after the sample
            # process's warm-up ended: its first synchronize after "warm" is that end.
            starts = [float(t) for kind, v, t in events if kind == "start" and v == "light/sample"]
            sample_starts = [float(t) for kind, v, t in events if kind == "start" and v == "/sample"]
            self.assertEqual(len(starts), 2)
            self.assertEqual(len(sample_starts), 2)
            for repeat in range(2):
                sample_syncs = [float(t) for kind, v, t in events if kind == "sync" and v == "/sample"
                                and float(t) > sample_starts[repeat]]
                # warm-up: a synchronize at least 0.3 s after the sample process started
                warm_end = min(t for t in sample_syncs if t - sample_starts[repeat] >= 0.3)
                self.assertGreaterEqual(starts[repeat], warm_end)

    def test_only_two_variants_against_the_first(self):
        with tempfile.TemporaryDirectory() as tmp:
            result, events, _ = run_bench(
                tmp, "--variant", "light=traced:OCCTRACE_MODE=light", "--only", "traced,light",
                "--repeats", "1", "--cycles", "9", "--warm-s-unsampled", "0.05")
            self.assertEqual(result["base"], "traced")
            self.assertEqual(sorted(result["vs_traced"]), ["light", "traced"])
            self.assertLightRatio(result["vs_traced"]["light"]["ratio"])
            starts = [v for kind, v, _ in events if kind == "start"]
            self.assertEqual(sorted(starts), ["/off", "light/off"], "only the two variants ran")
            self.assertIsNone(result["vs_traced"]["light"]["ratio_ci95_over_sets"], "one set: no interval over sets")

    def test_a_time_limit_still_gives_the_summary(self):
        # As the GPU scripts run it: under `timeout`, which signals the whole process group.
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "events.log")
            script = os.path.join(tmp, "workload.py")
            with open(script, "w") as f:
                f.write(WORKLOAD.format(workloads=os.path.join(ROOT, "tests/gpu/workloads"), log=log))
            out = os.path.join(tmp, "out.json")
            p = subprocess.run(["timeout", "6", sys.executable, os.path.join(ROOT, "bench/injector/turns_bench.py"),
                                "--lib", os.path.join(tmp, "libnothing.so"), "--no-torchprof",
                                "--workload", f"fake={script}:10", "--variant", "light=traced:OCCTRACE_MODE=light",
                                "--repeats", "2", "--cycles", "100000", "--warm-s-unsampled", "0.05",
                                "--json", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 124, p.stderr)  # timeout's code: the limit was reached
            self.assertIn("fake: stopped (SIGTERM) after", p.stdout)
            self.assertIn("median ms/step", p.stdout)
            with open(out) as f:
                result = json.load(f)["fake"]
            self.assertGreater(len(result["cycles"]), 5)
            self.assertEqual({c["repeat"] for c in result["cycles"]}, {0}, "no second process set after the stop")
            self.assertLightRatio(result["vs_untraced"]["light"]["ratio"])


    def test_stop_after_s_ends_the_turns_and_gives_the_summary(self):
        # mode_cost.sh's own end, before `timeout` must signal: as a SIGTERM would, without one.
        with tempfile.TemporaryDirectory() as tmp:
            result, _, stdout = run_bench(
                tmp, "--variant", "light=traced:OCCTRACE_MODE=light", "--repeats", "2", "--cycles", "100000",
                "--warm-s-unsampled", "0.05", "--stop-after-s", "3")
            self.assertIn("fake: stopped (--stop-after-s) after", stdout)
            self.assertGreater(len(result["cycles"]), 5)
            self.assertEqual({c["repeat"] for c in result["cycles"]}, {0}, "no second process set after the stop")
            self.assertLightRatio(result["vs_untraced"]["light"]["ratio"])


class FirstMinuteTest(unittest.TestCase):
    """summarize's first-minute and steady parts on made-up cycles: a variant 20 % slower while
    its process is young, 2 % once it has warmed up, as replay's re-attach made the default mode."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(ROOT, "bench/injector"))
        import gpu_bench
        import turns_bench
        import turns_to_table
        cls.gpu_bench, cls.bench, cls.table = gpu_bench, turns_bench, turns_to_table

    def cycles(self):
        out = []
        for repeat in range(2):
            for c in range(40):
                age = 30.0 + 1.5 * c  # turns begin 30 s into the process's life, 1.5 s a cycle
                # The variant's process started 2 s after the untraced one: its own age counts.
                slow = 1.20 if age - 2.0 < 60 else 1.02
                out.append({"repeat": repeat, "ms_per_step": {"untraced": 10.0, "default": 10.0 * slow},
                            "age_s": {"untraced": age, "default": age - 2.0}})
        return out

    def test_cycles_split_by_the_variants_own_age(self):
        s = self.bench.summarize(self.cycles(), ["untraced", "default"], "untraced", 60.0)
        first, steady = s["default"]["first"], s["default"]["steady"]
        # The variant's ages 28 + 1.5 c < 60 for c 0..21: 22 cycles per set (by the untraced
        # process's age, 20).
        self.assertEqual(first["cycles"], 44)
        self.assertEqual(steady["cycles"], 36)
        self.assertAlmostEqual(first["ratio"], 1.20)
        self.assertAlmostEqual(steady["ratio"], 1.02)
        self.assertLessEqual(first["ratio_ci95"][0], first["ratio"])
        self.assertIsNotNone(first["ratio_ci95_over_sets"], "two sets: an interval over sets too")
        self.assertAlmostEqual(s["default"]["ratio"], 1.20)  # the figure over all cycles is kept
        self.assertNotIn("first", self.bench.summarize(self.cycles(), ["default"], "untraced")["default"])
        text = self.bench.format_parts(s["default"], 60.0)
        self.assertIn("first 60 s: 1.200 [", text)
        self.assertIn("(44 cycles); steady: 1.020 [", text)

    def test_a_part_without_cycles(self):
        young = [c for c in self.cycles() if c["age_s"]["default"] < 40]
        s = self.bench.summarize(young, ["untraced", "default"], "untraced", 60.0)
        self.assertIsNone(s["default"]["steady"])
        self.assertIn("steady: no cycles", self.bench.format_parts(s["default"], 60.0))

    def test_an_empty_value_leaves_the_variable_unset(self):
        # mode_cost.sh's `default` variant: occtrace as a user runs it, OCCTRACE_ACHIEVED unset.
        name, base, env = self.gpu_bench.parse_variant("default=traced:OCCTRACE_ACHIEVED=")
        self.gpu_bench.CUSTOM[name] = (base, env)
        try:
            run_env = self.gpu_bench.env_for("default", "/lib.so", "/t.db", {})
        finally:
            del self.gpu_bench.CUSTOM[name]
        self.assertNotIn("OCCTRACE_ACHIEVED", run_env)
        self.assertEqual(run_env["CUDA_INJECTION64_PATH"], "/lib.so")
        self.assertEqual(self.gpu_bench.env_for("traced", "/lib.so", "/t.db", {})["OCCTRACE_ACHIEVED"], "off")

    def run_table(self, results):
        """turns_to_table.py on `results` written as a mode_cost.sh JSON file; exit status 0."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mode_cost.json")
            with open(path, "w") as f:
                json.dump(results, f)
            p = subprocess.run([sys.executable, os.path.join(ROOT, "bench/injector/turns_to_table.py"), path],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def test_the_table(self):
        s = self.bench.summarize(self.cycles(), ["untraced", "default"], "untraced", 60.0)
        results = {"repeats": 2, "first_s": 60.0, "command": "WORKLOAD=resnet50 bash bench/injector/mode_cost.sh",
                   "env": "Sat Nov 28 05:00:00 UTC 2026\nindex, name, driver_version\n0, NVIDIA H100 80GB HBM3, 580.1\n",
                   "resnet50": {"vs_untraced": s, "vs_traced": {}, "cycles": self.cycles(), "turn_steps": 6}}
        p = self.run_table(results)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "| Mode | ResNet-50, steady state | ResNet-50, first minute |")
        default = next(line for line in lines if line.startswith("| default"))
        self.assertRegex(default, r"\| 1\.020× \[1\.0\d\d, 1\.0\d\d\] \| 1\.200× \[")
        self.assertIn("| untraced | 1 (10.00 ms/step) | 1 |", lines)
        self.assertIn("| torch.profiler (CUDA activity only) | - | - |", lines)
        self.assertIn("NVIDIA H100 80GB HBM3, driver 580.1", p.stdout)
        # Counted by the untraced process's age (ages below 60 for c 0..19).
        self.assertIn("80 cycles (40 steady state, 40 first minute", p.stdout)

    def test_the_table_with_two_off_processes(self):
        # Two `off` processes 10 % and 30 % slower than untraced (their mean: 1.20), and the
        # default mode 1.26 x untraced, i.e. 1.05 x that mean; turns_bench --pool pools the pair.
        cycles = [{"repeat": r, "ms_per_step": {"untraced": 10.0, "traced": 11.0, "traced-again": 13.0, "default": 12.6},
                   "age_s": {v: 30.0 + 1.5 * c for v in ("untraced", "traced", "traced-again", "default")}}
                  for r in range(2) for c in range(40)]
        variants = ["untraced", "traced", "traced-again", "default"]
        pooled = [dict(c, ms_per_step=dict(c["ms_per_step"], pooled=12.0)) for c in cycles]
        results = {"repeats": 2, "first_s": 60.0, "command": "WORKLOAD=train_small bash bench/injector/mode_cost.sh",
                   "train_small": {"vs_untraced": self.bench.summarize(cycles, variants, "untraced", 60.0),
                                   "vs_traced": {}, "cycles": cycles, "turn_steps": 60,
                                   "vs_pooled": self.bench.summarize(pooled, ["untraced", "default"], "pooled", 60.0)}}
        p = self.run_table(results)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "| Mode | `train_small.py`, steady state | `train_small.py`, first minute "
                                   "| `train_small.py`, ÷ `off` |")
        off = next(line for line in lines if line.startswith("| `off`"))
        self.assertIn("the mean of two processes | 1.200× [1.200, 1.200] | 1.200× [1.200, 1.200] | 1 |", off)
        default = next(line for line in lines if line.startswith("| default"))
        self.assertTrue(default.endswith("| 1.050× [1.050, 1.050] |"), default)
        self.assertIn("| untraced | 1 (10.00 ms/step) | 1 | 0.833× [0.833, 0.833] |", lines)


class IntervalOverSetsTest(unittest.TestCase):
    """bootstrap_median_interval_over_sets on made-up ratios: two process sets whose cycles agree
    closely within each set but whose levels differ by 4 %, as two identical processes can."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(ROOT, "bench/injector"))
        import turns_bench
        cls.bench = turns_bench

    def test_the_interval_over_sets_spans_the_spread_between_processes(self):
        first = [1.000 + 0.002 * (i % 5 - 2) for i in range(100)]
        second = [1.040 + 0.002 * (i % 5 - 2) for i in range(100)]
        low, high = self.bench.bootstrap_median_interval(first + second)
        over_low, over_high = self.bench.bootstrap_median_interval_over_sets([first, second])
        # Over cycles alone the pooled median stays between the two levels; the next process may
        # sit at either, and resampling the sets reaches both.
        self.assertTrue(low > 1.002 or high < 1.038, (low, high))
        self.assertLessEqual(over_low, 1.002)
        self.assertGreaterEqual(over_high, 1.038)

    def test_sets_that_agree_give_an_interval_as_narrow_as_cycles_do(self):
        first = [1.010 + 0.002 * (i % 5 - 2) for i in range(100)]
        second = [1.010 + 0.002 * ((i + 2) % 5 - 2) for i in range(100)]
        over_low, over_high = self.bench.bootstrap_median_interval_over_sets([first, second])
        self.assertGreaterEqual(over_low, 1.006)
        self.assertLessEqual(over_high, 1.014)


if __name__ == "__main__":
    unittest.main()
