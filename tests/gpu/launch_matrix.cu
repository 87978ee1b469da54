// launch_matrix: a CUDA program whose every kernel launch is known in advance, to check that
// libocctrace records each launch with the attributes the CUDA runtime itself reports.
//
//   launch_matrix EXPECTED.json [--empty N] [--exit-code N]
//
// It launches kernels that exercise one attribute each (registers, __launch_bounds__, static,
// dynamic and opt-in shared memory, local-memory spills, 1D/2D/3D and odd block shapes, a
// requested carveout, clusters, cooperative launches, a captured graph replayed several times,
// several streams, and driver-API launches of JIT-loaded PTX through CUmodule and CUlibrary),
// and writes one JSON object per launch configuration to EXPECTED.json: the launch itself
// (grid, block, dynamic smem, count, launch type, cluster, graph) and the function's attributes
// from cudaFuncGetAttributes / cuFuncGetAttribute plus cudaOccupancyMaxActiveBlocksPerMultiprocessor
// (and cudaOccupancyMaxActiveClusters for cluster launches) -- the independent oracle that
// validate_trace.py and the report tests compare the trace against.
//
// stdout is deterministic (a checksum of computed data), so traced and untraced runs can be
// compared byte for byte; the exit code is --exit-code's value.

#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_activity.h>  // CUpti_ActivityLaunchType / CUpti_FuncShmemLimitConfig values only

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kDriverKernelsPtx.h"  // driver_kernels.cu compiled to PTX (occ_embed_file)

namespace cg = cooperative_groups;

namespace {

[[noreturn]] void Die(const char* call, const char* what, const char* file, int line) {
  std::fprintf(stderr, "launch_matrix: %s failed: %s (%s:%d)\n", call, what, file, line);
  std::exit(2);
}

void CheckRuntime(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) Die(call, cudaGetErrorString(err), file, line);
}

void CheckDriver(CUresult res, const char* call, const char* file, int line) {
  if (res != CUDA_SUCCESS) {
    const char* msg = nullptr;
    cuGetErrorString(res, &msg);
    Die(call, msg != nullptr ? msg : "unknown CUresult", file, line);
  }
}

#define CUDA_CHECK(call) CheckRuntime((call), #call, __FILE__, __LINE__)
#define CU_CHECK(call) CheckDriver((call), #call, __FILE__, __LINE__)
// Launch errors surface at the next runtime call; check right away so the culprit is named.
#define LAUNCH_CHECK() CheckRuntime(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

}  // namespace

namespace occgpu {

__global__ void k_empty() {}

// 128 accumulators kept live across an unrolled mixing loop: ptxas needs far more than 64
// registers per thread (the exact number is whatever cudaFuncGetAttributes reports).
#define OCC_MIX_BODY                                                           \
  float acc[128];                                                               \
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);             \
  _Pragma("unroll") for (int j = 0; j < 128; ++j) acc[j] = in[(i + j * 97) % n]; \
  _Pragma("unroll") for (int r = 0; r < 6; ++r) {                              \
    _Pragma("unroll") for (int j = 0; j < 128; ++j) {                          \
      acc[j] = fmaf(acc[j], acc[(j + r + 1) % 128], 0.5f);                      \
    }                                                                          \
  }                                                                            \
  float sum = 0.0f;                                                            \
  _Pragma("unroll") for (int j = 0; j < 128; ++j) sum += acc[j] * static_cast<float>(j + 1); \
  if (i < n) out[i] = sum;

__global__ void k_high_regs(const float* __restrict__ in, float* __restrict__ out, int n) {
  OCC_MIX_BODY
}

// Same body, capped by __launch_bounds__(256, 4): at most 65536 / (256 * 4) = 64 registers.
__global__ void __launch_bounds__(256, 4)
    k_launch_bounds(const float* __restrict__ in, float* __restrict__ out, int n) {
  OCC_MIX_BODY
}

// 16 KiB of static shared memory.
__global__ void k_static_smem(float* out) {
  __shared__ float tile[4096];
  for (unsigned j = threadIdx.x; j < 4096; j += blockDim.x) tile[j] = static_cast<float>(j);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x * 7u) % 4096u];
}

// Dynamic shared memory below the 48 KiB default limit (no opt-in attribute set).
__global__ void k_dyn_small(float* out, int n_floats) {
  extern __shared__ float dyn_small[];
  for (int j = static_cast<int>(threadIdx.x); j < n_floats; j += static_cast<int>(blockDim.x)) {
    dyn_small[j] = static_cast<float>(j);
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] =
      dyn_small[(static_cast<int>(threadIdx.x) * 13) % n_floats];
}

// Dynamic shared memory above 48 KiB: needs cudaFuncAttributeMaxDynamicSharedMemorySize
// (CUPTI reports shmemLimitConfig = OPTIN for such functions).
__global__ void k_dyn_optin(float* out, int n_floats) {
  extern __shared__ float dyn_optin[];
  for (int j = static_cast<int>(threadIdx.x); j < n_floats; j += static_cast<int>(blockDim.x)) {
    dyn_optin[j] = static_cast<float>(j);
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] =
      dyn_optin[(static_cast<int>(threadIdx.x) * 13) % n_floats];
}

// A per-thread array indexed with run-time values cannot live in registers: local memory.
__global__ void k_local_spill(const int* idx, float* out) {
  float scratch[256];
  for (int j = 0; j < 256; ++j) scratch[j] = static_cast<float>(j * (idx[j % 32] + 1));
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = scratch[idx[threadIdx.x % 32] & 255] + scratch[(idx[(threadIdx.x + 1) % 32] * 7) & 255];
}

// Used with 1D/2D/3D and odd block shapes.
__global__ void k_dims(unsigned* out, unsigned capacity) {
  unsigned block_linear = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned thread_linear = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  unsigned g = block_linear * blockDim.x * blockDim.y * blockDim.z + thread_linear;
  if (g < capacity) out[g] = g;
}

// Requested carveout (cudaFuncAttributePreferredSharedMemoryCarveout).
__global__ void k_carveout(float* out) {
  __shared__ float buf[1024];
  buf[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}

// Cluster size given at launch (cudaLaunchKernelEx + cudaLaunchAttributeClusterDimension).
__global__ void k_cluster_rt(unsigned* out) {
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  if (threadIdx.x == 0) out[blockIdx.x] = cluster.block_rank();
}

// Cluster size fixed at compile time, launched with <<< >>>.
__global__ void __cluster_dims__(4, 1, 1) k_cluster_static(unsigned* out) {
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  if (threadIdx.x == 0) out[blockIdx.x] = cluster.block_rank();
}

// Grid-wide barrier: only valid in a cooperative launch.
__global__ void k_coop_classic(unsigned* counter) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) atomicAdd(counter, 1u);
  grid.sync();
}

// Same, launched with cudaLaunchKernelEx + cudaLaunchAttributeCooperative.
__global__ void k_coop_attr(unsigned* counter) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) atomicAdd(counter, 1u);
  grid.sync();
}

// Captured into a CUDA graph (never launched outside it).
__global__ void k_graph_a(float* data, float add) {
  data[blockIdx.x * blockDim.x + threadIdx.x] += add;
}
__global__ void k_graph_b(float* data) {
  data[blockIdx.x * blockDim.x + threadIdx.x] *= 0.5f;
}

// Launched on several streams.
__global__ void k_stream_work(float* data, int n) {
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] = data[i] * 1.0001f + 1.0f;
}

}  // namespace occgpu

namespace {

struct Dim {
  unsigned x = 1, y = 1, z = 1;
};

Dim FromDim3(dim3 d) { return Dim{d.x, d.y, d.z}; }

// Function attributes as the runtime/driver reports them: the oracle for the trace.
struct FuncFacts {
  int num_regs = 0;
  long long static_smem = 0;
  long long local_bytes = 0;
  int max_threads_per_block = 0;
  int max_dynamic_smem = 0;
  int preferred_carveout = -1;
};

// One launch configuration: what the program did and what the runtime says about it.
struct Expected {
  std::string key;          // unique substring of the kernel's (mangled) name
  bool cpp_name = true;     // C++ (mangled) name that must demangle to occgpu::<key>
  std::string api;          // how it was launched, for the report
  int count = 0;
  Dim grid, block;
  long long dynamic_smem = 0;
  FuncFacts facts;
  int blocks_per_sm = 0;    // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  int launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  Dim cluster{0, 0, 0};     // 0,0,0: no cluster
  int max_active_clusters = -1;
  bool graph = false;
  int shmem_limit_config = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
  int carveout_pct = -1;    // requested carveout, -1 = none requested
  int streams = 1;          // distinct streams the launches went to
};

FuncFacts RuntimeFacts(const void* func) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, func));
  FuncFacts f;
  f.num_regs = a.numRegs;
  f.static_smem = static_cast<long long>(a.sharedSizeBytes);
  f.local_bytes = static_cast<long long>(a.localSizeBytes);
  f.max_threads_per_block = a.maxThreadsPerBlock;
  f.max_dynamic_smem = a.maxDynamicSharedSizeBytes;
  f.preferred_carveout = a.preferredShmemCarveout;
  return f;
}

int RuntimeBlocksPerSm(const void* func, Dim block, long long dyn) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &n, func, static_cast<int>(block.x * block.y * block.z), static_cast<size_t>(dyn)));
  return n;
}

class ExpectedLog {
 public:
  Expected& Add(Expected e) {
    entries_.push_back(std::move(e));
    return entries_.back();
  }
  // Expected for a runtime-API kernel, facts and occupancy filled from the runtime.
  Expected& AddRuntime(const void* func, std::string key, std::string api, int count, dim3 grid,
                       dim3 block, long long dyn) {
    Expected e;
    e.key = std::move(key);
    e.api = std::move(api);
    e.count = count;
    e.grid = FromDim3(grid);
    e.block = FromDim3(block);
    e.dynamic_smem = dyn;
    e.facts = RuntimeFacts(func);
    e.blocks_per_sm = RuntimeBlocksPerSm(func, e.block, dyn);
    return Add(std::move(e));
  }
  int TotalLaunches() const {
    int n = 0;
    for (const Expected& e : entries_) n += e.count;
    return n;
  }
  size_t Configs() const { return entries_.size(); }

  void Write(const std::string& path, const cudaDeviceProp& prop, int device, int driver_version,
             int runtime_version) const {
    std::ostringstream o;
    o << "{\n  \"device\": {\"ordinal\": " << device << ", \"name\": \"" << prop.name << "\""
      << ", \"smCount\": " << prop.multiProcessorCount
      << ", \"computeMajor\": " << prop.major << ", \"computeMinor\": " << prop.minor
      << ", \"maxThreadsPerBlock\": " << prop.maxThreadsPerBlock
      << ", \"maxThreadsPerMultiprocessor\": " << prop.maxThreadsPerMultiProcessor
      << ", \"maxBlocksPerSm\": " << prop.maxBlocksPerMultiProcessor
      << ", \"maxRegistersPerSm\": " << prop.regsPerMultiprocessor
      << ", \"maxRegistersPerBlock\": " << prop.regsPerBlock
      << ", \"maxShmemPerBlock\": " << prop.sharedMemPerBlock
      << ", \"maxShmemPerBlockOptin\": " << prop.sharedMemPerBlockOptin
      << ", \"maxShmemPerSm\": " << prop.sharedMemPerMultiprocessor
      << ", \"reservedSharedMemPerBlock\": " << prop.reservedSharedMemPerBlock
      << ", \"threadsPerWarp\": " << prop.warpSize
      << ", \"l2CacheSize\": " << prop.l2CacheSize
      << ", \"totalMemory\": " << prop.totalGlobalMem
      << ", \"driverVersion\": " << driver_version << ", \"runtimeVersion\": " << runtime_version
      << "},\n  \"totalLaunches\": " << TotalLaunches() << ",\n  \"launches\": [\n";
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Expected& e = entries_[i];
      o << "    {\"key\": \"" << e.key << "\", \"cppName\": " << (e.cpp_name ? "true" : "false")
        << ", \"api\": \"" << e.api << "\", \"count\": " << e.count
        << ", \"grid\": [" << e.grid.x << ", " << e.grid.y << ", " << e.grid.z << "]"
        << ", \"block\": [" << e.block.x << ", " << e.block.y << ", " << e.block.z << "]"
        << ", \"dynamicSmem\": " << e.dynamic_smem << ", \"numRegs\": " << e.facts.num_regs
        << ", \"staticSmem\": " << e.facts.static_smem
        << ", \"localBytesPerThread\": " << e.facts.local_bytes
        << ", \"maxThreadsPerBlock\": " << e.facts.max_threads_per_block
        << ", \"maxDynamicSmem\": " << e.facts.max_dynamic_smem
        << ", \"blocksPerSm\": " << e.blocks_per_sm << ", \"launchType\": " << e.launch_type
        << ", \"cluster\": [" << e.cluster.x << ", " << e.cluster.y << ", " << e.cluster.z << "]"
        << ", \"maxActiveClusters\": " << e.max_active_clusters
        << ", \"graph\": " << (e.graph ? "true" : "false")
        << ", \"shmemLimitConfig\": " << e.shmem_limit_config
        << ", \"carveoutPct\": " << e.carveout_pct << ", \"streams\": " << e.streams << "}"
        << (i + 1 < entries_.size() ? ",\n" : "\n");
    }
    o << "  ]\n}\n";
    std::ofstream f(path);
    f << o.str();
    if (!f) {
      std::fprintf(stderr, "launch_matrix: cannot write %s\n", path.c_str());
      std::exit(2);
    }
  }

 private:
  std::vector<Expected> entries_;
};

struct Options {
  std::string expected_path;
  int empty_launches = 2000;
  int exit_code = 0;
};

Options ParseArgs(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if ((a == "--empty" || a == "--exit-code") && i + 1 < argc) {
      int v = std::atoi(argv[++i]);
      (a == "--empty" ? opt.empty_launches : opt.exit_code) = v;
    } else if (!a.empty() && a[0] != '-' && opt.expected_path.empty()) {
      opt.expected_path = std::string(a);
    } else {
      std::fprintf(stderr, "usage: launch_matrix EXPECTED.json [--empty N] [--exit-code N]\n");
      std::exit(2);
    }
  }
  if (opt.expected_path.empty()) {
    std::fprintf(stderr, "usage: launch_matrix EXPECTED.json [--empty N] [--exit-code N]\n");
    std::exit(2);
  }
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace occgpu;
  const Options opt = ParseArgs(argc, argv);

  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "launch_matrix: no CUDA device\n");
    return 77;
  }
  const int device = 0;
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major < 9) {
    std::fprintf(stderr, "launch_matrix: needs compute capability 9.0+ (clusters), found %d.%d\n",
                 prop.major, prop.minor);
    return 77;
  }
  int driver_version = 0, runtime_version = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));

  ExpectedLog log;
  const int n = 1 << 16;
  float *in = nullptr, *out = nullptr;
  unsigned* uout = nullptr;
  int* idx = nullptr;
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&uout, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&idx, 32 * sizeof(int)));
  {
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i % 17) * 0.25f;
    CUDA_CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> hidx(32);
    for (int i = 0; i < 32; ++i) hidx[static_cast<size_t>(i)] = (i * 37) % 251;
    CUDA_CHECK(cudaMemcpy(idx, hidx.data(), 32 * sizeof(int), cudaMemcpyHostToDevice));
  }

  // Many identical launches: counts at volume.
  for (int i = 0; i < opt.empty_launches; ++i) k_empty<<<1, 32>>>();
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_empty), "k_empty", "<<<>>>", opt.empty_launches,
                 dim3(1), dim3(32), 0);

  // Registers.
  for (int i = 0; i < 3; ++i) k_high_regs<<<64, 128>>>(in, out, n);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_high_regs), "k_high_regs", "<<<>>>", 3, dim3(64),
                 dim3(128), 0);
  for (int i = 0; i < 2; ++i) k_launch_bounds<<<64, 256>>>(in, out, n);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_launch_bounds), "k_launch_bounds", "<<<>>>", 2,
                 dim3(64), dim3(256), 0);

  // Shared memory: static, dynamic, dynamic with opt-in above 48 KiB.
  k_static_smem<<<32, 256>>>(out);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_static_smem), "k_static_smem", "<<<>>>", 1,
                 dim3(32), dim3(256), 0);
  const int small_floats = 8 * 1024 / 4;
  k_dyn_small<<<16, 128, small_floats * sizeof(float)>>>(out, small_floats);
  k_dyn_small<<<16, 128, small_floats * sizeof(float)>>>(out, small_floats);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_dyn_small), "k_dyn_small", "<<<>>>", 2, dim3(16),
                 dim3(128), small_floats * 4LL);
  const int optin_bytes = 100 * 1024;
  CUDA_CHECK(cudaFuncSetAttribute(k_dyn_optin, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  optin_bytes));
  k_dyn_optin<<<16, 256, optin_bytes>>>(out, optin_bytes / 4);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_dyn_optin), "k_dyn_optin", "<<<>>> opt-in smem",
                 1, dim3(16), dim3(256), optin_bytes)
      .shmem_limit_config = CUPTI_FUNC_SHMEM_LIMIT_OPTIN;

  // Local memory.
  k_local_spill<<<8, 64>>>(idx, out);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_local_spill), "k_local_spill", "<<<>>>", 1,
                 dim3(8), dim3(64), 0);

  // Block and grid shapes: 1D odd sizes, 2D, 3D, odd 3D, the 1024-thread maximum.
  struct Shape {
    dim3 grid, block;
    int count;
  };
  const Shape shapes[] = {{dim3(7), dim3(33), 2},           {dim3(3), dim3(100), 1},
                          {dim3(4, 3), dim3(16, 8), 1},     {dim3(2, 2, 2), dim3(8, 4, 4), 3},
                          {dim3(3, 1, 2), dim3(7, 3, 5), 1}, {dim3(1), dim3(1024), 1}};
  for (const Shape& s : shapes) {
    for (int i = 0; i < s.count; ++i) k_dims<<<s.grid, s.block>>>(uout, static_cast<unsigned>(n));
    LAUNCH_CHECK();
    log.AddRuntime(reinterpret_cast<const void*>(k_dims), "k_dims", "<<<>>>", s.count, s.grid,
                   s.block, 0);
  }

  // Requested carveout: 50 % of the unified L1/shared memory as shared memory.
  const int carveout_pct = 50;
  CUDA_CHECK(cudaFuncSetAttribute(k_carveout, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  carveout_pct));
  k_carveout<<<16, 256>>>(out);
  k_carveout<<<16, 256>>>(out);
  LAUNCH_CHECK();
  log.AddRuntime(reinterpret_cast<const void*>(k_carveout), "k_carveout", "<<<>>> carveout", 2,
                 dim3(16), dim3(256), 0)
      .carveout_pct = carveout_pct;

  // Clusters: size given at launch, and fixed at compile time.
  {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(16);
    cfg.blockDim = dim3(128);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int max_clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, k_cluster_rt, &cfg));
    for (int i = 0; i < 2; ++i) CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_cluster_rt, uout));
    Expected& e = log.AddRuntime(reinterpret_cast<const void*>(k_cluster_rt), "k_cluster_rt",
                                 "cudaLaunchKernelEx cluster", 2, cfg.gridDim, cfg.blockDim, 0);
    e.cluster = Dim{2, 1, 1};
    e.max_active_clusters = max_clusters;
  }
  {
    k_cluster_static<<<16, 64>>>(uout);
    LAUNCH_CHECK();
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(16);
    cfg.blockDim = dim3(64);
    int max_clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, k_cluster_static, &cfg));
    Expected& e = log.AddRuntime(reinterpret_cast<const void*>(k_cluster_static),
                                 "k_cluster_static", "<<<>>> __cluster_dims__", 1, dim3(16),
                                 dim3(64), 0);
    e.cluster = Dim{4, 1, 1};
    e.max_active_clusters = max_clusters;
  }

  // Cooperative launches: classic API and launch attribute.
  {
    int coop_supported = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&coop_supported, cudaDevAttrCooperativeLaunch, device));
    if (coop_supported == 0) {
      std::fprintf(stderr, "launch_matrix: device lacks cooperative launch\n");
      return 2;
    }
    unsigned* counter = uout;
    const dim3 grid(static_cast<unsigned>(prop.multiProcessorCount)), block(128);
    void* args[] = {&counter};
    CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(k_coop_classic), grid,
                                           block, args, 0, nullptr));
    log.AddRuntime(reinterpret_cast<const void*>(k_coop_classic), "k_coop_classic",
                   "cudaLaunchCooperativeKernel", 1, grid, block, 0)
        .launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;

    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_coop_attr, counter));
    log.AddRuntime(reinterpret_cast<const void*>(k_coop_attr), "k_coop_attr",
                   "cudaLaunchKernelEx cooperative", 1, grid, block, 0)
        .launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  // CUDA graph: capture three kernels (a, b, a), replay the graph five times.
  {
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    k_graph_a<<<8, 128, 0, s>>>(out, 1.0f);
    k_graph_b<<<8, 128, 0, s>>>(out);
    k_graph_a<<<8, 128, 0, s>>>(out, 2.0f);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const int replays = 5;
    for (int i = 0; i < replays; ++i) CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    log.AddRuntime(reinterpret_cast<const void*>(k_graph_a), "k_graph_a", "graph replay",
                   2 * replays, dim3(8), dim3(128), 0)
        .graph = true;
    log.AddRuntime(reinterpret_cast<const void*>(k_graph_b), "k_graph_b", "graph replay", replays,
                   dim3(8), dim3(128), 0)
        .graph = true;
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(s));
  }

  // Several streams, launching concurrently.
  {
    const int n_streams = 4, per_stream = 8;
    cudaStream_t streams[n_streams];
    for (cudaStream_t& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < per_stream; ++i) {
      for (int k = 0; k < n_streams; ++k) {
        k_stream_work<<<32, 128, 0, streams[k]>>>(out + k * 4096, 4096);
      }
    }
    LAUNCH_CHECK();
    for (cudaStream_t& s : streams) CUDA_CHECK(cudaStreamSynchronize(s));
    for (cudaStream_t& s : streams) CUDA_CHECK(cudaStreamDestroy(s));
    log.AddRuntime(reinterpret_cast<const void*>(k_stream_work), "k_stream_work",
                   "<<<>>> on 4 streams", n_streams * per_stream, dim3(32), dim3(128), 0)
        .streams = n_streams;
  }

  // Driver API: PTX JIT-loaded as a CUmodule (cuLaunchKernel on a CUfunction) and as a
  // CUlibrary (cuLaunchKernel on a CUkernel, which CUDA 12+ accepts in place of a CUfunction).
  double checksum = 0.0;
  {
    CUdevice cu_dev = 0;
    CU_CHECK(cuDeviceGet(&cu_dev, device));
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoadData(&module, kDriverKernelsPtx.data()));
    CUfunction saxpy = nullptr;
    CU_CHECK(cuModuleGetFunction(&saxpy, module, "k_driver_saxpy"));
    float* x = in;
    float* y = out;
    float a = 2.0f;
    int count = 4096;
    void* params[] = {&a, &x, &y, &count};
    const int saxpy_launches = 3;
    for (int i = 0; i < saxpy_launches; ++i) {
      CU_CHECK(cuLaunchKernel(saxpy, 16, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
    }
    Expected e;
    e.key = "k_driver_saxpy";
    e.cpp_name = false;
    e.api = "cuModuleLoadData + cuLaunchKernel";
    e.count = saxpy_launches;
    e.grid = Dim{16, 1, 1};
    e.block = Dim{256, 1, 1};
    int v = 0;
    CU_CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, saxpy));
    e.facts.num_regs = v;
    CU_CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, saxpy));
    e.facts.static_smem = v;
    CU_CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, saxpy));
    e.facts.local_bytes = v;
    CU_CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, saxpy));
    e.facts.max_threads_per_block = v;
    CU_CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, saxpy));
    e.facts.max_dynamic_smem = v;
    CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&e.blocks_per_sm, saxpy, 256, 0));
    log.Add(e);

    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadData(&library, kDriverKernelsPtx.data(), nullptr, nullptr, 0, nullptr,
                               nullptr, 0));
    CUkernel scale = nullptr;
    CU_CHECK(cuLibraryGetKernel(&scale, library, "k_driver_scale"));
    float factor = 0.5f;
    void* scale_params[] = {&y, &factor, &count};
    const unsigned scale_smem = 128 * sizeof(float);
    const int scale_launches = 2;
    for (int i = 0; i < scale_launches; ++i) {
      CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), 32, 1, 1, 128, 1, 1, scale_smem,
                              nullptr, scale_params, nullptr));
    }
    Expected l;
    l.key = "k_driver_scale";
    l.cpp_name = false;
    l.api = "cuLibraryGetKernel + cuLaunchKernel(CUkernel)";
    l.count = scale_launches;
    l.grid = Dim{32, 1, 1};
    l.block = Dim{128, 1, 1};
    l.dynamic_smem = scale_smem;
    CU_CHECK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, scale, cu_dev));
    l.facts.num_regs = v;
    CU_CHECK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, scale, cu_dev));
    l.facts.static_smem = v;
    CU_CHECK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, scale, cu_dev));
    l.facts.local_bytes = v;
    CU_CHECK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, scale, cu_dev));
    l.facts.max_threads_per_block = v;
    CU_CHECK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, scale,
                                  cu_dev));
    l.facts.max_dynamic_smem = v;
    CUfunction scale_fn = nullptr;
    CU_CHECK(cuKernelGetFunction(&scale_fn, scale));
    CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&l.blocks_per_sm, scale_fn, 128,
                                                         scale_smem));
    log.Add(l);

    CU_CHECK(cuCtxSynchronize());
    std::vector<float> host(4096);
    CUDA_CHECK(cudaMemcpy(host.data(), y, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float f : host) checksum += static_cast<double>(f);
    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuModuleUnload(module));
  }

  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(uout));
  CUDA_CHECK(cudaFree(idx));

  log.Write(opt.expected_path, prop, device, driver_version, runtime_version);
  std::printf("launch_matrix: %d launches in %zu configurations, checksum %.3f\n",
              log.TotalLaunches(), log.Configs(), checksum);
  return opt.exit_code;
}
