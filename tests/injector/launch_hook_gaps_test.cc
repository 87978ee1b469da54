// LaunchHook in a full trace's re-attach role (LaunchHook::Role::kFullGaps, cupti_reattach.cc)
// against the stand-in driver (launch_hook_fake_driver.cc): the wrappers pass every launch
// through and record nothing until the gaps-only light tracer records (SetRecording), graph
// instantiations are read all the same (they stop the re-attach), recorded launches carry the
// attach epoch, and the hook's OCC_META rows are named reattach_hook_*.
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

TEST(LaunchHookForReattachGaps, RecordsOnlyWhileRecordingAndStampsTheAttachEpoch) {
  ASSERT_EQ(client_init(), 0);
  LaunchCallStreams streams;
  LightTracer light(&streams, nullptr, GapsOnlyOptions());
  int switches = 0;
  LaunchCallbackSwitch callbacks([&](bool, std::string*) { return ++switches > 0; }, true);

  LaunchHook* hook = LaunchHook::Install(&light, &callbacks, 0, LaunchHook::Role::kFullGaps);
  ASSERT_NE(hook, nullptr);
  std::map<std::string, std::string> meta = MetaOf(*hook);
  EXPECT_EQ(meta["reattach_hook_entry_points"], "14") << "the detached role's entry points";
  EXPECT_EQ(meta.count("light_hook_entry_points"), 0u);

  // Not recording: the launch reaches the driver, nothing is recorded or counted.
  const int classic_before = fake_driver_calls.classic;
  ASSERT_EQ(client_launch(false, Fake(0xf1), 4, 32, 0, Fake(0x42)), 0);
  ASSERT_EQ(client_graph_launch(Fake(0x5001), Fake(0x42)), 0);
  EXPECT_EQ(fake_driver_calls.classic, classic_before + 1);
  EXPECT_EQ(light.hooked_launches(), 0u);
  size_t drained = streams.Drain([](const LaunchCall&) {});
  EXPECT_EQ(drained, 0u);

  // A graph instantiated while not recording is still read: graphs stop the re-attach.
  void* exec = nullptr;
  ASSERT_EQ(client_graph_instantiate(&exec, Fake(0x8000)), 0);
  EXPECT_EQ(light.graphs_read_by_hook(), 1u);
  EXPECT_TRUE(light.graphs_seen());

  // Recording: launches are recorded (a graph launch needs no function facts), stamped with the
  // attach epoch, which a re-attach advances.
  light.SetRecording(true);
  const uint32_t epoch = LightTracer::AttachEpoch();
  ASSERT_EQ(client_graph_launch(exec, Fake(0x42)), 0);
  const uint32_t next = LightTracer::ForgetOpenRuntimeLaunches();
  EXPECT_EQ(next, epoch + 1);
  ASSERT_EQ(client_graph_launch(exec, Fake(0x42)), 0);
  light.SetRecording(false);
  ASSERT_EQ(client_graph_launch(exec, Fake(0x42)), 0);
  EXPECT_EQ(light.hooked_launches(), 2u);
  std::vector<LaunchCall> calls;
  streams.Drain([&](const LaunchCall& call) { calls.push_back(call); });
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].attach_epoch, epoch);
  EXPECT_EQ(calls[1].attach_epoch, next);
  EXPECT_EQ(calls[0].correlation_id, 0u) << "no CUPTI callback fired inside the call";
  EXPECT_NE(calls[0].graph, nullptr) << "instantiated through the hook: a known graph";
}

}  // namespace
}  // namespace occ::inj
