// The range-profiler implementation of AchievedProfiler (achieved.h) with its GPU side and its
// clock passed in. CreateAchievedProfiler() builds it with the CUPTI device, the CLOCK_BOOTTIME
// clock and the process start; CPU tests (tests/achieved/achieved_profiler_test.cc) and the
// launch-path benchmark (bench/injector/achieved_launch_bench.cc) pass a device that needs no
// GPU (tests/achieved/fake_device.h) and drive the real callback code with synthetic
// CUpti_CallbackData.
#pragma once

#include <cstdint>
#include <memory>

#include "injector/achieved.h"
#include "injector/achieved_policy.h"
#include "injector/range_profiler.h"

namespace occ::inj {

// `clock` gives monotonic ns (budget, idle time, profiling time); wall time for the budget
// counts from `start_ns`.
std::unique_ptr<AchievedProfiler> CreateRangeAchievedProfiler(
    AchievedSink sink, AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
    NanoClock clock, int64_t start_ns);

}  // namespace occ::inj
