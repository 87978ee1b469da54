// A CUDA C++ program of the kind a user profiles: 4 host threads, each launching on its own
// non-blocking stream at the same time, three kernels of different lengths (one shorter than a
// PM-sampling interval) at one block size per thread. Every stream's kernels overlap the other
// streams' most of the time, so achieved occupancy must come from mixed samples.
//   streams4 [ROUNDS]   (default 400) -> prints one checksum line per stream
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

__global__ void blur3(const float* in, float* out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  for (int y = 1; y < height - 1; ++y) {
    if (x > 0 && x < width - 1) {
      float s = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * width + x + dx];
      out[y * width + x] = s * (1.0f / 9.0f);
    }
  }
}

__global__ void axpby(float a, const float* x, float b, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + b * y[i];
}

__global__ void row_sums(const float* in, float* sums, int width) {
  extern __shared__ float partial[];
  const float* row = in + static_cast<size_t>(blockIdx.x) * width;
  float s = 0;
  for (int i = threadIdx.x; i < width; i += blockDim.x) s += row[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

static void Worker(int index, int block, int rounds, double* checksum) {
  const int width = 4096, height = 512, n = width * height;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *a, *b, *sums;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&sums, height * sizeof(float)));
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>((i * 7 + index) % 13) * 0.1f;
  CHECK(cudaMemcpyAsync(a, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  CHECK(cudaMemcpyAsync(b, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  for (int r = 0; r < rounds; ++r) {
    blur3<<<(width + block - 1) / block, block, 0, stream>>>(a, b, width, height);
    axpby<<<(n / 4 + block - 1) / block, block, 0, stream>>>(0.5f, b, 0.5f, a, n);
    row_sums<<<height, block, block * sizeof(float), stream>>>(a, sums, width);
  }
  std::vector<float> out(height);
  CHECK(cudaMemcpyAsync(out.data(), sums, height * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  double s = 0;
  for (float v : out) s += v;
  *checksum = s;
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(sums));
  CHECK(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 400;
  const int blocks[4] = {64, 128, 256, 512};
  CHECK(cudaFree(nullptr));
  double checksums[4] = {};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(Worker, i, blocks[i], rounds, &checksums[i]);
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) std::printf("stream %d block %d checksum %.6e\n", i, blocks[i], checksums[i]);
  return 0;
}
