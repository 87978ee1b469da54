// Test kernels with a spread of achieved occupancies, for comparing occtrace's achieved
// occupancy against Nsight Compute on the same launches (run_accuracy.sh).
//
//   occ_kernels accuracy   every configuration of kAccuracyCases, 3 launches each
//   occ_kernels features   cooperative and cluster launches, stream capture + graph replay,
//                          launches from 4 threads into one context
//   occ_kernels park       idle parking and re-enabling of the profiler (sample mode)
//   occ_kernels quiet      a new configuration measured after its context parked
//   occ_kernels timeline N the tail-wave configuration N times, each launch followed by the
//                          occupancy its SMs held, computed from per-block %smid/clock64 spans
//
// Every block spins for ~20 us (clock64), so each kernel runs well over the 5 us the
// comparison needs and occupancy is set by residency alone. Prints one "launch" line per
// kernel launch, in launch order.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,        \
                   cudaGetErrorString(err_));                                          \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

namespace {

constexpr long long kSpinCycles = 36000;  // ~20 us at 1.75 GHz

__device__ float g_sink;

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 1u << 30) g_sink = 1.0f;  // never true: keeps the kernel observable
}

__global__ void spin_smem_kernel(long long cycles) {
  extern __shared__ float smem[];
  smem[threadIdx.x] = static_cast<float>(threadIdx.x);
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  __syncthreads();
  if (smem[threadIdx.x] < 0.0f) g_sink = smem[0];
}

// spin_kernel plus a per-block record of where and when it ran: the SM (%smid) and that SM's
// clock64 at the block's first and last instruction. From these the occupancy the SMs held can
// be computed for every launch without any profiler (TimelineOccupancy), an independent check
// of both occtrace and ncu on the very launch each of them measured.
struct BlockSpan {
  unsigned int smid;
  long long start;
  long long end;
};

__global__ void timeline_spin_kernel(long long cycles, BlockSpan* spans) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    spans[block] = BlockSpan{smid, start, clock64()};
  }
}

// Holds kRegs independent accumulators live across the spin, so ptxas allocates about kRegs
// registers per thread (checked with -Xptxas -v; see docs/accuracy.md).
template <int kRegs>
__global__ void __launch_bounds__(256) register_kernel(long long cycles, float seed) {
  float acc[kRegs];
#pragma unroll
  for (int i = 0; i < kRegs; ++i) acc[i] = seed * static_cast<float>(threadIdx.x + i);
  const long long start = clock64();
  while (clock64() - start < cycles) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) acc[i] = acc[i] * 0.999f + seed;
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kRegs; ++i) sum += acc[i];
  if (sum == 12345.678f) g_sink = sum;
}

struct Case {
  const char* name;
  dim3 grid;
  dim3 block;
  size_t smem;
  int kind;  // 0 spin, 1 spin+dynamic smem, 2 register_kernel<120>, 3 register_kernel<56>,
             // 4 spin for 10x as long (~200 us per block)
};

const Case kAccuracyCases[] = {
    {"66x256", dim3(66), dim3(256), 0, 0},
    {"1x32", dim3(1), dim3(32), 0, 0},
    {"132x128 smem200K", dim3(132), dim3(128), 200 * 1024, 1},
    {"264x512 smem100K", dim3(264), dim3(512), 100 * 1024, 1},
    {"264x1024", dim3(264), dim3(1024), 0, 0},
    {"1056x256", dim3(1056), dim3(256), 0, 0},
    {"1122x256", dim3(1122), dim3(256), 0, 0},
    {"1122x256 200us", dim3(1122), dim3(256), 0, 4},
    {"(33,4)x(16,16)", dim3(33, 4), dim3(16, 16), 0, 0},
    {"528x96", dim3(528), dim3(96), 0, 0},
    {"2112x64", dim3(2112), dim3(64), 0, 0},
    {"264x256 regs~120", dim3(264), dim3(256), 0, 2},
    {"1056x256 regs~120", dim3(1056), dim3(256), 0, 2},
    {"528x256 regs~56", dim3(528), dim3(256), 0, 3},
};

int g_launch = 0;

void Launch(const Case& c, cudaStream_t stream) {
  switch (c.kind) {
    case 0: spin_kernel<<<c.grid, c.block, c.smem, stream>>>(kSpinCycles); break;
    case 1: spin_smem_kernel<<<c.grid, c.block, c.smem, stream>>>(kSpinCycles); break;
    case 2: register_kernel<120><<<c.grid, c.block, c.smem, stream>>>(kSpinCycles, 1.0f); break;
    case 3: register_kernel<56><<<c.grid, c.block, c.smem, stream>>>(kSpinCycles, 1.0f); break;
    case 4: spin_kernel<<<c.grid, c.block, c.smem, stream>>>(10 * kSpinCycles); break;
    default: std::abort();
  }
  CHECK(cudaGetLastError());
}

void PrintLaunch(const char* name, const dim3& grid, const dim3& block, size_t smem) {
  std::printf("launch %d %s grid=(%u,%u,%u) block=(%u,%u,%u) smem=%zu\n", g_launch++, name, grid.x,
              grid.y, grid.z, block.x, block.y, block.z, smem);
}

void PrintRegisters() {
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, register_kernel<120>));
  std::printf("regs register_kernel<120> %d\n", attr.numRegs);
  CHECK(cudaFuncGetAttributes(&attr, register_kernel<56>));
  std::printf("regs register_kernel<56> %d\n", attr.numRegs);
  CHECK(cudaFuncGetAttributes(&attr, spin_kernel));
  std::printf("regs spin_kernel %d\n", attr.numRegs);
}

int RunAccuracy() {
  CHECK(cudaFuncSetAttribute(spin_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             200 * 1024));
  PrintRegisters();
  for (const Case& c : kAccuracyCases) {
    for (int rep = 0; rep < 3; ++rep) {
      PrintLaunch(c.name, c.grid, c.block, c.smem);
      Launch(c, nullptr);
    }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}

// Per SM: active cycles = the union of its blocks' spans; warp-cycles = each block's span times
// its warps. Occupancy = sum of warp-cycles / (sum of active cycles x max warps per SM), the
// definition of sm__warps_active.avg.pct_of_peak_sustained_active. Also reports where the
// blocks beyond the first wave ran: the placement that decides a tail wave's occupancy.
void PrintTimeline(int index, const std::vector<BlockSpan>& spans, int warps_per_block,
                   int max_warps_per_sm, int blocks_per_wave) {
  std::vector<std::vector<std::pair<long long, long long>>> per_sm;
  for (const BlockSpan& span : spans) {
    if (span.smid >= per_sm.size()) per_sm.resize(span.smid + 1);
    per_sm[span.smid].emplace_back(span.start, span.end);
  }
  double warp_cycles = 0, active_cycles = 0;
  int used_sms = 0;
  for (auto& blocks : per_sm) {
    if (blocks.empty()) continue;
    ++used_sms;
    std::sort(blocks.begin(), blocks.end());
    long long covered_until = blocks.front().first;
    for (const auto& [start, end] : blocks) {
      warp_cycles += static_cast<double>(end - start) * warps_per_block;
      const long long from = std::max(start, covered_until);
      if (end > from) active_cycles += static_cast<double>(end - from);
      covered_until = std::max(covered_until, end);
    }
  }
  // Tail blocks: the blocks that started last (beyond one full wave), by start time per SM
  // relative to that SM's first block.
  std::vector<std::pair<long long, unsigned int>> order;
  for (unsigned int sm = 0; sm < per_sm.size(); ++sm) {
    if (per_sm[sm].empty()) continue;
    const long long first = per_sm[sm].front().first;
    for (const auto& block : per_sm[sm]) order.emplace_back(block.first - first, sm);
  }
  std::sort(order.begin(), order.end());
  std::vector<int> tail_per_sm(per_sm.size(), 0);
  int tail_sms = 0, tail_max = 0;
  for (size_t i = static_cast<size_t>(blocks_per_wave); i < order.size(); ++i) {
    int& n = tail_per_sm[order[i].second];
    if (n++ == 0) ++tail_sms;
    tail_max = std::max(tail_max, n);
  }
  std::printf("timeline %d occupancy=%.2f used_sms=%d tail_blocks=%zu tail_sms=%d tail_max_per_sm=%d\n",
              index, active_cycles > 0 ? 100.0 * warp_cycles / (active_cycles * max_warps_per_sm) : 0.0,
              used_sms, order.size() > static_cast<size_t>(blocks_per_wave) ? order.size() - blocks_per_wave : 0,
              tail_sms, tail_max);
}

// occ_kernels timeline N [CYCLE_FACTOR]: N launches of the tail-wave configuration (1122 x 256 on
// a 132-SM GPU: one full wave of 1056 blocks and a tail of 66), each followed by its timeline.
int RunTimeline(int launches, int cycle_factor) {
  const dim3 grid(1122), block(256);
  int device = 0, sms = 0, max_threads = 0, blocks_per_sm = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, timeline_spin_kernel, 256, 0));
  std::printf("timeline config grid=%u block=%u sms=%d blocks_per_sm=%d wave=%d\n", grid.x, block.x,
              sms, blocks_per_sm, sms * blocks_per_sm);
  BlockSpan* spans = nullptr;
  CHECK(cudaMalloc(&spans, grid.x * sizeof(BlockSpan)));
  std::vector<BlockSpan> host(grid.x);
  for (int i = 0; i < launches; ++i) {
    PrintLaunch("timeline", grid, block, 0);
    timeline_spin_kernel<<<grid, block>>>(cycle_factor * kSpinCycles, spans);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host.data(), spans, host.size() * sizeof(BlockSpan), cudaMemcpyDeviceToHost));
    PrintTimeline(i, host, static_cast<int>(block.x / 32), max_threads / 32, sms * blocks_per_sm);
  }
  CHECK(cudaFree(spans));
  return 0;
}

int RunFeatures() {
  // Cooperative launch: 132 x 256 (12.5 %).
  {
    long long cycles = kSpinCycles;
    void* args[] = {&cycles};
    PrintLaunch("cooperative 132x256", dim3(132), dim3(256), 0);
    CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(spin_kernel), dim3(132),
                                      dim3(256), args, 0, nullptr));
  }
  // Cluster launch: 132 x 256 in clusters of 2 (may yield no range: docs/achieved.md).
  {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(132);
    config.blockDim = dim3(256);
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = 2;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    PrintLaunch("cluster2 132x256", dim3(132), dim3(256), 0);
    CHECK(cudaLaunchKernelEx(&config, spin_kernel, kSpinCycles));
  }
  CHECK(cudaDeviceSynchronize());

  // Stream capture must keep working: the profiler is never started on a capturing stream.
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  PrintLaunch("captured 7x64", dim3(7), dim3(64), 0);
  spin_kernel<<<7, 64, 0, stream>>>(kSpinCycles);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 2; ++i) {
    PrintLaunch("graph launch", dim3(0), dim3(0), 0);
    CHECK(cudaGraphLaunch(exec, stream));
  }
  CHECK(cudaStreamSynchronize(stream));
  // The same signature launched eagerly is measured (capture did not use up its sample).
  PrintLaunch("eager 7x64", dim3(7), dim3(64), 0);
  spin_kernel<<<7, 64, 0, stream>>>(kSpinCycles);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));
  std::printf("capture ok\n");

  // Four threads launching into the one primary context, each on its own stream.
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      cudaStream_t s;
      CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (int i = 0; i < kPerThread; ++i) {
        // Thread t launches 66 x 256 (12.5 %) or 264 x 1024 (~99.9 %) alternately.
        if ((t + i) % 2 == 0) {
          spin_kernel<<<66, 256, 0, s>>>(kSpinCycles);
        } else {
          spin_kernel<<<264, 1024, 0, s>>>(kSpinCycles);
        }
        CHECK(cudaGetLastError());
      }
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaStreamDestroy(s));
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::printf("threads ok %d launches\n", kThreads * kPerThread);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaDeviceSynchronize());
  return 0;
}

// Sample mode with a short idle time (OCCTRACE_ACHIEVED_IDLE=0.1): the profiler parks while
// nothing new launches and re-enables for a new signature.
int RunPark() {
  auto a = [] { spin_kernel<<<66, 256>>>(kSpinCycles); CHECK(cudaGetLastError()); };
  PrintLaunch("A 66x256", dim3(66), dim3(256), 0);
  a();
  CHECK(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PrintLaunch("A 66x256 (parks)", dim3(66), dim3(256), 0);
  a();
  PrintLaunch("B 264x1024 (re-enables)", dim3(264), dim3(1024), 0);
  spin_kernel<<<264, 1024>>>(kSpinCycles);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PrintLaunch("A 66x256 (parks)", dim3(66), dim3(256), 0);
  a();
  PrintLaunch("C 1x32 (re-enables)", dim3(1), dim3(32), 0);
  spin_kernel<<<1, 32>>>(kSpinCycles);
  CHECK(cudaGetLastError());
  PrintLaunch("B 264x1024", dim3(264), dim3(1024), 0);
  spin_kernel<<<264, 1024>>>(kSpinCycles);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("park ok\n");
  return 0;
}

// Sample mode under libocctrace.so with OCCTRACE_ACHIEVED_IDLE=0.1: A is measured; idle, the
// profiler parks; B, a configuration first launched while parked, is measured (its first
// launch: the launch callbacks stay on while parked).
int RunQuiet() {
  auto a = [] { spin_kernel<<<66, 256>>>(kSpinCycles); CHECK(cudaGetLastError()); };
  auto b = [] { spin_kernel<<<264, 1024>>>(kSpinCycles); CHECK(cudaGetLastError()); };
  PrintLaunch("A 66x256 (measured)", dim3(66), dim3(256), 0);
  a();
  CHECK(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PrintLaunch("A 66x256 (parks)", dim3(66), dim3(256), 0);
  a();
  CHECK(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PrintLaunch("A 66x256 (callbacks off)", dim3(66), dim3(256), 0);
  a();
  PrintLaunch("B 264x1024 (unseen)", dim3(264), dim3(1024), 0);
  b();
  CHECK(cudaDeviceSynchronize());
  // The writer's commit period (250 ms) plus CUPTI's hand-over of the record.
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  PrintLaunch("B 264x1024 (measured)", dim3(264), dim3(1024), 0);
  b();
  CHECK(cudaDeviceSynchronize());
  std::printf("quiet ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "accuracy";
  if (mode == "accuracy") return RunAccuracy();
  if (mode == "features") return RunFeatures();
  if (mode == "park") return RunPark();
  if (mode == "quiet") return RunQuiet();
  if (mode == "timeline") {
    return RunTimeline(argc > 2 ? std::atoi(argv[2]) : 20, argc > 3 ? std::atoi(argv[3]) : 1);
  }
  std::fprintf(stderr, "usage: %s accuracy|features|park|quiet|timeline [N [CYCLE_FACTOR]]\n", argv[0]);
  return 2;
}
