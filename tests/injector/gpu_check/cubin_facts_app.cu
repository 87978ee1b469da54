// GPU check of OCC_FUNCTION / OCC_KERNEL_CONFIG.localMemoryPerThread (run by check.sh under
// occtrace): launches a kernel with 3 named barriers and one with a 1 KiB local array, and
// prints what the CUDA runtime itself reports for them (cudaFuncGetAttributes), the
// independent source check.sh compares the trace with.
#include <cstdio>

__global__ void named_barriers(float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = static_cast<float>(threadIdx.x);
  asm volatile("bar.sync 1, 128;");
  asm volatile("bar.sync 2, 128;");
  asm volatile("bar.sync 3, 128;");
  out[threadIdx.x] = s[255 - threadIdx.x];
}

__global__ void __launch_bounds__(128) local_array(float* out, int n) {
  float local[256];
  for (int i = 0; i < 256; ++i) local[i] = out[i * n];
  out[threadIdx.x] = local[(threadIdx.x * 7) % 256] + local[n % 256];
}

int main() {
  float* buffer = nullptr;
  if (cudaMalloc(&buffer, 1 << 20) != cudaSuccess) return 1;
  named_barriers<<<4, 256>>>(buffer);
  local_array<<<4, 128>>>(buffer, 1);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  cudaFuncAttributes a{};
  cudaFuncGetAttributes(&a, named_barriers);
  std::printf("named_barriers localSizeBytes=%zu numRegs=%d\n", a.localSizeBytes, a.numRegs);
  cudaFuncGetAttributes(&a, local_array);
  std::printf("local_array localSizeBytes=%zu numRegs=%d maxThreadsPerBlock=%d\n", a.localSizeBytes, a.numRegs,
              a.maxThreadsPerBlock);
  cudaFree(buffer);
  return 0;
}
