// pm_align: long kernels of known occupancy between idle gaps, for PM sampling
// (OCCTRACE_ACHIEVED=pm) checks: do the PM samples in which SMs were active line up with each
// kernel record's [start, end], and does Σ warps ÷ (Σ cycles × max warps) over the samples
// inside a kernel match the occupancy that kernel must have?
//
//   pm_align [SPIN_US] [REPEATS] [reset]
//
// `reset`: cudaDeviceReset() after the first half of the repeats (the device's context is
// destroyed mid-run and a new one made) and again before exit, as CUDA's samples end main.
//
// Each kernel spins on clock64 for SPIN_US (default 3000 us) in every thread. Grids are sized
// from cudaOccupancyMaxActiveBlocksPerMultiprocessor so that every block is resident at once
// (one wave): the warps resident per SM are then blocks_per_sm × warps_per_block, known before
// the run. Variants: full (the occupancy limit), half the blocks per SM, one block per SM.
// Between kernels the host sleeps 5 ms with the device idle. Prints one line per kernel:
// "kernel NAME blocks_per_sm B warps_per_block W expected_pct P".
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

__global__ void spin(long long cycles, int* sink) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = 1;
}

int main(int argc, char** argv) {
  const int spin_us = argc > 1 ? std::atoi(argv[1]) : 3000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool reset = argc > 3 && std::string(argv[3]) == "reset";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 1;
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  const long long cycles = static_cast<long long>(spin_us) * clock_khz / 1000;
  int* sink = nullptr;
  if (cudaMalloc(&sink, sizeof(int)) != cudaSuccess) return 1;
  const int max_warps = prop.maxThreadsPerMultiProcessor / 32;
  struct Variant {
    const char* name;
    int threads;
    int divisor;  // blocks per SM = occupancy limit / divisor (at least 1)
  };
  const Variant variants[] = {{"full256", 256, 1}, {"half256", 256, 2}, {"one128", 128, 1000}};
  for (int r = 0; r < repeats; ++r) {
    if (reset && r == repeats / 2 && r > 0) {
      if (cudaDeviceReset() != cudaSuccess || cudaMalloc(&sink, sizeof(int)) != cudaSuccess) return 3;
    }
    for (const Variant& v : variants) {
      int limit = 0;
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&limit, spin, v.threads, 0);
      const int per_sm = limit / v.divisor > 0 ? limit / v.divisor : 1;
      const int warps = v.threads / 32;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      spin<<<per_sm * prop.multiProcessorCount, v.threads>>>(cycles, sink);
      if (cudaDeviceSynchronize() != cudaSuccess) return 2;
      if (r == 0) {
        std::printf("kernel %s blocks_per_sm %d warps_per_block %d expected_pct %.2f\n", v.name, per_sm, warps,
                    100.0 * per_sm * warps / max_warps);
      }
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  cudaFree(sink);
  if (reset && cudaDeviceReset() != cudaSuccess) return 3;
  return 0;
}
