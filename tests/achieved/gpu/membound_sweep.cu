// membound_sweep: a memory-bound block-size sweep for comparing achieved occupancy with Nsight
// Compute. y[i] = a * x[i] + y[i] over 4,194,304 floats (2 x 16 MiB: fits in an H100's 50 MiB
// L2, so the cache state a launch finds matters), LAUNCHES launches at each block size.
//
//   membound_sweep [flush]
//
// With "flush", an l2_flush kernel writes a 256 MiB scratch buffer before every saxpy launch,
// so each saxpy starts with x and y evicted from L2 -- what ncu's default --cache-control all
// does before each measured pass. Prints "launch <i> saxpy block=<b> grid=<g>" per launch.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
constexpr int kElements = 4194304;
constexpr int kLaunches = 5;
constexpr size_t kFlushBytes = 256u << 20;
constexpr int kBlockSizes[] = {96, 128, 200, 256, 512, 1024};

void Check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "membound_sweep: %s failed: %s\n", what, cudaGetErrorString(err));
    std::exit(2);
  }
}
}  // namespace

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void l2_flush(uint4* buffer, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    buffer[i] = make_uint4(unsigned(i), 1, 2, 3);
  }
}

int main(int argc, char** argv) {
  const bool flush = argc > 1 && std::strcmp(argv[1], "flush") == 0;
  float *x = nullptr, *y = nullptr;
  uint4* scratch = nullptr;
  Check(cudaMalloc(&x, kElements * sizeof(float)), "cudaMalloc x");
  Check(cudaMalloc(&y, kElements * sizeof(float)), "cudaMalloc y");
  Check(cudaMemset(x, 0, kElements * sizeof(float)), "cudaMemset x");
  Check(cudaMemset(y, 0, kElements * sizeof(float)), "cudaMemset y");
  if (flush) Check(cudaMalloc(&scratch, kFlushBytes), "cudaMalloc scratch");
  int launch = 0;
  for (int block : kBlockSizes) {
    const int grid = (kElements + block - 1) / block;
    for (int i = 0; i < kLaunches; ++i) {
      if (flush) l2_flush<<<1024, 256>>>(scratch, kFlushBytes / sizeof(uint4));
      saxpy<<<grid, block>>>(kElements, 2.0f, x, y);
      Check(cudaGetLastError(), "saxpy launch");
      std::printf("launch %d saxpy block=%d grid=%d\n", launch++, block, grid);
    }
  }
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaFree(x);
  cudaFree(y);
  cudaFree(scratch);
  return 0;
}
