// A user binary with header-library code compiled into it (Thrust, CUB, CUTLASS) beside the
// user's own kernels, one of them compiled with __launch_bounds__:
//  - thrust::sort (CUB's onesweep radix sort) and thrust::reduce of 16 M keys;
//  - cub::DeviceScan::InclusiveSum of 16 M ints (and its init kernel);
//  - a CUTLASS SIMT SGEMM (cutlass::gemm::device::Gemm, 1024 x 1024 x 1024);
//  - `heavy`, compiled with __launch_bounds__(1024) and launched with 1024 threads, which uses
//    enough registers that only one block fits per SM;
//  - `scale`, the user's plain kernel, at block 64 and 512 (a measured comparison).
//   header_libs [ROUNDS]   (default 30) -> prints checksums
#include <cub/device/device_scan.cuh>
#include <cutlass/gemm/device/gemm.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e = (call);                                                              \
    if (e != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));             \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

// Many live values per thread: with 1024 threads a block, registers allow one block per SM.
__global__ void __launch_bounds__(1024) heavy(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v[24];
#pragma unroll
  for (int k = 0; k < 24; ++k) v[k] = in[(i + k * 977) % n];
  float s = 0;
#pragma unroll
  for (int r = 0; r < 16; ++r) {
#pragma unroll
    for (int k = 0; k < 24; ++k) {
      v[k] = v[k] * 1.0001f + v[(k + r) % 24] * 0.0001f;
      s += v[k];
    }
  }
  out[i] = s;
}

__global__ void scale(float* x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= a;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 30;
  const int n = 1 << 24;
  thrust::device_vector<unsigned> keys(n);
  thrust::device_vector<int> ints(n, 1), scanned(n);
  thrust::device_vector<float> a(1 << 20, 1.0f), b(1 << 20, 0.5f), c(1 << 20, 0.0f);
  thrust::device_vector<float> big(n, 1.0f), big_out(n);
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, ints.data().get(), scanned.data().get(), n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor, float, cutlass::layout::RowMajor,
                                           float, cutlass::layout::RowMajor>;
  Gemm gemm;
  const int m = 1024;
  unsigned long long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    thrust::sequence(keys.begin(), keys.end(), static_cast<unsigned>(r * 7919u));
    thrust::sort(keys.begin(), keys.end());
    sum += thrust::reduce(keys.begin(), keys.end(), 0ull);
    CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, ints.data().get(), scanned.data().get(), n));
    Gemm::Arguments args({m, m, m}, {a.data().get(), m}, {b.data().get(), m}, {c.data().get(), m},
                         {c.data().get(), m}, {1.0f, 0.0f});
    if (gemm(args) != cutlass::Status::kSuccess) {
      std::fprintf(stderr, "CUTLASS GEMM failed\n");
      return 1;
    }
    heavy<<<n / 1024, 1024>>>(big.data().get(), big_out.data().get(), n);
    scale<<<n / 64, 64>>>(big.data().get(), 1.0f, n);
    scale<<<n / 512, 512>>>(big.data().get(), 1.0f, n);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  int last = scanned[n - 1];
  float c0 = c[0];
  std::printf("sum %llu scan %d gemm %.1f\n", sum, last, c0);
  CHECK(cudaFree(temp));
  return 0;
}
