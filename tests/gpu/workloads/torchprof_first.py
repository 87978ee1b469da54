"""torch.profiler started before the program's first CUDA call (the other order of the conflict
test): prints 'torchprof-first CUDA events N' (N = 0 when occtrace holds CUPTI)."""
import torch
from torch.profiler import ProfilerActivity, profile

with profile(activities=[ProfilerActivity.CUDA]) as prof:
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(10):
        x.mul_(1.01)
    torch.cuda.synchronize()
events = [e for e in prof.events() if e.device_type.name == "CUDA"]
print(f"torchprof-first CUDA events {len(events)} sum {x.sum().item():.1f}")
