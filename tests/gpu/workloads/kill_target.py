"""Launches kernels in batches and says how many it launched, for the crash-safety tests.

Each batch: BATCH in-place adds (one kernel each), synchronize, print 'launched N' (flushed),
then sleep PAUSE seconds so that occtrace's periodic flush has committed them. Then, by MODE:
  loop     keep going until killed (SIGTERM / SIGKILL from the test)
  os_exit  after BATCHES batches call os._exit(EXIT_CODE): no atexit, no Python shutdown
"""
import os
import sys
import time

import torch

MODE = os.environ.get("MODE", "loop")
BATCH = int(os.environ.get("BATCH", "200"))
BATCHES = int(os.environ.get("BATCHES", "3"))
PAUSE = float(os.environ.get("PAUSE", "0.6"))
EXIT_CODE = int(os.environ.get("EXIT_CODE", "3"))

x = torch.zeros(1 << 16, device="cuda")
torch.cuda.synchronize()
print("setup done", flush=True)
launched = 0
done = 0
while True:
    for _ in range(BATCH):
        x.add_(1.0)
    torch.cuda.synchronize()
    launched += BATCH
    done += 1
    print(f"launched {launched}", flush=True)
    time.sleep(PAUSE)
    if MODE == "os_exit" and done >= BATCHES:
        sys.stdout.flush()
        os._exit(EXIT_CODE)
