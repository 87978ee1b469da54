"""The wheel's console scripts. Each one execs the C++ tool installed in this package's bin/
folder, so the running process is the tool itself: its exit status and signals are the tool's,
and occtrace finds ../lib/occtrace/libocctrace.so from its own path (/proc/self/exe)."""
import os
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _exec(tool):
    path = os.path.join(_BIN, tool)
    if not os.access(path, os.X_OK):
        why = (" (this wheel was built without the CUDA toolkit: it holds occ-report only; "
               "build it where CUDA 13 with CUPTI is installed)" if tool == "occtrace" else "")
        sys.stderr.write(f"{tool}: {path} is missing{why}\n")
        sys.exit(2)
    os.execv(path, [tool] + sys.argv[1:])


def occtrace():
    _exec("occtrace")


def occ_report():
    _exec("occ-report")
