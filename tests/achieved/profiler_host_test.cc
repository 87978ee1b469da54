// ProfilerHost (injector/achieved/profiler_host.h) on CPU. CUPTI's host side knows each chip's
// metrics without a GPU (cuptiProfilerHostInitialize with a chip name and no counter-
// availability image, as for enumerating metrics), so CUPTI itself, not our code, checks the
// metric names both ways of measuring configure, and the error paths that need no device run
// for real. What needs a GPU (availability and config images, passes, device support) is left
// to the GPU tests.
#include "injector/achieved/profiler_host.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "injector/achieved/pm/pm_device.h"
#include "injector/achieved/replay/range_profiler.h"
#include "injector/common/errors.h"

namespace occ::inj {
namespace {

// A chip of CUDA 13.0's supported list (the H100's).
constexpr const char* kChip = "GH100";

std::unique_ptr<ProfilerHost> HostFor(CUpti_ProfilerType type, const std::string& chip, ProfilerError* error) {
  return ProfilerHost::Create(type, chip, /*counter_availability=*/{}, error);
}

// Whether CUPTI's tables for kChip accept `metrics` for `type`, in one configuration.
::testing::AssertionResult KnownToCupti(CUpti_ProfilerType type, std::vector<const char*> metrics) {
  ProfilerError error;
  std::unique_ptr<ProfilerHost> host = HostFor(type, kChip, &error);
  if (host == nullptr || !host->AddMetrics(std::move(metrics), &error)) {
    return ::testing::AssertionFailure() << error.Message();
  }
  return ::testing::AssertionSuccess();
}

TEST(ProfilerHostTest, PmSamplingMetricsAreKnownToCupti) {
  EXPECT_TRUE(KnownToCupti(CUPTI_PROFILER_TYPE_PM_SAMPLING,
                           {kPmCyclesActiveMetric, kPmWarpsActiveMetric, kPmDramMetric}));
}

TEST(ProfilerHostTest, RangeProfilerMetricsAreKnownToCupti) {
  EXPECT_TRUE(KnownToCupti(CUPTI_PROFILER_TYPE_RANGE_PROFILER,
                           {kOccupancyMetric, kWarpsPerCycleMetric, kCyclesActiveMetric, kGpuTimeMetric,
                            kDramThroughputMetric, kL2ThroughputMetric, kL1ThroughputMetric, kIssueSlotsMetric,
                            kTensorPipeMetric}));
}

// The failure PM sampling falls back on (a metric the chip lacks): AddMetrics names the call.
TEST(ProfilerHostTest, UnknownMetricNamesTheFailingCall) {
  ProfilerError error;
  std::unique_ptr<ProfilerHost> host = HostFor(CUPTI_PROFILER_TYPE_PM_SAMPLING, kChip, &error);
  ASSERT_NE(host, nullptr) << error.Message();
  EXPECT_FALSE(host->AddMetrics({kPmCyclesActiveMetric, "sm__no_such_counter.sum"}, &error));
  EXPECT_EQ(error.call, "cuptiProfilerHostConfigAddMetrics");
  EXPECT_NE(error.result, CUPTI_SUCCESS);
}

TEST(ProfilerHostTest, UnknownChipIsRefusedByHostInitialize) {
  ProfilerError error;
  EXPECT_EQ(HostFor(CUPTI_PROFILER_TYPE_RANGE_PROFILER, "GX999", &error), nullptr);
  EXPECT_EQ(error.call, "cuptiProfilerHostInitialize");
  EXPECT_EQ(error.result, CUPTI_ERROR_INVALID_CHIP_NAME);  // cupti_result.h
  EXPECT_EQ(error.Message(), "cuptiProfilerHostInitialize failed: CUPTI_ERROR_INVALID_CHIP_NAME");
}

// More metrics than values would have CUPTI write past the values: refused before the call.
TEST(ProfilerHostTest, EvaluateRefusesTooFewValues) {
  ProfilerError error;
  std::unique_ptr<ProfilerHost> host = HostFor(CUPTI_PROFILER_TYPE_PM_SAMPLING, kChip, &error);
  ASSERT_NE(host, nullptr) << error.Message();
  std::vector<const char*> metrics = {kPmCyclesActiveMetric, kPmWarpsActiveMetric};
  double values[1] = {-1};
  const std::vector<uint8_t> no_data;
  EXPECT_FALSE(host->Evaluate(no_data, 0, metrics, values, &error));
  EXPECT_EQ(error.Message(),
            "cuptiProfilerHostEvaluateToGpuValues failed: CUPTI_ERROR_INVALID_PARAMETER (2 metrics, values for 1)");
  EXPECT_EQ(values[0], -1);
}

TEST(ProfilerHostTest, DeviceSupportWithoutDriverNamesCuDeviceGet) {
  if (Driver().cuDeviceGet != nullptr) GTEST_SKIP() << "a CUDA driver is loaded in this process";
  ProfilerError error;
  EXPECT_FALSE(ProfilerHost::DeviceSupported(0, CUPTI_PROFILER_PM_SAMPLING, &error));
  EXPECT_EQ(error.call, "cuDeviceGet");
  EXPECT_EQ(error.result, CUPTI_ERROR_UNKNOWN);
}

TEST(ProfilerErrorTest, MessageNamesCallResultAndDetail) {
  ProfilerError error;
  EXPECT_EQ(error.Message(), "ok");
  EXPECT_TRUE(CheckCupti(CUPTI_SUCCESS, "cuptiPmSamplingEnable", &error));
  EXPECT_TRUE(error.ok());
  EXPECT_FALSE(CheckCupti(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiPmSamplingEnable", &error));
  EXPECT_TRUE(error.insufficient_privileges());
  error.detail = "device 0";
  EXPECT_EQ(error.Message(), "cuptiPmSamplingEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (device 0)");
}

}  // namespace
}  // namespace occ::inj
