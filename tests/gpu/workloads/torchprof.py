"""The torch.profiler variant of the step-time benchmarks (bench/injector/gpu_bench.py,
turns_bench.py): a profiler around the timed steps when TORCHPROF=1, CUDA activity only with
CUDAONLY=1. Shared by the workloads that are timed against it (train_small.py,
resnet50_step.py). For recorded torch.profiler traces (tests/gpu/record_goldens.sh):
TORCHPROF_TB_DIR=D writes the trace through tensorboard_trace_handler into D (gzipped, worker
name TORCHPROF_WORKER if set), TORCHPROF_TRACE=F.json[.gz] through export_chrome_trace."""
import os


def from_environment():
    """A torch.profiler.profile to enter around the timed steps, or None without TORCHPROF=1."""
    if os.environ.get("TORCHPROF") != "1":
        return None
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CUDA] if os.environ.get("CUDAONLY") == "1" else \
        [ProfilerActivity.CUDA, ProfilerActivity.CPU]
    tb_dir = os.environ.get("TORCHPROF_TB_DIR")
    if tb_dir:
        from torch.profiler import tensorboard_trace_handler
        return profile(activities=acts, on_trace_ready=tensorboard_trace_handler(
            tb_dir, worker_name=os.environ.get("TORCHPROF_WORKER") or None, use_gzip=True))
    return profile(activities=acts)


def export(prof):
    """After the profile has ended: its Chrome trace to $TORCHPROF_TRACE, if set and no
    TORCHPROF_TB_DIR's handler has saved it already (Kineto saves a trace once: 'Trace is
    already saved', seen on torch 2.11)."""
    path = os.environ.get("TORCHPROF_TRACE")
    if prof is not None and path and not os.environ.get("TORCHPROF_TB_DIR"):
        prof.export_chrome_trace(path)
