#!/usr/bin/env python3
"""Prints the versions of the frameworks the GPU scripts trace, one per line, for their logs
(owners_all.sh, record_goldens.sh). A missing package is reported and the rest still printed.

    framework_versions.py [--torch-cuda]    (--torch-cuda: also torch's CUDA, cuDNN and GPUs)
"""
import importlib
import sys

try:
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # numba-cuda's overload of a name numpy 2.4+ removed
except ImportError:
    pass  # reported below with the rest

for mod in ("torch", "torchvision", "jax", "jaxlib", "cupy", "numba", "numba.cuda", "triton", "numpy"):
    try:
        m = importlib.import_module(mod)
        print(mod, getattr(m, "__version__", "(no __version__)"))
    except Exception as e:  # a missing package is reported, the rest still runs
        print(mod, "MISSING:", type(e).__name__, str(e)[:200])
if "--torch-cuda" in sys.argv[1:]:
    import torch
    print("torch cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
          "gpus", torch.cuda.device_count(), torch.cuda.get_device_name(0))
