// The launch hook's decisions (when CUPTI's launch callbacks watch it, when it rescans, when it
// gives up) and the switch by which it shares the callbacks with the achieved profiler. The
// pointer rewriting itself is tested on real shared objects in import_redirect_test.cc; the
// hook end to end on a GPU (tests/gpu/light_hook.sh: light_checks.py with OCCTRACE_LIGHT_DETACH=1).
#include "injector/tracer/launch_hook.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace occ::inj {
namespace {

constexpr int64_t kMs = 1'000'000;

HookWatchPolicy::Settings Settings() {
  HookWatchPolicy::Settings settings;
  settings.watch_ns = 2000 * kMs;
  settings.rescan_interval_ns = 1000 * kMs;
  settings.fruitless_rescans_to_fall_back = 3;
  settings.periodic_period_ns = 3'600'000 * kMs;  // out of the way except where tested
  return settings;
}

TEST(HookWatchPolicy, WatchesTheFirstSecondsThenLetsTheCallbacksGo) {
  HookWatchPolicy policy(Settings(), 0);
  EXPECT_TRUE(policy.Tick(250 * kMs, false, false, false, false).callbacks);
  EXPECT_TRUE(policy.Tick(1999 * kMs, false, false, false, false).callbacks);
  const HookWatchPolicy::Decision later = policy.Tick(2000 * kMs, false, false, false, false);
  EXPECT_FALSE(later.callbacks);
  EXPECT_FALSE(later.rescan);
}

TEST(HookWatchPolicy, TheCallbacksNeverChangeWhileKernelRecordsAreOn) {
  HookWatchPolicy policy(Settings(), 0);
  // The first watch ends inside a timing window: the callbacks stay on until it closes.
  EXPECT_TRUE(policy.Tick(2500 * kMs, false, false, false, /*records_on=*/true).callbacks);
  EXPECT_FALSE(policy.Tick(2700 * kMs, false, false, false, false).callbacks);
  // A module loaded inside a window: on only once the window has closed.
  EXPECT_FALSE(policy.Tick(5000 * kMs, false, /*modules_loaded=*/true, false, true).callbacks);
  EXPECT_TRUE(policy.Tick(5200 * kMs, false, false, false, false).callbacks);
}

TEST(HookWatchPolicy, WatchesBrieflyEveryPeriod) {
  HookWatchPolicy::Settings settings = Settings();
  settings.periodic_period_ns = 10'000 * kMs;
  settings.periodic_watch_ns = 500 * kMs;
  HookWatchPolicy policy(settings, 0);
  EXPECT_FALSE(policy.Tick(9'900 * kMs, false, false, false, false).callbacks);
  EXPECT_TRUE(policy.Tick(10'000 * kMs, false, false, false, false).callbacks);
  EXPECT_TRUE(policy.Tick(10'400 * kMs, false, false, false, false).callbacks);
  EXPECT_FALSE(policy.Tick(10'500 * kMs, false, false, false, false).callbacks);
  EXPECT_TRUE(policy.Tick(20'000 * kMs, false, false, false, false).callbacks);
}

TEST(HookWatchPolicy, LoadedLibrariesAreRescannedAndWatched) {
  HookWatchPolicy policy(Settings(), 0);
  const HookWatchPolicy::Decision loaded = policy.Tick(10'000 * kMs, /*objects_added=*/true, false, false, false);
  EXPECT_TRUE(loaded.rescan);
  EXPECT_TRUE(loaded.callbacks);
  policy.Rescanned(10'000 * kMs, 0);
  // Another library 250 ms later: rescanned once the interval has passed, watched meanwhile.
  const HookWatchPolicy::Decision soon = policy.Tick(10'250 * kMs, true, false, false, false);
  EXPECT_FALSE(soon.rescan);
  EXPECT_TRUE(soon.callbacks);
  EXPECT_TRUE(policy.Tick(11'000 * kMs, false, false, false, false).rescan) << "the pending rescan";
  policy.Rescanned(11'000 * kMs, 0);
  EXPECT_FALSE(policy.fell_back()) << "rescans for loaded libraries that find nothing are not misses";
  EXPECT_FALSE(policy.Tick(12'300 * kMs, false, false, false, false).callbacks);
}

TEST(HookWatchPolicy, ModuleLoadsAreWatchedWithoutRescan) {
  HookWatchPolicy policy(Settings(), 0);
  const HookWatchPolicy::Decision decision = policy.Tick(10'000 * kMs, false, /*modules_loaded=*/true, false, false);
  EXPECT_FALSE(decision.rescan);
  EXPECT_TRUE(decision.callbacks);
  EXPECT_TRUE(policy.Tick(11'900 * kMs, false, false, false, false).callbacks);
  EXPECT_FALSE(policy.Tick(12'000 * kMs, false, false, false, false).callbacks);
}

TEST(HookWatchPolicy, AMissThatARescanFixesDoesNotFallBack) {
  HookWatchPolicy policy(Settings(), 0);
  const HookWatchPolicy::Decision missed = policy.Tick(10'000 * kMs, false, false, /*misses=*/true, false);
  EXPECT_TRUE(missed.rescan);
  EXPECT_TRUE(missed.callbacks);
  policy.Rescanned(10'000 * kMs, /*rewritten=*/1);
  EXPECT_FALSE(policy.fell_back());
  EXPECT_FALSE(policy.Tick(12'000 * kMs, false, false, false, false).callbacks);
}

TEST(HookWatchPolicy, MissesThatRescansCannotFixKeepTheCallbacksOnForGood) {
  HookWatchPolicy policy(Settings(), 0);
  int64_t now = 10'000 * kMs;
  for (int i = 0; i < 3; ++i, now += 1000 * kMs) {
    const HookWatchPolicy::Decision decision = policy.Tick(now, false, false, true, false);
    ASSERT_TRUE(decision.rescan) << i;
    policy.Rescanned(now, 0);
  }
  EXPECT_TRUE(policy.fell_back());
  EXPECT_TRUE(policy.Tick(now + 3'600'000 * kMs, false, false, false, false).callbacks);
}

TEST(HookWatchPolicy, AFruitfulRescanResetsTheCount) {
  HookWatchPolicy policy(Settings(), 0);
  int64_t now = 10'000 * kMs;
  for (int rewritten : {0, 0, 2, 0, 0}) {
    ASSERT_TRUE(policy.Tick(now, false, false, true, false).rescan);
    policy.Rescanned(now, rewritten);
    now += 1000 * kMs;
  }
  EXPECT_FALSE(policy.fell_back());
}

}  // namespace
}  // namespace occ::inj
