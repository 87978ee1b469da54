#!/usr/bin/env python3
"""CPU test of bench/injector/launch_phases.py: rounds are placed in time by the sum of the
rounds before them (launches x us/launch), round 0 is left out, and each variant's phase figure
is the median over processes of the per-process medians, divided by `off`'s.

The made-up log has rounds of 100,000 launches: at 10 us a launch a round lasts 1 s, so the
round that ends at t s is round t. With the default phases (sampling 0.5-4.5 s, paused 6-14 s)
the expected values are worked out by hand in each test."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "injector", "launch_phases.py")


def process(variant, number, us_by_round):
    lines = [f"== {variant} process {number} 10:00:00"]
    lines += [f"round {r}: us/launch {us:.4f} drain_us 12.0" for r, us in enumerate(us_by_round)]
    lines.append("launch_overhead: launches/s 1 us/launch 1 (median of 1 rounds of 100000)")
    return lines


def run(lines):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        return subprocess.run([sys.executable, SCRIPT, f.name, "--per-round", "100000"],
                              capture_output=True, text=True, check=True).stdout
    finally:
        os.remove(f.name)


class LaunchPhasesTest(unittest.TestCase):
    def test_phases_split_by_time_and_ratio_against_off(self):
        # Off: 16 rounds of 1 s; round r ends at r + 1 s. Sampling (0.5-4.5 s): rounds 0-3, less
        # round 0: 3 rounds. Paused (6-14 s): rounds 5-13: 9 rounds.
        # Default: round 0 takes 5 s (50 us), then 1.3 s a round (13 us): round r ends at
        # 5 + 1.3 r s. None ends in 0.5-4.5 s; rounds 1-6 end at 6.3-12.8 s (round 7 at 14.1).
        off = [10.0] * 16
        default = [50.0] + [13.0] * 15
        out = run(process("off", 1, off) + process("default", 1, default))
        self.assertIn("| off | 1 | 10.000 (3) | 10.000 (9) |", out)
        self.assertIn("| default | 1 | - | 13.000 (6) |", out)
        self.assertIn("| default | - | 13.000 (1.300) |", out)

    def test_median_over_processes(self):
        # Three default processes whose paused medians are 11, 12 and 30 us: 12 is the median.
        lines = process("off", 1, [10.0] * 16)
        for number, us in ((1, 11.0), (2, 12.0), (3, 30.0)):
            lines += process("default", number, [10.0] * 6 + [us] * 8)
        out = run(lines)
        self.assertIn("| default | 10.000 (1.000) | 12.000 (1.200) |", out)


if __name__ == "__main__":
    unittest.main()
