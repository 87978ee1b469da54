"""A real model's training step: torchvision ResNet-50, bf16 autocast, channels_last, batch 64,
SGD with momentum; ~190 kernel configurations and ~1,340 launches per step on an H100.

Environment:
  STEPS=N        timed steps (default 150), after WARMUP steps (default 5)
  WARMUP_S=T     keep warming up until T seconds after start (steady state for the sampler)
  BATCH=N        batch size (default 64)
  TURN_FDS=R,W   take turns with other benchmark processes (turns.py)
  TORCHPROF=1    wrap the timed steps in torch.profiler (CUDAONLY=1: CUDA activity only)
Prints 'steps/s X ms/step Y' on stdout.
"""
import os
import sys
import time

started = time.monotonic()

import torch
import torchvision

import torchprof  # noqa: E402 (beside this file)
import turns  # noqa: E402

steps = int(os.environ.get("STEPS", "150"))
batch = int(os.environ.get("BATCH", "64"))
torch.manual_seed(0)
torch.backends.cudnn.benchmark = False
model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
y = torch.randint(0, 1000, (batch,), device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


for _ in range(int(os.environ.get("WARMUP", "5"))):
    step()
torch.cuda.synchronize()
if turns.active():  # under bench/injector/turns_bench.py: timed in turns with other variants
    turns.serve(step, torch.cuda.synchronize, profiler=torchprof.from_environment)
    sys.exit(0)
warmup_s = float(os.environ.get("WARMUP_S", "0"))
while time.monotonic() - started < warmup_s:
    step()
    torch.cuda.synchronize()

prof = torchprof.from_environment()
if prof is not None:
    prof.__enter__()

t0 = time.perf_counter()
for _ in range(steps):
    loss = step()
torch.cuda.synchronize()
dt = time.perf_counter() - t0
if prof is not None:
    prof.__exit__(None, None, None)
print(f"loss {loss.item():.4f}")
print(f"steps/s {steps / dt:.1f} ms/step {1000 * dt / steps:.3f}")
