"""DistributedDataParallel training over NCCL, one process per GPU:

    torchrun --standalone --nproc_per_node=2 train_ddp.py

A small convolutional model on synthetic data, deterministic launch for launch (cuDNN
autotuning off), so that two runs of the same settings launch the same kernels.
Environment:
  STEPS=N          training steps (default 200)
  SLOW_RANK=R      rank R does extra GPU work every step (a straggler the report must name)
  KILL_RANK=R      rank R SIGKILLs itself after KILL_AT_STEP steps (default 100)
  BACKEND=gloo     gloo instead of NCCL: lets several ranks share one GPU (rank r uses GPU
                   r % device_count; NCCL refuses two ranks on one device)
  TORCHPROF_TB_DIR=D  with TORCHPROF=1: also write each rank's trace (tensorboard_trace_handler,
                   worker 'rankR', gzipped) into D, CPU and CUDA activity
  TORCHPROF=1      count this rank's kernels in the training steps with torch.profiler (CUDA
                   activity only, copies and memsets left out): an independent count to set
                   against the difference between two traces of different STEPS
Prints per rank: 'rank R world W device D steps S ms/step X' and, with TORCHPROF=1,
'rank R torch.profiler kernels N steps S'.
"""
import os
import signal
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

rank = int(os.environ["RANK"])
local_rank = int(os.environ["LOCAL_RANK"])
world = int(os.environ["WORLD_SIZE"])
steps = int(os.environ.get("STEPS", "200"))
slow_rank = int(os.environ.get("SLOW_RANK", "-1"))
kill_rank = int(os.environ.get("KILL_RANK", "-1"))
kill_at = int(os.environ.get("KILL_AT_STEP", "100"))

backend = os.environ.get("BACKEND", "nccl")
gpu = local_rank % torch.cuda.device_count() if backend != "nccl" else local_rank
torch.backends.cudnn.benchmark = False
torch.cuda.set_device(gpu)
dev = torch.device("cuda", gpu)
if backend == "nccl":
    dist.init_process_group("nccl", device_id=dev)
else:
    dist.init_process_group(backend)

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 10)).to(dev)
ddp = DistributedDataParallel(model, device_ids=[gpu])
opt = torch.optim.SGD(ddp.parameters(), lr=1e-2, momentum=0.9)
x = torch.randn(64, 3, 32, 32, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
extra = torch.randn(2048, 2048, device=dev) if rank == slow_rank else None

prof = None
if os.environ.get("TORCHPROF") == "1":
    from torch.profiler import ProfilerActivity, profile, tensorboard_trace_handler
    tb_dir = os.environ.get("TORCHPROF_TB_DIR")
    if tb_dir:
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       on_trace_ready=tensorboard_trace_handler(tb_dir, worker_name=f"rank{rank}",
                                                                use_gzip=True))
    else:
        prof = profile(activities=[ProfilerActivity.CUDA])
    prof.__enter__()
torch.cuda.synchronize()
t0 = time.perf_counter()
for step in range(steps):
    if rank == kill_rank and step == kill_at:
        torch.cuda.synchronize()
        print(f"rank {rank} killing itself at step {step}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(ddp(x), y)
    if extra is not None:
        for _ in range(8):  # ~8 x 17 GFLOP of extra work per step on this rank only
            extra = torch.tanh(extra @ extra * 1e-3)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
dt = time.perf_counter() - t0
if prof is not None:
    prof.__exit__(None, None, None)
    kernels = [e for e in prof.events() if e.device_type.name == "CUDA"
               and not e.name.startswith(("Memcpy", "Memset"))]
    print(f"rank {rank} torch.profiler kernels {len(kernels)} steps {steps}", flush=True)
print(f"rank {rank} world {world} device {gpu} backend {backend} steps {steps} ms/step {dt / steps * 1e3:.3f} "
      f"loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
