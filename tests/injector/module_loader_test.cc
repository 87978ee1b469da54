#include "injector/writer/module_loader.h"

#include <gtest/gtest.h>

#include <string>

extern "C" int occ_standin_user_launch(int (*callback)(void*), void* arg);

namespace occ::inj {
namespace {

int Capture(void* arg) {
  CaptureLoaderFrames(static_cast<LoaderFrames*>(arg));
  return 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(ModuleLoaderTest, CudaCallPathObjectsByFileName) {
  EXPECT_TRUE(IsCudaCallPath("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  EXPECT_TRUE(IsCudaCallPath("/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"));
  EXPECT_TRUE(IsCudaCallPath("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_TRUE(IsCudaCallPath("/opt/occtrace/lib/libocctrace.so"));
  EXPECT_TRUE(IsCudaCallPath("/usr/lib/x86_64-linux-gnu/libffi.so.8"));
  EXPECT_FALSE(IsCudaCallPath("/site-packages/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9"));
  EXPECT_FALSE(IsCudaCallPath("/site-packages/nvidia/cublas/lib/libcublasLt.so.12"));
  EXPECT_FALSE(IsCudaCallPath("/site-packages/torch/lib/libtorch_cuda.so"));
  EXPECT_FALSE(IsCudaCallPath("/home/u/libcudaext.so")) << "only libcuda.so itself is the driver";
}

// The stack of a "launch" from the test through a user library into a stand-in libcudart: the
// loader is the user library, not the runtime, and not the object holding ResolveLoader.
TEST(ModuleLoaderTest, LoaderIsTheFirstObjectOutsideTheCudaCallPath) {
  LoaderFrames frames;
  ASSERT_EQ(occ_standin_user_launch(Capture, &frames), 2);
  ASSERT_GT(frames.count, 3);
  EXPECT_GE(frames.capture_ns, 0);
  const std::string loader = ResolveLoader(frames);
  EXPECT_TRUE(EndsWith(loader, "/libocc_test_loader_user.so")) << loader;
}

TEST(ModuleLoaderTest, NoFramesNoLoader) {
  LoaderFrames frames;
  EXPECT_EQ(ResolveLoader(frames), "");
  frames.count = 1;
  frames.pcs[0] = 1;  // no object maps address 0
  EXPECT_EQ(ResolveLoader(frames), "");
}

// What a capture costs the loading thread: once per module (docs/performance.md).
TEST(ModuleLoaderTest, CaptureCostIsSmall) {
  WarmUpLoaderCapture();
  int64_t best = INT64_MAX;
  for (int i = 0; i < 20; ++i) {
    LoaderFrames frames;
    occ_standin_user_launch(Capture, &frames);
    best = std::min(best, frames.capture_ns);
  }
  std::printf("loader capture: %lld ns (best of 20, %s)\n", static_cast<long long>(best), "this machine");
  EXPECT_LT(best, 1'000'000) << "a stack capture should cost microseconds, not milliseconds";
}

}  // namespace
}  // namespace occ::inj
