// LaunchHook in a full trace's re-attach role while no re-attach can come (dormant,
// cupti_reattach.cc), against the stand-in driver (launch_hook_fake_driver.cc): CUPTI's launch
// callbacks go off at once and stay off through the periodic watch; a library loaded meanwhile
// is neither scanned nor watched until the hook wakes, and then it is -- before the re-attach
// could check the hook (ReadyToDetach). The hook installs once per process, hence this file.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "injector/launch_calls.h"
#include "injector/launch_hook.h"
#include "injector/light_tracer.h"
#include "tests/injector/launch_hook_fake_driver.h"
#include "tests/injector/launch_hook_test_support.h"

namespace occ::inj {
namespace {

using hook_testing::Fake;
using hook_testing::GapsOnlyOptions;
using hook_testing::MetaOf;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1000 * kMs;

TEST(LaunchHookDormant, NeitherWatchesNorRescansUntilItWakesThenCatchesUp) {
  ASSERT_EQ(client_init(), 0);
  LaunchCallStreams streams;
  LightTracer light(&streams, nullptr, GapsOnlyOptions());
  std::vector<bool> switched;
  LaunchCallbackSwitch callbacks([&](bool on, std::string*) { switched.push_back(on); return true; },
                                 /*initially_on=*/true);
  LaunchHook* hook = LaunchHook::Install(&light, &callbacks, 0, LaunchHook::Role::kFullGaps);
  ASSERT_NE(hook, nullptr);

  // The achieved profiler has parked quietly (achieved_parking.h): only the hook may want them.
  std::string error;
  ASSERT_TRUE(callbacks.Want(LaunchCallbackSwitch::Owner::kAchieved, false, &error));
  // Awake, the first seconds are watched (HookWatchPolicy::Settings::watch_ns, 2 s).
  hook->Tick(100 * kMs, /*records_on=*/false);
  EXPECT_TRUE(callbacks.on());
  EXPECT_TRUE(switched.empty());

  // Dormant: the callbacks go off at once, inside the watch, and stay off past the 30-s
  // periodic watch and a library load.
  hook->Tick(500 * kMs, false, /*dormant=*/true);
  EXPECT_EQ(switched, std::vector<bool>{false});
  const hook_testing::LateClient late = hook_testing::LoadLateClient(OCC_LATE_CLIENT_PATH);
  ASSERT_NE(late.init, nullptr) << dlerror();
  ASSERT_NE(late.launch, nullptr);
  ASSERT_EQ(late.init(), 0);
  for (int64_t at : {5 * kSecond, 31 * kSecond, 40 * kSecond}) hook->Tick(at, false, true);
  EXPECT_EQ(switched, std::vector<bool>{false});
  std::map<std::string, std::string> meta = MetaOf(*hook);
  EXPECT_EQ(meta["reattach_hook_rescans"], "1") << "only the scan at Install";
  EXPECT_EQ(meta["reattach_hook_rescans_at_s"], "none");
  EXPECT_EQ(meta["reattach_hook_objects"].find("occ_test_fake_cuda_late"), std::string::npos);
  EXPECT_EQ(meta["reattach_hook_dormant_ms"], "39500") << "dormant from 0.5 s, last tick at 40 s";
  // The late library's launch passes through the stand-in driver, unhooked.
  light.SetRecording(true);
  const int classic_before = fake_driver_calls.classic;
  EXPECT_EQ(late.launch(false, Fake(0xf7), 3, 64, 0, nullptr), 0);
  EXPECT_EQ(fake_driver_calls.classic, classic_before + 1);
  EXPECT_EQ(light.hooked_launches(), 0u) << "not hooked while dormant";

  // Awake again: the library loaded meanwhile is scanned on the first tick, a watch begins, and
  // the hook is not ready for a re-attach (new code just appeared).
  hook->Tick(41 * kSecond, false);
  meta = MetaOf(*hook);
  EXPECT_EQ(meta["reattach_hook_rescans_at_s"], "41.0");
  EXPECT_NE(meta["reattach_hook_objects"].find("occ_test_fake_cuda_late"), std::string::npos);
  EXPECT_EQ(switched, (std::vector<bool>{false, true}));
  EXPECT_FALSE(hook->ReadyToDetach(41 * kSecond));
  EXPECT_EQ(late.launch(false, Fake(0xf8), 3, 64, 0, nullptr), 0);
  EXPECT_EQ(light.hooked_launches(), 1u);
  light.SetRecording(false);
  // The watch ends 2 s after the wake; the dormant time counts the stretch that ended.
  hook->Tick(42'900 * kMs, false);
  EXPECT_TRUE(callbacks.on());
  hook->Tick(43 * kSecond, false);
  EXPECT_EQ(switched, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(MetaOf(*hook)["reattach_hook_dormant_ms"], "40500");
  EXPECT_TRUE(hook->ReadyToDetach(51 * kSecond + 1)) << "10 s after the new code, nothing missed";
}

}  // namespace
}  // namespace occ::inj
