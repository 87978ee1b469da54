// Decoding of launch-callback parameters and outer correlation ids. The parameter structs are
// CUDA's own (generated_cuda_meta.h), filled by hand: no GPU needed.
#include "injector/achieved_launch.h"

#include <gtest/gtest.h>

#include <cstdint>

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

TEST(AchievedLaunch, ClassifiesCallbackIds) {
  for (CUpti_CallbackId cbid : kDriverLaunchCbids) {
    EXPECT_NE(IsKernelLaunchCbid(cbid), IsGraphLaunchCbid(cbid)) << cbid;
  }
  EXPECT_TRUE(IsKernelLaunchCbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz));
  EXPECT_TRUE(IsGraphLaunchCbid(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz));
  EXPECT_FALSE(IsKernelLaunchCbid(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2));
  EXPECT_FALSE(IsKernelLaunchCbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc));
  EXPECT_TRUE(IsRuntimeLaunchCbid(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
  EXPECT_TRUE(IsRuntimeLaunchCbid(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060));
  EXPECT_TRUE(IsRuntimeLaunchCbid(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
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
