"""The torch.profiler variant of the step-time benchmarks (bench/injector/gpu_bench.py,
turns_bench.py): a profiler around the timed steps when TORCHPROF=1, CUDA activity only with
CUDAONLY=1. Shared by the workloads that are timed against it (train_small.py,
resnet50_step.py)."""
import os


def from_environment():
    """A torch.profiler.profile to enter around the timed steps, or None without TORCHPROF=1."""
    if os.environ.get("TORCHPROF") != "1":
        return None
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CUDA] if os.environ.get("CUDAONLY") == "1" else \
        [ProfilerActivity.CUDA, ProfilerActivity.CPU]
    return profile(activities=acts)
