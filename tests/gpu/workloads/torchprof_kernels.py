"""Runs train_small.py under torch.profiler (set TORCHPROF=1 CUDAONLY=1) and prints the number of
kernel events per timed step: an independent count of train_small's kernels per step.

    TORCHPROF=1 CUDAONLY=1 STEPS=20 python torchprof_kernels.py path/to/train_small.py
Prints 'torchprof kernels K steps S per_step P memcpy_memset M'.
"""
import runpy
import sys

g = runpy.run_path(sys.argv[1], run_name="__main__")
prof, steps = g["prof"], g["steps"]
if prof is None:
    sys.exit("torchprof_kernels: set TORCHPROF=1 (and CUDAONLY=1)")
cuda_events = [e for e in prof.events() if e.device_type.name == "CUDA"]
copies = [e for e in cuda_events if e.name.startswith(("Memcpy", "Memset"))]
kernels = len(cuda_events) - len(copies)
print(f"torchprof kernels {kernels} steps {steps} per_step {kernels / steps:.3f} memcpy_memset {len(copies)}")
