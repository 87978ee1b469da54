// A user program with Thrust, CUB and its own kernel compiled in (the owners golden's source).
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/reduce.h>
#include <cub/device/device_scan.cuh>
#include <cstdio>

__global__ void __launch_bounds__(1024) heavy_stencil(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

int main() {
  const int n = 1 << 24;
  thrust::device_vector<unsigned> keys(n);
  thrust::sort(keys.begin(), keys.end());
  unsigned total = thrust::reduce(keys.begin(), keys.end());
  size_t bytes = 0;
  unsigned* out = nullptr;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, thrust::raw_pointer_cast(keys.data()), out, n);
  void* temp = nullptr;
  cudaMalloc(&temp, bytes);
  cudaMalloc(&out, n * sizeof(unsigned));
  cub::DeviceScan::ExclusiveSum(temp, bytes, thrust::raw_pointer_cast(keys.data()), out, n);
  float *a, *b;
  cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4);
  heavy_stencil<<<n / 1024, 1024>>>(a, b, n);
  std::printf("%u\n", total);
}
