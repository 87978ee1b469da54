#include "injector/achieved/achieved_policy.h"
#include "injector/common/env_settings.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace occ::inj {
namespace {

constexpr int64_t kMs = 1'000'000;

LaunchSignature Sig(uint64_t function, uint32_t grid = 66, uint32_t block = 256,
                    uint32_t smem = 0) {
  LaunchSignature s;
  s.context = 1;
  s.function = function;
  s.grid_x = grid;
  s.block_x = block;
  s.dynamic_smem = smem;
  return s;
}

// A clock the test moves by hand.
struct ManualClock {
  int64_t now = 0;
  NanoClock fn() {
    return [this] { return now; };
  }
};

TEST(AchievedConfig, BudgetAcceptsFractionsAndPercent) {
  EXPECT_DOUBLE_EQ(*ParseBudgetFraction("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseBudgetFraction("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseBudgetFraction(" 12.5 % "), 0.125);
  EXPECT_DOUBLE_EQ(*ParseBudgetFraction("1"), 1.0);
  EXPECT_DOUBLE_EQ(*ParseBudgetFraction("100%"), 1.0);
  EXPECT_FALSE(ParseBudgetFraction("0"));
  EXPECT_FALSE(ParseBudgetFraction("-0.1"));
  EXPECT_FALSE(ParseBudgetFraction("1.5"));
  EXPECT_FALSE(ParseBudgetFraction("150%"));
  EXPECT_FALSE(ParseBudgetFraction("five"));
  EXPECT_FALSE(ParseBudgetFraction("0.05x"));
  EXPECT_FALSE(ParseBudgetFraction(""));
  EXPECT_FALSE(ParseBudgetFraction("%"));
  EXPECT_FALSE(ParseBudgetFraction("nan"));
  EXPECT_FALSE(ParseBudgetFraction("inf"));
}

TEST(AchievedPolicy, FirstNPerSignature) {
  ManualClock clock;
  clock.now = 1000 * kMs;  // long after start: the budget is not the limit here
  AchievedPolicy policy({AchievedMode::kSample, 2, 0.05, 500 * kMs}, clock.fn(), 0);
  const LaunchSignature a = Sig(1), b = Sig(2), a_other_grid = Sig(1, 132);
  for (int i = 0; i < 2; ++i) {
    auto d = policy.Decide(a);
    ASSERT_TRUE(d.measure);
    EXPECT_EQ(d.sample_index, i);
    policy.Finish(a, 0, true);
  }
  EXPECT_FALSE(policy.Decide(a).measure);
  EXPECT_FALSE(policy.Decide(a).measure);
  // Grid, block and dynamic smem are part of the signature.
  EXPECT_TRUE(policy.Decide(a_other_grid).measure);
  policy.Finish(a_other_grid, 0, true);
  EXPECT_TRUE(policy.Decide(Sig(1, 66, 128)).measure);
  policy.Finish(Sig(1, 66, 128), 0, true);
  EXPECT_TRUE(policy.Decide(Sig(1, 66, 256, 1024)).measure);
  policy.Finish(Sig(1, 66, 256, 1024), 0, true);
  EXPECT_TRUE(policy.Decide(b).measure);
  policy.Finish(b, 0, true);
  EXPECT_EQ(policy.launches_measured(), 6);
  EXPECT_EQ(policy.signatures_measured(), 5);
  EXPECT_EQ(policy.signatures_seen(), 5);
}

TEST(AchievedPolicy, NoRangeUsesUpTheSampleButIsNotCounted) {
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedPolicy policy({AchievedMode::kSample, 1, 0.05, 500 * kMs}, clock.fn(), 0);
  ASSERT_TRUE(policy.Decide(Sig(7)).measure);
  policy.Finish(Sig(7), 3 * kMs, false);
  EXPECT_FALSE(policy.Decide(Sig(7)).measure);
  EXPECT_EQ(policy.launches_measured(), 0);
  EXPECT_EQ(policy.signatures_measured(), 0);
  EXPECT_EQ(policy.profiling_ns(), 3 * kMs);
}

TEST(AchievedPolicy, ReleasedSampleIsOfferedAgain) {
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedPolicy policy({AchievedMode::kSample, 1, 0.05, 500 * kMs}, clock.fn(), 0);
  ASSERT_TRUE(policy.Decide(Sig(3)).measure);
  policy.Release(Sig(3));  // stream was capturing
  auto d = policy.Decide(Sig(3));
  ASSERT_TRUE(d.measure);
  EXPECT_EQ(d.sample_index, 0);
}

// The rule both measurements share (time_budget.h), with figures worked by hand.
TEST(WallTimeBudget, FreeTimeThenTheShareThenWholeWindows) {
  // 10 % of wall time, 1 s free, restarts only when 200 ms more fit.
  WallTimeBudget budget(0.10, 200 * kMs, 1000 * kMs);
  EXPECT_TRUE(budget.Allows(1000 * kMs, 0));           // the free second, before any wall time
  EXPECT_TRUE(budget.Allows(1500 * kMs, 5000 * kMs));  // 1 s + 10 % of 5 s = 1.5 s: just fits
  EXPECT_FALSE(budget.Allows(1501 * kMs, 5000 * kMs));
  EXPECT_TRUE(budget.paused());
  EXPECT_EQ(budget.pauses(), 1);
  // Paused at 1.501 s spent: 1.701 s must fit, i.e. 10 % of 7.01 s.
  EXPECT_FALSE(budget.Allows(1501 * kMs, 7000 * kMs));
  EXPECT_EQ(budget.pauses(), 1);  // still the same pause
  EXPECT_TRUE(budget.Allows(1501 * kMs, 7010 * kMs));
  EXPECT_FALSE(budget.paused());
  EXPECT_FALSE(budget.Allows(1702 * kMs, 7010 * kMs));
  EXPECT_EQ(budget.pauses(), 2);
}

// When a paused budget will allow again (the PM decode thread sleeps until then), by hand.
TEST(WallTimeBudget, ResumesAtIsTheFirstElapsedTimeThatAllows) {
  WallTimeBudget budget(0.10, 200 * kMs, 1000 * kMs);
  EXPECT_EQ(budget.ResumesAtNs(1501 * kMs), 0) << "not paused";
  EXPECT_FALSE(budget.Allows(1501 * kMs, 5000 * kMs));
  // 1.501 s spent + 0.2 s to fit - 1 s free = 0.701 s, 10 % of 7.01 s.
  EXPECT_EQ(budget.ResumesAtNs(1501 * kMs), 7010 * kMs);
  EXPECT_FALSE(budget.Allows(1501 * kMs, 7010 * kMs - 1'000));
  EXPECT_TRUE(budget.Allows(1501 * kMs, 7010 * kMs));
  // The default mode's figures: 5 %, 0.5 s windows, 5 s free; paused at 5.5 s of sampling, it
  // samples again at 20 s (5 s + 5 % of 20 s = 6 s = 5.5 s + 0.5 s).
  WallTimeBudget pm(0.05, 500 * kMs, 5000 * kMs);
  EXPECT_FALSE(pm.Allows(5500 * kMs, 9000 * kMs));
  EXPECT_EQ(pm.ResumesAtNs(5500 * kMs), 20'000 * kMs);
  WallTimeBudget whole(1.0, 500 * kMs);
  EXPECT_EQ(whole.ResumesAtNs(10'000 * kMs), 0) << "a whole share never pauses";
}

TEST(WallTimeBudget, AWholeShareNeverPauses) {
  WallTimeBudget budget(1.0, 500 * kMs);
  EXPECT_TRUE(budget.Allows(10'000 * kMs, 1 * kMs));  // spent more than elapsed (several devices)
  EXPECT_EQ(budget.pauses(), 0);
}

TEST(AchievedPolicy, BudgetPausesAndResumes) {
  ManualClock clock;
  // Budget 5 %: after 100 ms of wall time, 5 ms of profiling are allowed. No burst reserve.
  AchievedConfig config{AchievedMode::kSample, 1, 0.05, 500 * kMs};
  config.burst_ns = 0;
  AchievedPolicy policy(config, clock.fn(), 0);
  clock.now = 100 * kMs;
  ASSERT_TRUE(policy.Decide(Sig(1)).measure);
  policy.Finish(Sig(1), 4 * kMs, true);   // 4 <= 5: still allowed
  ASSERT_TRUE(policy.Decide(Sig(2)).measure);
  policy.Finish(Sig(2), 3 * kMs, true);   // 7 > 5: spent
  EXPECT_FALSE(policy.Decide(Sig(3)).measure);
  EXPECT_FALSE(policy.Decide(Sig(4)).measure);
  EXPECT_EQ(policy.budget_pauses(), 1);
  EXPECT_EQ(policy.skipped_for_budget(), 2);
  // Skipped launches did not use up their signature's sample.
  clock.now = 139 * kMs;  // 5 % of 139 ms = 6.95 ms < 7 ms: still paused
  EXPECT_FALSE(policy.Decide(Sig(3)).measure);
  clock.now = 140 * kMs;  // 7 ms allowed: resumes
  auto d = policy.Decide(Sig(3));
  ASSERT_TRUE(d.measure);
  EXPECT_EQ(d.sample_index, 0);
  policy.Finish(Sig(3), 3 * kMs, true);
  EXPECT_FALSE(policy.Decide(Sig(4)).measure);  // 10 ms > 7 ms: paused again
  EXPECT_EQ(policy.budget_pauses(), 2);
  EXPECT_EQ(policy.profiling_ns(), 10 * kMs);
  EXPECT_EQ(policy.launches_measured(), 3);
}

TEST(AchievedPolicy, WallTimeCountsFromStart) {
  ManualClock clock;
  // Started at t = 50 ms: at t = 150 ms, 100 ms have elapsed and 10 % allows 10 ms.
  AchievedPolicy policy({AchievedMode::kSample, 1, 0.10, 500 * kMs}, clock.fn(), 50 * kMs);
  clock.now = 150 * kMs;
  ASSERT_TRUE(policy.Decide(Sig(1)).measure);
  policy.Finish(Sig(1), 10 * kMs, true);
  EXPECT_TRUE(policy.Decide(Sig(2)).measure);
  policy.Finish(Sig(2), 1, true);
  EXPECT_FALSE(policy.Decide(Sig(3)).measure);
}

TEST(AchievedPolicy, AllModeMeasuresEveryLaunchRegardlessOfBudget) {
  ManualClock clock;
  clock.now = 1 * kMs;
  AchievedPolicy policy({AchievedMode::kAll, 1, 0.01, 500 * kMs}, clock.fn(), 0);
  for (int i = 0; i < 5; ++i) {
    auto d = policy.Decide(Sig(9));
    ASSERT_TRUE(d.measure);
    EXPECT_EQ(d.sample_index, i);
    policy.Finish(Sig(9), 3 * kMs, true);
  }
  EXPECT_EQ(policy.launches_measured(), 5);
  EXPECT_EQ(policy.signatures_measured(), 1);
  EXPECT_EQ(policy.budget_pauses(), 0);
}

TEST(AchievedPolicy, OffModeMeasuresNothing) {
  ManualClock clock;
  AchievedPolicy policy({AchievedMode::kOff, 1, 0.05, 500 * kMs}, clock.fn(), 0);
  EXPECT_FALSE(policy.Decide(Sig(1)).measure);
}

TEST(AchievedPolicy, AfterAPauseSamplingResumesOnlyForAWholeBurst) {
  ManualClock clock;
  // Budget 10 %, bursts of 20 ms: once spent, sampling waits until 20 ms of budget are free,
  // so the profiler is re-enabled for several measurements rather than one at a time.
  AchievedConfig config{AchievedMode::kSample, 1, 0.10, 500 * kMs};
  config.burst_ns = 20 * kMs;
  AchievedPolicy policy(config, clock.fn(), 0);
  clock.now = 100 * kMs;                  // 10 ms allowed
  ASSERT_TRUE(policy.Decide(Sig(1)).measure);
  policy.Finish(Sig(1), 11 * kMs, true);  // spent
  EXPECT_FALSE(policy.Decide(Sig(2)).measure);
  EXPECT_TRUE(policy.BudgetPaused());
  clock.now = 200 * kMs;                  // 20 ms allowed, 11 used: 9 free < 20
  EXPECT_FALSE(policy.Decide(Sig(2)).measure);
  EXPECT_TRUE(policy.BudgetPaused());
  clock.now = 310 * kMs;                  // 31 allowed, 11 used: 20 free = a burst
  EXPECT_TRUE(policy.Decide(Sig(2)).measure);
  EXPECT_FALSE(policy.BudgetPaused());
  policy.Finish(Sig(2), 5 * kMs, true);
  EXPECT_TRUE(policy.Decide(Sig(3)).measure) << "within the burst: no reserve while running";
  EXPECT_EQ(policy.budget_pauses(), 1);
}

TEST(AchievedPolicy, IdleCountsFromTheLastSampleNotFromBudgetSkips) {
  ManualClock clock;
  AchievedPolicy policy({AchievedMode::kSample, 1, 0.05, 500 * kMs}, clock.fn(), 0);
  clock.now = 1000 * kMs;
  ASSERT_TRUE(policy.Decide(Sig(1)).measure);
  clock.now = 1010 * kMs;  // the measurement (with a re-enable) took 10 ms
  policy.Finish(Sig(1), 10 * kMs, true);
  clock.now = 1300 * kMs;
  EXPECT_FALSE(policy.Decide(Sig(1)).measure);
  EXPECT_EQ(policy.IdleNs(), 290 * kMs);
  // Budget: 5 % of 1300 ms = 65 ms; spend it so the next new signature is skipped.
  ASSERT_TRUE(policy.Decide(Sig(2)).measure);
  policy.Finish(Sig(2), 100 * kMs, true);
  clock.now = 1400 * kMs;
  EXPECT_FALSE(policy.Decide(Sig(3)).measure);  // skipped for budget: the profiler should park
  EXPECT_TRUE(policy.BudgetPaused());
  clock.now = 1450 * kMs;
  EXPECT_FALSE(policy.Decide(Sig(1)).measure);
  EXPECT_EQ(policy.IdleNs(), 150 * kMs) << "budget skips are not activity";
}

TEST(AchievedPolicy, ThreadCacheAnswersExhaustedSignaturesWithTheSameDecisions) {
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedPolicy policy({AchievedMode::kSample, 2, 1.0, 500 * kMs}, clock.fn(), 0);
  AchievedPolicy::ThreadCache thread_a, thread_b;
  // Two samples, one from each "thread"; both finished.
  ASSERT_TRUE(policy.Decide(Sig(1), &thread_a).measure);
  ASSERT_TRUE(policy.Decide(Sig(1), &thread_b).measure);
  policy.Finish(Sig(1), kMs, true);
  policy.Finish(Sig(1), kMs, false);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(policy.Decide(Sig(1), &thread_a).measure);
    EXPECT_FALSE(policy.Decide(Sig(1), &thread_b).measure);
  }
  // Answers from the caches changed no count.
  EXPECT_EQ(policy.launches_measured(), 1);
  EXPECT_EQ(policy.signatures_seen(), 1);
  EXPECT_EQ(policy.skipped_for_budget(), 0);
  // Other signatures are unaffected by what the caches hold.
  EXPECT_TRUE(policy.Decide(Sig(1, 132), &thread_a).measure);
}

TEST(AchievedPolicy, ThreadCacheNeverHoldsASampleStillInFlight) {
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedPolicy policy({AchievedMode::kSample, 1, 1.0, 500 * kMs}, clock.fn(), 0);
  AchievedPolicy::ThreadCache thread_a, thread_b;
  ASSERT_TRUE(policy.Decide(Sig(5), &thread_a).measure);
  // Reserved by thread a, not finished: thread b is told no, but must ask again later...
  EXPECT_FALSE(policy.Decide(Sig(5), &thread_b).measure);
  // ...because thread a's stream was capturing and it gives the sample back.
  policy.Release(Sig(5));
  const AchievedPolicy::Decision retry = policy.Decide(Sig(5), &thread_b);
  ASSERT_TRUE(retry.measure);
  EXPECT_EQ(retry.sample_index, 0);
  policy.Finish(Sig(5), kMs, true);
  EXPECT_FALSE(policy.Decide(Sig(5), &thread_a).measure);
  EXPECT_EQ(policy.launches_measured(), 1);
}

TEST(AchievedPolicy, ThreadCacheBelongsToOnePolicy) {
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedPolicy::ThreadCache thread;
  {
    AchievedPolicy first({AchievedMode::kSample, 1, 1.0, 500 * kMs}, clock.fn(), 0);
    ASSERT_TRUE(first.Decide(Sig(9), &thread).measure);
    first.Finish(Sig(9), kMs, true);
    EXPECT_FALSE(first.Decide(Sig(9), &thread).measure);  // now cached as exhausted
  }
  // A new policy (possibly at the same address) has measured nothing yet.
  AchievedPolicy second({AchievedMode::kSample, 1, 1.0, 500 * kMs}, clock.fn(), 0);
  EXPECT_TRUE(second.Decide(Sig(9), &thread).measure);
}

TEST(AchievedPolicy, ThreadCacheOverflowStaysCorrect) {
  // Far more exhausted signatures than the cache holds: evicted ones are answered by the
  // locked path, with the same answer.
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedPolicy policy({AchievedMode::kSample, 1, 1.0, 500 * kMs}, clock.fn(), 0);
  AchievedPolicy::ThreadCache thread;
  constexpr uint32_t kSignatures = 10000;
  for (uint32_t g = 1; g <= kSignatures; ++g) {
    ASSERT_TRUE(policy.Decide(Sig(1, g), &thread).measure);
    policy.Finish(Sig(1, g), 0, true);
  }
  for (int round = 0; round < 3; ++round) {
    for (uint32_t g = 1; g <= kSignatures; ++g) {
      ASSERT_FALSE(policy.Decide(Sig(1, g), &thread).measure) << g;
    }
  }
  EXPECT_EQ(policy.launches_measured(), kSignatures);
}

TEST(AchievedPolicy, AllModeIgnoresTheThreadCache) {
  ManualClock clock;
  AchievedPolicy policy({AchievedMode::kAll, 1, 0.01, 500 * kMs}, clock.fn(), 0);
  AchievedPolicy::ThreadCache thread;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(policy.Decide(Sig(4), &thread).measure);
    policy.Finish(Sig(4), kMs, true);
  }
}

TEST(AchievedPolicy, SignatureTableIsCapped) {
  ManualClock clock;
  clock.now = 1000 * kMs;
  AchievedConfig config{AchievedMode::kSample, 2, 1.0, 500 * kMs};
  config.max_signatures = 3;
  AchievedPolicy policy(config, clock.fn(), 0);
  AchievedPolicy::ThreadCache thread;
  for (uint64_t f = 1; f <= 3; ++f) {
    ASSERT_TRUE(policy.Decide(Sig(f), &thread).measure);
    policy.Finish(Sig(f), kMs, true);
  }
  // Full: new signatures are neither remembered nor measured, and are counted per launch.
  for (uint64_t f = 4; f <= 8; ++f) EXPECT_FALSE(policy.Decide(Sig(f), &thread).measure);
  EXPECT_FALSE(policy.Decide(Sig(4), &thread).measure);
  EXPECT_EQ(policy.signatures_seen(), 3);
  EXPECT_EQ(policy.launches_over_signature_cap(), 6);
  // Signatures already in the table still get their remaining samples.
  const AchievedPolicy::Decision second = policy.Decide(Sig(2), &thread);
  ASSERT_TRUE(second.measure);
  EXPECT_EQ(second.sample_index, 1);
  policy.Finish(Sig(2), kMs, true);
  EXPECT_EQ(policy.launches_measured(), 4);
  EXPECT_EQ(policy.launches_over_signature_cap(), 6);
}

TEST(AchievedPolicy, DefaultSignatureCap) {
  EXPECT_EQ(AchievedConfig{}.max_signatures, 1 << 20);
}

TEST(AchievedPolicy, ModeNames) {
  EXPECT_EQ(AchievedModeName(AchievedMode::kOff), "off");
  EXPECT_EQ(AchievedModeName(AchievedMode::kSample), "sample");
  EXPECT_EQ(AchievedModeName(AchievedMode::kAll), "all");
}

}  // namespace
}  // namespace occ::inj
