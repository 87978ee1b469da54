#!/usr/bin/env python3
"""Turns what tests/gpu/run.sh brought back into Markdown for docs/gpu-results.md.

    results_to_md.py RESULTS_DIR        (env.txt, checks.json, bench.json)

Prints one table row per check (the per-launch-configuration rows of launch_matrix are folded
into one row per configuration: PASS when all its checks pass, else the failing ones listed).
"""
import json
import os
import re
import sys
from collections import OrderedDict


def env_facts(path):
    text = open(path).read() if os.path.exists(path) else ""
    facts = OrderedDict()
    m = re.search(r"^(NVIDIA [^,]+), ([0-9.]+), (\d+ MiB)", text, re.M)
    if m:
        facts["GPU"] = f"{m.group(1)} ({m.group(3)})"
        facts["Driver"] = m.group(2)
    m = re.search(r"CUDA Version: ([0-9.]+)", text)
    if m:
        facts["CUDA (driver)"] = m.group(1)
    m = re.search(r"release ([0-9.]+), (V[0-9.]+)", text)
    if m:
        facts["nvcc"] = f"{m.group(1)} ({m.group(2)})"
    m = re.search(r"^torch (\S+) cuda (\S+) triton (\S+)", text, re.M)
    if m:
        facts["PyTorch / Triton"] = f"{m.group(1)} (CUDA {m.group(2)}) / {m.group(3)}"
    m = re.search(r"^numba (\S+)", text, re.M)
    if m:
        facts["numba"] = m.group(1)
    m = re.search(r"libcupti.so.13 => (\S+)", text)
    if m:
        facts["libcupti.so.13 (plain CUDA programs)"] = m.group(1)
    m = re.search(r"^Linux \S+ (\S+)", text, re.M)
    if m:
        facts["Kernel"] = m.group(1)
    return facts


def fold(rows):
    """Groups 'kernels[inject]: <config>: <check>' rows into one row per configuration."""
    out = OrderedDict()
    for r in rows:
        name, status, detail = r["check"], r["status"], r["detail"]
        if status == "INFO" and name.endswith(": time"):
            continue
        if re.match(r"kernels\[(preload|launcher)\]: .* / ", name):
            continue  # their failures repeat inject's; 'same validation' sums them up
        m = re.match(r"(kernels\[inject\]: [^:]+ \d+x\d+x\d+ / \d+x\d+x\d+(?: \+\d+B)?): (.*)", name)
        if m:
            key = m.group(1)
            entry = out.setdefault(key, {"status": "PASS", "detail": [], "n": 0})
            if status == "INFO":
                if "oracle" in m.group(2):
                    entry.setdefault("oracle", detail)
                continue
            entry["n"] += 1
            if status == "FAIL":
                entry["status"] = "FAIL"
                entry["detail"].append(f"{m.group(2)}: {detail}")
            continue
        out[name + f"#{len(out)}"] = {"status": status, "detail": [detail], "n": 1, "plain": name}
    return out


def main():
    d = sys.argv[1]
    facts = env_facts(os.path.join(d, "env.txt"))
    print("| | |\n| --- | --- |")
    for k, v in facts.items():
        print(f"| {k} | {v} |")
    print()
    rows = json.load(open(os.path.join(d, "checks.json")))
    print("| check | result | detail |\n| --- | --- | --- |")
    for key, e in fold(rows).items():
        name = e.get("plain", key)
        if "plain" not in e:
            detail = "; ".join(e["detail"]) if e["detail"] else f"{e['n']} attribute checks"
        else:
            detail = " ".join(e["detail"])
        detail = detail.replace("|", "\\|").replace("\n", " ")[:220]
        print(f"| {name} | {e['status']} | {detail} |")
    n_pass = sum(1 for r in rows if r["status"] == "PASS")
    n_fail = sum(1 for r in rows if r["status"] == "FAIL")
    print(f"\n{n_pass} checks passed, {n_fail} failed.")


if __name__ == "__main__":
    main()
