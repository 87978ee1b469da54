# GPU check (run by check.sh under occtrace): torch.profiler in a traced process. The program
# must complete; occtrace's stderr must name the conflict.
import torch
from torch.profiler import ProfilerActivity, profile

x = torch.randn(1024, 1024, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        x = torch.relu(x @ x)
    torch.cuda.synchronize()
cuda_events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print(f"torch.profiler CUDA events: {len(cuda_events)}")
print("program completed")
