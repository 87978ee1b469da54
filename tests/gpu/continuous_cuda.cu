// A plain CUDA program that launches without pausing, for the kill tests: kernels of a few
// configurations (new ones keep appearing, as in a program with varying shapes), a
// cudaDeviceSynchronize every 256 launches, then 'completed N T' on stdout: N kernels
// finished, T seconds since the first launch. Runs until killed.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

__global__ void scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + 1.0f;
}

int main() {
  const int n = 1 << 20;
  float* data = nullptr;
  if (cudaMalloc(&data, n * sizeof(float)) != cudaSuccess) return 1;
  const int blocks[] = {64, 128, 256, 512, 96, 1024, 192, 384};
  long long launched = 0;
  auto first = std::chrono::steady_clock::now();
  for (long long batch = 0;; ++batch) {
    const int block = blocks[(batch / 20) % 8];
    const int grid = static_cast<int>(((n >> (batch % 3)) + block - 1) / block);
    for (int i = 0; i < 256; ++i) scale<<<grid, block>>>(data, n >> (batch % 3), 0.5f);
    if (cudaDeviceSynchronize() != cudaSuccess) return 2;
    launched += 256;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
    std::printf("completed %lld %.4f\n", launched, t);
    std::fflush(stdout);
  }
}
