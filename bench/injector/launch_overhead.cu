// launch_overhead: empty-kernel launch throughput, the harshest case for per-launch tracing cost.
//
//   launch_overhead [LAUNCHES_PER_ROUND [ROUNDS]]
//
// Launches an empty <<<1, 32>>> kernel LAUNCHES_PER_ROUND times per round on one stream and
// synchronizes; after one warm-up round (lazy module loading, CUPTI instrumentation) it prints
// the median round as 'launch_overhead: launches/s X us/launch Y'. bench/injector/gpu_bench.py
// runs it untraced and traced, interleaved, and reports the ratio.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void occ_bench_empty() {}

static void Check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "launch_overhead: %s failed: %s\n", what, cudaGetErrorString(err));
    std::exit(2);
  }
}

int main(int argc, char** argv) {
  const int per_round = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (per_round <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: launch_overhead [LAUNCHES_PER_ROUND [ROUNDS]]\n");
    return 2;
  }
  // LAUNCH_OVERHEAD_VERBOSE=1 prints every round: the launch loop and the wait for the GPU to
  // drain after it. A drain of many microseconds means the GPU, not the CPU, set the pace (the
  // launch queue was full); a CPU-bound loop drains in about one kernel's time.
  const char* verbose_env = std::getenv("LAUNCH_OVERHEAD_VERBOSE");
  const bool verbose = verbose_env != nullptr && verbose_env[0] == '1';
  Check(cudaFree(nullptr), "cudaFree(0)");
  std::vector<double> us_per_launch;
  for (int r = 0; r <= rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_round; ++i) occ_bench_empty<<<1, 32>>>();
    Check(cudaGetLastError(), "launch");
    auto launched = std::chrono::steady_clock::now();
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    auto t1 = std::chrono::steady_clock::now();
    const double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / per_round;
    if (verbose) {
      std::printf("round %d: us/launch %.4f drain_us %.1f\n", r, us,
                  std::chrono::duration<double, std::micro>(t1 - launched).count());
    }
    if (r > 0) us_per_launch.push_back(us);  // round 0 is warm-up
  }
  std::sort(us_per_launch.begin(), us_per_launch.end());
  const double median = us_per_launch[us_per_launch.size() / 2];
  std::printf("launch_overhead: launches/s %.0f us/launch %.4f (median of %d rounds of %d)\n",
              1e6 / median, median, rounds, per_round);
  return 0;
}
