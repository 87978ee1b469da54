"""A PyTorch user's training loop: torchvision ResNet-18 (weights=None: nothing downloaded) on
synthetic 224x224 images, STEPS steps (default 30) of SGD with cuDNN autotuning on
(`cudnn.benchmark`), so cuDNN launches its convolution kernels and trial kernels and cuBLAS its
GEMM for the classifier (#29: the owner of each kernel is the library that launched it).
Prints 'resnet18 STEPS steps ms/step X loss Y'.
"""
import os
import time

import torch
import torch.nn as nn
import torchvision

STEPS = int(os.environ.get("STEPS", "30"))
torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
model = torchvision.models.resnet18(weights=None, num_classes=100).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 3, 224, 224, device="cuda")
y = torch.randint(0, 100, (64,), device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


for _ in range(3):  # cuDNN's autotuning happens here
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(STEPS):
    loss = step()
torch.cuda.synchronize()
print(f"resnet18 {STEPS} steps ms/step {1000 * (time.perf_counter() - t0) / STEPS:.2f} "
      f"loss {loss.item():.4f}")
