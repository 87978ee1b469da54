// PmSamplingPolicy (injector/achieved/pm_sampling_policy.h) against a stand-in clock: what each
// set-up device should do given new code, the writer's reports and the sampling time spent.
// The runs below are simulated step by step: sampling time grows only while a device samples,
// GPU-busy time only while the simulated GPU works, exactly as the collector and the writer
// would count them.
#include "injector/achieved/pm_sampling_policy.h"

#include <gtest/gtest.h>

#include <map>

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

}  // namespace
}  // namespace occ::inj
