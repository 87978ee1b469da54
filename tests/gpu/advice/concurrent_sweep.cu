// One stencil kernel at four block sizes, first each alone, then all four at once from four host
// threads on four non-blocking streams: the case where launches that ran concurrently must not
// be compared as if they ran alone. Prints each block size's solo mean (cudaEvent timing of the
// solo phase, serialized: the independent expectation the report's comparison is checked
// against) and one checksum line per stream.
//   concurrent_sweep [SOLO_LAUNCHES] [CONCURRENT_LAUNCHES]   (defaults 100 and 1500)
// SOLO_LAUNCHES 0 leaves only the launches that happen to run alone in the concurrent phase.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e = (call);                                                              \
    if (e != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));             \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

constexpr int kWidth = 4096, kHeight = 2048;
constexpr int kBlocks[] = {32, 64, 256, 512};

// A 5-point stencil over a 4096 x 2048 grid, one thread per point, 1-D blocks over the flattened
// grid: the block size changes only how threads are grouped.
__global__ void smooth5(const float* in, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int x = i % kWidth, y = i / kWidth;
  if (y <= 0 || y >= kHeight - 1 || x <= 0 || x >= kWidth - 1) return;
  float s = in[i] * 0.5f;
  s += 0.125f * (in[i - 1] + in[i + 1] + in[i - kWidth] + in[i + kWidth]);
  for (int k = 0; k < 24; ++k) s = s * 0.999f + 0.001f * __sinf(s);  // some arithmetic per point
  out[i] = s;
}

struct Buffers {
  float *in = nullptr, *out = nullptr;
};

void Launch(const Buffers& b, int block, cudaStream_t stream) {
  const int n = kWidth * kHeight;
  smooth5<<<(n + block - 1) / block, block, 0, stream>>>(b.in, b.out);
}

int main(int argc, char** argv) {
  const int solo = argc > 1 ? std::atoi(argv[1]) : 100;
  const int concurrent = argc > 2 ? std::atoi(argv[2]) : 1500;
  const size_t bytes = sizeof(float) * kWidth * kHeight;
  std::vector<Buffers> buffers(4);
  for (auto& b : buffers) {
    CHECK(cudaMalloc(&b.in, bytes));
    CHECK(cudaMalloc(&b.out, bytes));
    CHECK(cudaMemset(b.in, 0, bytes));
    CHECK(cudaMemset(b.out, 0, bytes));
  }
  // Solo phase: one block size at a time, serialized, timed with events.
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int k = 0; k < 4 && solo > 0; ++k) {
    Launch(buffers[0], kBlocks[k], nullptr);  // warm-up
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < solo; ++i) Launch(buffers[0], kBlocks[k], nullptr);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("solo block %d: %.2f us per launch (%d launches)\n", kBlocks[k], 1000.0 * ms / solo, solo);
  }
  CHECK(cudaDeviceSynchronize());
  // Concurrent phase: four threads, four streams, one block size each.
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      cudaStream_t stream;
      CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      for (int i = 0; i < concurrent; ++i) Launch(buffers[k], kBlocks[k], stream);
      CHECK(cudaStreamSynchronize(stream));
      float sample = 0;
      CHECK(cudaMemcpy(&sample, buffers[k].out + kWidth * 7 + 9, sizeof sample, cudaMemcpyDeviceToHost));
      std::printf("stream %d block %d: %d launches, out %.6f\n", k, kBlocks[k], concurrent, sample);
      CHECK(cudaStreamDestroy(stream));
    });
  }
  for (auto& t : threads) t.join();
  for (auto& b : buffers) {
    CHECK(cudaFree(b.in));
    CHECK(cudaFree(b.out));
  }
  return 0;
}
