"""Writes the output code TorchInductor generates for a small training step, without a GPU.

The source of triton_cache_test.cc's Inductor excerpt and of the tests/golden/inductor_source_names
trace's source nodes: `TORCHINDUCTOR_CACHE_DIR=/tmp/ind python3 inductor_output_code.py`, then
read /tmp/ind/<2 characters>/c<hash>.py (the modules that call async_compile.triton).

Inductor writes the same module for a CUDA device; here cpu_backend="triton" makes it generate
Triton kernels on a machine with neither a GPU nor a Triton CPU driver, so the kernels are not
compiled (AsyncCompile.triton returns a stand-in) and the step computes nothing meaningful.
"""
import torch
import torch.nn as nn
import torch._inductor.async_compile as async_compile
import torch._inductor.config as inductor_config
import torch.utils._triton as torch_triton

inductor_config.cpu_backend = "triton"
inductor_config.compile_threads = 1
torch_triton.triton_hash_with_backend = lambda: "0" * 64


class _NotCompiled:
    def run(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


async_compile.AsyncCompile.triton = lambda self, kernel_name, source_code, device_str="cuda": _NotCompiled()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.ln = nn.LayerNorm(128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x, bias):
        hidden = torch.relu(self.fc1(x) + bias)
        normed = self.ln(hidden)
        logits = self.fc2(normed)
        return torch.log_softmax(logits, dim=1)


model = Block()


def step(x, bias, target):
    loss = nn.functional.nll_loss(model(x, bias), target)
    loss.backward()
    return loss


torch.compile(step)(torch.randn(32, 64), torch.randn(32, 128, requires_grad=True), torch.randint(0, 10, (32,)))
