// PmSamplingPolicy (injector/achieved/pm_sampling_policy.h) against a stand-in clock: what each
// set-up device should do given new code, the writer's reports and the sampling time spent.
// The runs below are simulated step by step: sampling time grows only while a device samples,
// GPU-busy time only while the simulated GPU works, exactly as the collector and the writer
// would count them.
#include "injector/achieved/pm_sampling_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace occ::inj {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

PmWorkReport Report(uint32_t wanting, int64_t busy_ns, uint32_t device = 0) {
  PmWorkReport report;
  PmWorkReport::Device row;
  row.device_id = device;
  row.wanting = wanting;
  row.busy_ns = busy_ns;
  report.devices.push_back(row);
  return report;
}

PmTarget DecideOne(PmSamplingPolicy* policy, int64_t now, int64_t sampled) {
  std::map<uint32_t, PmTarget> targets{{0, PmTarget::kArmed}};
  policy->Decide(now, sampled, &targets);
  return targets.at(0);
}

// A run: `compile_ns` with the GPU idle (no module loaded, no kernel), then kernels all the
// time, of configurations that keep wanting samples. Returns the sampling time spent when the
// budget first paused sampling, and checks nothing was sampled during the compile.
int64_t SampledBeforeFirstPause(const PmPolicySettings& settings, int64_t compile_ns) {
  PmSamplingPolicy policy(settings);
  const int64_t step = 10 * kMs;
  int64_t sampled = 0, busy = 0;
  for (int64_t now = 0; now < compile_ns; now += step) {
    EXPECT_EQ(DecideOne(&policy, now, sampled), PmTarget::kArmed) << "sampled during the compile, at " << now;
  }
  policy.NoteNewCode(compile_ns);  // the first kernel's module loads
  for (int64_t now = compile_ns; now < compile_ns + 600 * kS; now += step) {
    const PmTarget target = DecideOne(&policy, now, sampled);
    if (target == PmTarget::kPaused) return sampled;
    EXPECT_EQ(target, PmTarget::kSampling);
    sampled += step;
    busy += step;  // the GPU works all the time
    policy.NoteWork(Report(/*wanting=*/3, busy));
  }
  ADD_FAILURE() << "never paused";
  return sampled;
}

// A compile-heavy start (60 s of model building and compiling, GPU idle) samples nothing and
// spends nothing: once kernels run, the whole allowance is there, free 5 s plus 5 % of GPU-busy
// time (s = 5 + 0.05 s  =>  s = 5.26 s), as for a run without the compile.
TEST(PmSamplingPolicyTest, ACompileHeavyStartSpendsNoBudget) {
  const PmPolicySettings settings;  // 5 s free, 5 %
  const int64_t without_compile = SampledBeforeFirstPause(settings, 0);
  const int64_t after_compile = SampledBeforeFirstPause(settings, 60 * kS);
  EXPECT_NEAR(static_cast<double>(after_compile) / kS, 5.0 / 0.95, 0.02);
  EXPECT_EQ(after_compile, without_compile);
}

// The allowance grows with GPU-busy time, not wall time: paused, a long idle stretch (wall time
// passing, busy time not) does not resume sampling; GPU work does, once a window fits.
TEST(PmSamplingPolicyTest, TheBudgetGrowsWithGpuBusyTimeNotWallTime) {
  PmPolicySettings settings;
  settings.free_ns = 0;
  settings.budget_fraction = 0.1;
  settings.window_ns = 500 * kMs;
  PmSamplingPolicy policy(settings);
  policy.NoteWork(Report(1, 10 * kS));  // allowance 1 s
  EXPECT_EQ(DecideOne(&policy, 0, 900 * kMs), PmTarget::kSampling);
  EXPECT_EQ(DecideOne(&policy, 0, 1100 * kMs), PmTarget::kPaused);
  EXPECT_EQ(policy.budget_pauses(), 1);
  EXPECT_EQ(DecideOne(&policy, 3600 * kS, 1100 * kMs), PmTarget::kPaused) << "an idle hour earned nothing";
  policy.NoteWork(Report(1, 15 * kS));  // allowance 1.5 s: 1.1 + a 0.5 s window does not fit yet
  EXPECT_EQ(DecideOne(&policy, 3600 * kS, 1100 * kMs), PmTarget::kPaused);
  policy.NoteWork(Report(1, 17 * kS));  // 1.7 s: it does
  EXPECT_EQ(DecideOne(&policy, 3600 * kS, 1100 * kMs), PmTarget::kSampling);
}

// Every configuration covered stops sampling (armed, not paused: no budget pause is counted),
// and a new configuration that wants samples starts it again.
TEST(PmSamplingPolicyTest, CoveredStopsItAndANewConfigurationStartsItAgain) {
  PmSamplingPolicy policy(PmPolicySettings{});
  policy.NoteWork(Report(2, 100 * kMs));
  EXPECT_EQ(DecideOne(&policy, 0, 0), PmTarget::kSampling);
  policy.NoteWork(Report(0, 200 * kMs));
  EXPECT_EQ(DecideOne(&policy, 1 * kS, 100 * kMs), PmTarget::kArmed);
  policy.NoteWork(Report(1, 300 * kMs));  // a new configuration
  EXPECT_EQ(DecideOne(&policy, 2 * kS, 100 * kMs), PmTarget::kSampling);
  EXPECT_EQ(policy.budget_pauses(), 0);
}

// New code wants samples for new_code_ns, long enough for its records to reach the writer;
// then only the writer's report counts.
TEST(PmSamplingPolicyTest, NewCodeWantsSamplesUntilItsRecordsCanHaveCome) {
  PmPolicySettings settings;
  settings.new_code_ns = 1 * kS;
  PmSamplingPolicy policy(settings);
  EXPECT_EQ(DecideOne(&policy, 5 * kS, 0), PmTarget::kArmed);
  policy.NoteNewCode(5 * kS);
  EXPECT_EQ(DecideOne(&policy, 5 * kS, 0), PmTarget::kSampling);
  EXPECT_EQ(DecideOne(&policy, 6 * kS - 1, 0), PmTarget::kSampling);
  EXPECT_EQ(DecideOne(&policy, 6 * kS, 0), PmTarget::kArmed);
}

// Wanting configurations are per device: only their device samples.
TEST(PmSamplingPolicyTest, OnlyTheDeviceWithWantingConfigurationsSamples) {
  PmSamplingPolicy policy(PmPolicySettings{});
  PmWorkReport report = Report(0, kS, 0);
  report.devices.push_back(Report(4, kS, 1).devices[0]);
  policy.NoteWork(report);
  std::map<uint32_t, PmTarget> targets{{0, PmTarget::kArmed}, {1, PmTarget::kArmed}, {2, PmTarget::kArmed}};
  policy.Decide(0, 0, &targets);
  EXPECT_EQ(targets[0], PmTarget::kArmed);
  EXPECT_EQ(targets[1], PmTarget::kSampling);
  EXPECT_EQ(targets[2], PmTarget::kArmed) << "a device the writer has not seen";
  EXPECT_EQ(policy.busy_ns(), 2 * kS) << "GPU-busy time of all devices";
}

// Spot checks every 5 ms (a decode pass of 5 ms of samples) from `from` to `to` (exclusive),
// while the device samples, all finding `active`; returns the targets decided after each.
std::vector<PmTarget> CheckEvery5Ms(PmSamplingPolicy* policy, int64_t from, int64_t to, bool active,
                                    int64_t* sampled) {
  std::vector<PmTarget> out;
  PmTarget target = DecideOne(policy, from, *sampled);
  for (int64_t now = from; now < to; now += 5 * kMs) {
    if (target == PmTarget::kSampling) {
      *sampled += 5 * kMs;
      policy->NoteSpotCheck(0, now + 5 * kMs, 5 * kMs, active);
    }
    target = DecideOne(policy, now + 5 * kMs, *sampled);
    out.push_back(target);
  }
  return out;
}

long Count(const std::vector<PmTarget>& targets, PmTarget which) {
  return std::count(targets.begin(), targets.end(), which);
}

// Sampling of an idle GPU goes to its own allowance (1 s free here, nothing from busy time):
// the CPU bound's stays whole. Once it is spent, a device found idle stops (armed, not paused),
// is looked at every probe period while the signals want it, and samples on once a look finds
// work.
TEST(PmSamplingPolicyTest, SamplingAnIdleGpuHasItsOwnAllowanceThenStopsAndLooksAgain) {
  PmPolicySettings settings;
  settings.new_code_ns = 100 * kS;  // wanted throughout
  settings.free_ns = 0;             // the CPU bound allows nothing: only idle sampling can run
  settings.idle_free_ns = 1 * kS;
  settings.probe_period_ns = 250 * kMs;
  PmSamplingPolicy policy(settings);
  policy.NoteNewCode(0);
  int64_t sampled = 0;
  const std::vector<PmTarget> idle = CheckEvery5Ms(&policy, 0, 1 * kS, false, &sampled);
  EXPECT_EQ(Count(idle, PmTarget::kSampling), 200) << "1 s of idle sampling on its allowance";
  EXPECT_EQ(policy.idle_sampled_ns(), 1 * kS);
  EXPECT_EQ(policy.budget_pauses(), 0) << "the CPU bound was charged nothing";
  policy.NoteSpotCheck(0, 1005 * kMs, 5 * kMs, false);  // one more: the allowance is spent
  EXPECT_EQ(DecideOne(&policy, 1005 * kMs, sampled), PmTarget::kArmed);
  EXPECT_TRUE(policy.StoppedForIdleness(0, 1005 * kMs));
  EXPECT_TRUE(policy.ProbePending(1100 * kMs));
  EXPECT_EQ(DecideOne(&policy, 1254 * kMs, sampled), PmTarget::kArmed);
  EXPECT_EQ(DecideOne(&policy, 1255 * kMs, sampled), PmTarget::kSampling) << "a look";
  policy.NoteSpotCheck(0, 1260 * kMs, 5 * kMs, false);
  EXPECT_EQ(DecideOne(&policy, 1260 * kMs, sampled), PmTarget::kArmed) << "still idle";
  EXPECT_EQ(DecideOne(&policy, 1510 * kMs, sampled), PmTarget::kSampling) << "the next look";
  policy.NoteSpotCheck(0, 1515 * kMs, 5 * kMs, true);
  EXPECT_EQ(DecideOne(&policy, 1515 * kMs, sampled), PmTarget::kSampling) << "work: it samples on";
  EXPECT_FALSE(policy.ProbePending(1515 * kMs));
}

// New code ends an idle stop at once: a module loads at its kernel's first launch.
TEST(PmSamplingPolicyTest, NewCodeIsLookedAtAtOnce) {
  PmPolicySettings settings;
  settings.idle_free_ns = 0;
  PmSamplingPolicy policy(settings);
  policy.NoteWork(Report(/*wanting=*/1, kMs));
  policy.NoteSpotCheck(0, 10 * kMs, 5 * kMs, false);
  ASSERT_EQ(DecideOne(&policy, 10 * kMs, 5 * kMs), PmTarget::kArmed);
  policy.NoteNewCode(20 * kMs);
  EXPECT_EQ(DecideOne(&policy, 20 * kMs, 5 * kMs), PmTarget::kSampling);
}

// A training loop's gaps: the GPU busy 5 ms in every 25 for 10 s. While the idle allowance
// lasts (here it is large), the idle passes between its steps stop nothing and cost the CPU
// bound nothing.
TEST(PmSamplingPolicyTest, ATrainingLoopsGapsNeverStopItWhileTheIdleAllowanceLasts) {
  PmPolicySettings settings;
  settings.idle_free_ns = 100 * kS;  // not spent in this run
  PmSamplingPolicy policy(settings);
  policy.NoteWork(Report(/*wanting=*/5, 10 * kMs));
  int64_t sampled = 0;
  for (int64_t t = 0; t < 10 * kS; t += 25 * kMs) {
    for (const PmTarget target : CheckEvery5Ms(&policy, t, t + 20 * kMs, false, &sampled)) {
      ASSERT_EQ(target, PmTarget::kSampling);
    }
    for (const PmTarget target : CheckEvery5Ms(&policy, t + 20 * kMs, t + 25 * kMs, true, &sampled)) {
      ASSERT_EQ(target, PmTarget::kSampling);
    }
  }
  EXPECT_FALSE(policy.StoppedForIdleness(0, 10 * kS));
  EXPECT_EQ(policy.idle_sampled_ns(), 8 * kS);
  EXPECT_EQ(policy.budget_pauses(), 0) << "the idle time was not charged to the CPU bound";
}

// A compile (Inductor, XLA): 20 s with the GPU idle but for a module load every 400 ms (each
// with 10 ms of kernels), then 3 s of steady-state steps that keep the GPU busy and want samples.
// Without spot checks the loads kept it sampling all the compile long and spent the free 5 s
// before the steps (as the cold torch.compile and JAX runs did on the H200); with them the
// idle sampling goes to its own allowance, then stops, and the steps are sampled, unpaused.
TEST(PmSamplingPolicyTest, ACompilesModuleLoadsOnAnIdleGpuLeaveTheBudgetForTheSteps) {
  for (const bool spot_checks : {false, true}) {
    PmSamplingPolicy policy(PmPolicySettings{});  // 5 s free, 5 %, new code 1 s, idle 1 s
    int64_t sampled = 0, busy = 0, paused_in_steps = 0, sampled_in_steps = 0;
    for (int64_t now = 0; now < 23 * kS; now += 5 * kMs) {
      const bool compiling = now < 20 * kS;
      if (compiling && now % (400 * kMs) == 0) policy.NoteNewCode(now);
      const bool gpu_active = !compiling || now % (400 * kMs) < 10 * kMs;
      if (gpu_active) busy += 5 * kMs;
      const PmTarget target = DecideOne(&policy, now, sampled);
      if (target == PmTarget::kSampling) {
        sampled += 5 * kMs;
        sampled_in_steps += compiling ? 0 : 5 * kMs;
        if (spot_checks) policy.NoteSpotCheck(0, now + 5 * kMs, 5 * kMs, gpu_active);
      }
      paused_in_steps += !compiling && target == PmTarget::kPaused;
      policy.NoteWork(Report(compiling ? 0 : 10, busy));
    }
    if (spot_checks) {
      EXPECT_EQ(paused_in_steps, 0);
      // All but the steps before the first look: the compile's end left the device stopped.
      EXPECT_GE(sampled_in_steps, 3 * kS - PmPolicySettings{}.probe_period_ns);
      EXPECT_LT(sampled - sampled_in_steps, 4 * kS) << "the compile's sampling";
    } else {
      EXPECT_GT(paused_in_steps, 500) << "the compile spent the free allowance";
    }
  }
}

}  // namespace
}  // namespace occ::inj
