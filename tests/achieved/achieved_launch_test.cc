// Decoding of launch-callback parameters and outer correlation ids. The parameter structs are
// CUDA's own (generated_cuda_meta.h), filled by hand: no GPU needed.
#include "injector/achieved/achieved_launch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace occ::inj {
namespace {

CUfunction FakeFunction(uintptr_t v) { return reinterpret_cast<CUfunction>(v); }
CUstream FakeStream(uintptr_t v) { return reinterpret_cast<CUstream>(v); }

template <typename Params>
Params Classic() {
  Params p{};
  p.f = FakeFunction(0x1000);
  p.gridDimX = 1122;
  p.gridDimY = 3;
  p.gridDimZ = 2;
  p.blockDimX = 256;
  p.blockDimY = 2;
  p.blockDimZ = 1;
  p.sharedMemBytes = 102400;
  p.hStream = FakeStream(0x77);
  return p;
}

void ExpectClassic(const LaunchArgs& a) {
  EXPECT_EQ(a.function, FakeFunction(0x1000));
  EXPECT_EQ(a.grid[0], 1122u);
  EXPECT_EQ(a.grid[1], 3u);
  EXPECT_EQ(a.grid[2], 2u);
  EXPECT_EQ(a.block[0], 256u);
  EXPECT_EQ(a.block[1], 2u);
  EXPECT_EQ(a.block[2], 1u);
  EXPECT_EQ(a.dynamic_smem, 102400u);
  EXPECT_EQ(a.stream, FakeStream(0x77));
}

TEST(AchievedLaunch, ReadsClassicLaunchParams) {
  auto k = Classic<cuLaunchKernel_params>();
  ExpectClassic(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &k));
  auto kp = Classic<cuLaunchKernel_ptsz_params>();
  ExpectClassic(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &kp));
  auto c = Classic<cuLaunchCooperativeKernel_params>();
  ExpectClassic(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, &c));
  auto cp = Classic<cuLaunchCooperativeKernel_ptsz_params>();
  ExpectClassic(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, &cp));
}

// The null stream of a _ptsz launch is the thread's own default stream (the driver API docs:
// "per-thread default stream"), which stream APIs such as cuStreamIsCapturing take as
// CU_STREAM_PER_THREAD; in a legacy launch it stays the legacy null stream.
TEST(AchievedLaunch, NullStreamOfAPerThreadLaunchIsThePerThreadStream) {
  auto legacy = Classic<cuLaunchKernel_params>();
  legacy.hStream = nullptr;
  EXPECT_EQ(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &legacy).stream, nullptr);
  auto ptsz = Classic<cuLaunchKernel_ptsz_params>();
  ptsz.hStream = nullptr;
  EXPECT_EQ(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &ptsz).stream,
            CU_STREAM_PER_THREAD);
  auto coop = Classic<cuLaunchCooperativeKernel_ptsz_params>();
  coop.hStream = nullptr;
  EXPECT_EQ(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, &coop).stream,
            CU_STREAM_PER_THREAD);
  CUlaunchConfig config{};
  cuLaunchKernelEx_ptsz_params ex{};
  ex.config = &config;
  EXPECT_EQ(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &ex).stream,
            CU_STREAM_PER_THREAD);
  // An explicit stream is kept as it is.
  ptsz.hStream = FakeStream(0x77);
  EXPECT_EQ(ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &ptsz).stream,
            FakeStream(0x77));
}

TEST(AchievedLaunch, ReadsLaunchKernelExConfig) {
  CUlaunchConfig config{};
  config.gridDimX = 132;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = 204800;
  config.hStream = FakeStream(0x55);
  cuLaunchKernelEx_params ex{};
  ex.config = &config;
  ex.f = FakeFunction(0x2000);
  LaunchArgs a = ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &ex);
  EXPECT_EQ(a.function, FakeFunction(0x2000));
  EXPECT_EQ(a.grid[0], 132u);
  EXPECT_EQ(a.block[0], 128u);
  EXPECT_EQ(a.dynamic_smem, 204800u);
  EXPECT_EQ(a.stream, FakeStream(0x55));

  cuLaunchKernelEx_ptsz_params ex_ptsz{};
  ex_ptsz.config = &config;
  ex_ptsz.f = FakeFunction(0x2001);
  a = ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, &ex_ptsz);
  EXPECT_EQ(a.function, FakeFunction(0x2001));
  EXPECT_EQ(a.grid[0], 132u);

  // A null config must not be dereferenced.
  ex.config = nullptr;
  a = ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &ex);
  EXPECT_EQ(a.function, FakeFunction(0x2000));
  EXPECT_EQ(a.grid[0], 1u);
}

TEST(AchievedLaunch, OtherCallbacksGiveDefaults) {
  cuGraphLaunch_params graph{};
  LaunchArgs a = ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &graph);
  EXPECT_EQ(a.function, nullptr);
  EXPECT_EQ(a.grid[0], 1u);
  EXPECT_EQ(a.dynamic_smem, 0u);
}

// Every "Launch" callback id of CUPTI's generated headers, read at test time (not from our
// own lists): each must be handled or excluded below for a stated reason, so a launch API
// that a new CUPTI adds fails here until someone decides what it is.
struct CbidEntry {
  std::string name;  // without the CUPTI_*_TRACE_CBID_ prefix
  CUpti_CallbackId id = 0;
};

std::vector<CbidEntry> ReadCbidHeader(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<CbidEntry> entries;
  const std::regex line_re("^\\s*" + prefix + "(\\w+)\\s*=\\s*(0x[0-9a-fA-F]+|[0-9]+)\\s*,?\\s*$");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, line_re)) {
      entries.push_back({m[1].str(), static_cast<CUpti_CallbackId>(std::stoul(m[2].str(), nullptr, 0))});
    }
  }
  return entries;
}

std::optional<CUpti_CallbackId> Find(const std::vector<CbidEntry>& entries, const std::string& name) {
  for (const CbidEntry& e : entries) {
    if (e.name == name) return e.id;
  }
  return std::nullopt;
}

// Launch APIs the achieved-occupancy code deliberately ignores. Their kernels are still traced
// (activity records); they only never get an OCC_ACHIEVED row.
const std::map<std::string, std::string> kExcludedDriverLaunches = {
    {"cuLaunch", "deprecated; block shape and shared memory come from earlier cuFuncSetBlockShape / "
                 "cuFuncSetSharedSize calls, not the callback parameters, so no launch signature"},
    {"cuLaunchGrid", "deprecated; block shape from cuFuncSetBlockShape (see cuLaunch)"},
    {"cuLaunchGridAsync", "deprecated; block shape from cuFuncSetBlockShape (see cuLaunch)"},
    {"cuLaunchCooperativeKernelMultiDevice",
     "deprecated; one call launches on several devices/contexts, the range profiler brackets one context"},
    {"cuLaunchHostFunc", "enqueues a host function, not a kernel"},
    {"cuLaunchHostFunc_ptsz", "enqueues a host function, not a kernel"},
};
const std::map<std::string, std::string> kExcludedRuntimeLaunches = {
    {"cudaLaunchCooperativeKernelMultiDevice_v9000",
     "removed from the CUDA 13 runtime API (generated_cudart_removed_meta.h): no program built "
     "against it can call it"},
    {"cudaLaunchHostFunc_v10000", "enqueues a host function, not a kernel"},
    {"cudaLaunchHostFunc_ptsz_v10000", "enqueues a host function, not a kernel"},
};

bool InDriverLaunchList(CUpti_CallbackId id) {
  for (CUpti_CallbackId listed : kDriverLaunchCbids) {
    if (listed == id) return true;
  }
  return false;
}

TEST(AchievedLaunch, EveryDriverLaunchCallbackOfCuptiIsHandledOrExcluded) {
  const std::vector<CbidEntry> driver =
      ReadCbidHeader(OCC_CUPTI_INCLUDE_DIR "/cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_");
  // The header read is the one compiled against.
  ASSERT_EQ(Find(driver, "SIZE"), std::optional<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_SIZE));
  ASSERT_EQ(Find(driver, "cuLaunchKernelEx"), std::optional<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
  int launches = 0;
  for (const CbidEntry& e : driver) {
    if (e.name.find("Launch") == std::string::npos) continue;
    ++launches;
    const bool kernel = IsKernelLaunchCbid(e.id);
    const bool graph = IsGraphLaunchCbid(e.id);
    const bool excluded = kExcludedDriverLaunches.count(e.name) != 0;
    EXPECT_NE(kernel || graph, excluded) << e.name << ": neither handled nor excluded (or both)";
    EXPECT_FALSE(kernel && graph) << e.name;
    // Handled ids must also have their callback enabled (EnableCallbacks walks this list).
    EXPECT_EQ(InDriverLaunchList(e.id), kernel || graph) << e.name;
    // A graph launch has no kernel configuration to bracket; every other handled one does.
    EXPECT_EQ(graph, e.name.find("GraphLaunch") != std::string::npos) << e.name;
  }
  EXPECT_GE(launches, 14) << "CUDA 13.0 has 14 driver launch callbacks";
  for (const auto& [name, reason] : kExcludedDriverLaunches) {
    EXPECT_TRUE(Find(driver, name).has_value()) << "stale exclusion " << name << " (" << reason << ")";
  }
  for (CUpti_CallbackId id : kDriverLaunchCbids) {
    bool named_launch = false;
    for (const CbidEntry& e : driver) named_launch |= e.id == id && e.name.find("Launch") != std::string::npos;
    EXPECT_TRUE(named_launch) << "handled driver cbid " << id << " is not a launch callback";
  }
  EXPECT_FALSE(IsKernelLaunchCbid(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2));
}

TEST(AchievedLaunch, EveryRuntimeLaunchCallbackOfCuptiIsHandledOrExcluded) {
  const std::vector<CbidEntry> runtime =
      ReadCbidHeader(OCC_CUPTI_INCLUDE_DIR "/cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_");
  ASSERT_EQ(Find(runtime, "SIZE"), std::optional<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_SIZE));
  ASSERT_EQ(Find(runtime, "__cudaLaunchKernel_v13000"),
            std::optional<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
  int launches = 0;
  for (const CbidEntry& e : runtime) {
    if (e.name.find("Launch") == std::string::npos) continue;
    ++launches;
    const bool excluded = kExcludedRuntimeLaunches.count(e.name) != 0;
    EXPECT_NE(IsRuntimeLaunchCbid(e.id), excluded) << e.name << ": neither handled nor excluded (or both)";
  }
  EXPECT_GE(launches, 15) << "CUDA 13.0 has 15 runtime launch callbacks";
  for (const auto& [name, reason] : kExcludedRuntimeLaunches) {
    EXPECT_TRUE(Find(runtime, name).has_value()) << "stale exclusion " << name << " (" << reason << ")";
  }
  for (CUpti_CallbackId id : kRuntimeLaunchCbids) {
    bool named_launch = false;
    for (const CbidEntry& e : runtime) named_launch |= e.id == id && e.name.find("Launch") != std::string::npos;
    EXPECT_TRUE(named_launch) << "handled runtime cbid " << id << " is not a launch callback";
  }
  EXPECT_FALSE(IsRuntimeLaunchCbid(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
}

TEST(AchievedLaunch, SignatureHasEveryConfigField) {
  auto k = Classic<cuLaunchKernel_params>();
  LaunchArgs a = ReadLaunchArgs(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &k);
  CUcontext ctx = reinterpret_cast<CUcontext>(uintptr_t{0x9});
  const LaunchSignature base = SignatureOf(ctx, a);
  EXPECT_EQ(base.context, 0x9u);
  EXPECT_EQ(base.function, 0x1000u);
  auto differs = [&](auto mutate) {
    LaunchArgs b = a;
    mutate(b);
    return !(SignatureOf(ctx, b) == base);
  };
  EXPECT_TRUE(differs([](LaunchArgs& b) { b.grid[1] = 4; }));
  EXPECT_TRUE(differs([](LaunchArgs& b) { b.grid[2] = 1; }));
  EXPECT_TRUE(differs([](LaunchArgs& b) { b.block[1] = 1; }));
  EXPECT_TRUE(differs([](LaunchArgs& b) { b.dynamic_smem = 0; }));
  EXPECT_TRUE(differs([](LaunchArgs& b) { b.function = FakeFunction(0x1001); }));
  // The stream is not part of the signature.
  EXPECT_FALSE(differs([](LaunchArgs& b) { b.stream = FakeStream(0x78); }));
  EXPECT_FALSE(SignatureOf(reinterpret_cast<CUcontext>(uintptr_t{0xA}), a) == base);
}

TEST(AchievedLaunch, OuterCorrelationId) {
  OuterCorrelation c;
  EXPECT_EQ(c.ForDriverLaunch(5), 5u);  // direct driver launch (cuBLAS, Triton)
  c.OnRuntimeLaunch(true, 7);           // cudaLaunchKernel ENTER
  EXPECT_EQ(c.ForDriverLaunch(8), 7u);  // its cuLaunchKernel
  c.OnRuntimeLaunch(true, 9);           // a nested runtime launch API
  EXPECT_EQ(c.ForDriverLaunch(10), 7u);
  c.OnRuntimeLaunch(false, 9);
  EXPECT_EQ(c.ForDriverLaunch(11), 7u);
  c.OnRuntimeLaunch(false, 7);
  EXPECT_EQ(c.ForDriverLaunch(12), 12u);
  c.OnRuntimeLaunch(false, 1);          // an unmatched EXIT does not underflow
  c.OnRuntimeLaunch(true, 13);
  EXPECT_EQ(c.ForDriverLaunch(14), 13u);
}

}  // namespace
}  // namespace occ::inj
