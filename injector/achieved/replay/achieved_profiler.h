// The range-profiler implementation of AchievedProfiler (achieved.h): the CUPTI range profiler
// around chosen kernel launches, with its GPU side and its clock passed in.
// CreateAchievedProfiler() builds it with the CUPTI device, the CLOCK_BOOTTIME clock and the
// process start; CPU tests (tests/achieved/achieved_profiler_test.cc) and the launch-path
// benchmark (bench/injector/achieved_launch_bench.cc) pass a device that needs no GPU
// (tests/achieved/fake_device.h) and drive the real callback code with synthetic
// CUpti_CallbackData.
//
// The profiler is one object built in layers, each a base class of the next, so that each
// reaches the state of those below directly (no pointer between parts on the launch path):
//   AchievedContexts    achieved_contexts.h     each context's profiler: created, set up (on a
//                                               setup thread, warmed up), destroyed; holds the
//                                               device, clock, policy and AchievedStatus
//   AchievedParking     achieved_parking.h      parking contexts when idle or out of budget;
//                                               switching the launch callbacks off and on
//   AchievedLaunchPath  achieved_launch_path.h  the callbacks: decide, ENTER/EXIT, collect
//   RangeAchievedProfiler  achieved_profiler.cc the interface's glue, OCC_META rows
// The sampling policy (achieved_policy.h) and the reading of launch callbacks
// (achieved_launch.h) are their own classes, used by the layers.
//
// Lock order: the context table's mutex (map only; never held while waiting for a context's
// mutex) before ContextState::mutex, before the profiler-session mutex, the policy's mutex, the
// setup-thread mutex and AchievedStatus's (leaves). The callback-switching mutex of
// AchievedParking is taken with no other lock held. The sink is called with a context's mutex
// held (it only queues). Waits for a context's mutex are bounded (AchievedConfig::
// context_wait_ns, AchievedContexts::LockContext).
#pragma once

#include <cstdint>
#include <memory>

#include "injector/achieved/achieved.h"
#include "injector/achieved/achieved_policy.h"
#include "injector/achieved/replay/range_profiler.h"

namespace occ::inj {

// `clock` gives monotonic ns (budget, idle time, profiling time); wall time for the budget
// counts from `start_ns`.
std::unique_ptr<AchievedProfiler> CreateRangeAchievedProfiler(
    AchievedSink sink, AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
    NanoClock clock, int64_t start_ns);

}  // namespace occ::inj
