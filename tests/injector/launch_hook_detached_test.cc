// LaunchHook with CUPTI detached between windows (OCCTRACE_LIGHT_DETACH; launch_hook.h,
// light_tracer.h) against the stand-in driver (launch_hook_fake_driver.cc): graph instantiation
// and module unload are wrapped too; a graph instantiated while CUPTI is away is read by the
// hook, so its launches are known graphs; launches carry the driver's context and stream ids
// and a CLOCK_REALTIME time. Whether those ids and that clock are CUPTI's is checked on a GPU
// (tests/gpu/light_hook.sh, light-detach: OCC_META light_detach_*_learned_equal).
#include <cuda.h>
#include <dlfcn.h>
#include <time.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "injector/light/launch_calls.h"
#include "injector/tracer/launch_hook.h"
#include "injector/light/light_tracer.h"
#include "injector/writer/trace_writer.h"
#include "tests/injector/launch_hook_fake_driver.h"
#include "tests/injector/launch_hook_test_support.h"

namespace occ::inj {
namespace {

using hook_testing::Fake;

uint64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec);
}

TEST(LaunchHookWithCuptiDetached, GraphsInstantiatedWithoutCuptiAreKnownAndIdsComeFromTheDriver) {
  ASSERT_EQ(client_init(), 0);
  LaunchCallStreams streams;
  LightTracerOptions options;
  options.cupti_free = true;
  LightTracer light(&streams, nullptr, options);
  std::vector<bool> switched;
  CuptiController controller(hook_testing::StandInSeam(&switched), "", /*launch_callbacks_on=*/true);

  // Before the hook: instantiation reaches the driver, nothing is read.
  void* exec = nullptr;
  ASSERT_EQ(client_graph_instantiate(&exec, Fake(0x7000)), 0);
  EXPECT_EQ(exec, Fake(0x7001));
  EXPECT_EQ(light.graphs_read_by_hook(), 0u);
  void* real_launch = dlsym(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD), "cuLaunchKernel");  // the stand-in's
  ASSERT_NE(real_launch, nullptr);
  EXPECT_EQ(client_lookup("cuLaunchKernel"), real_launch);

  LaunchHook* hook = LaunchHook::Install(&light, &controller, 0);
  ASSERT_NE(hook, nullptr);
  std::map<std::string, std::string> meta;
  for (const auto& [name, value] : hook->Meta()) {
    CheckMetaKey(name);  // declared in schema/meta_keys.h (meta_keys_checked.cc)
    meta[name] = value;
  }
  EXPECT_EQ(meta["light_hook_entry_points"], "14")
      << "8 launch entry points, instantiation with flags, with params (legacy and per-thread), two unloads, "
         "cuGetProcAddress_v2";

  // A pointer asked for after the scan is the wrapper's already: a launch through it is recorded.
  void* asked_later = client_lookup("cuLaunchKernel");
  ASSERT_NE(asked_later, nullptr);
  EXPECT_NE(asked_later, real_launch);
  using Classic = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                          void**);
  EXPECT_EQ(reinterpret_cast<Classic>(asked_later)(Fake(0xf1), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(fake_driver_calls.classic, 1) << "the driver's function ran";
  EXPECT_EQ(light.hooked_launches(), 1u) << "through the wrapper (its facts unreadable here)";
  EXPECT_EQ(client_lookup("cuNotAnEntryPoint"), nullptr);

  // A graph instantiated now is read by the hook; its launch is a known graph (no nodes can be
  // read from this driver: an incomplete graph, still known).
  void* hooked_exec = nullptr;
  ASSERT_EQ(client_graph_instantiate(&hooked_exec, Fake(0x8000)), 0);
  EXPECT_EQ(hooked_exec, Fake(0x8001)) << "the result passes through";
  EXPECT_EQ(fake_driver_calls.instantiate_flags, 2);
  EXPECT_EQ(light.graphs_read_by_hook(), 1u);
  void* failed_exec = nullptr;
  EXPECT_EQ(client_graph_instantiate(&failed_exec, nullptr), 1) << "the driver's error passes through";
  EXPECT_EQ(light.graphs_read_by_hook(), 1u) << "a failed instantiation is not read";

  const uint64_t before = RealtimeNs();
  ASSERT_EQ(client_graph_launch(hooked_exec, Fake(0x42)), 0);
  ASSERT_EQ(client_graph_launch(exec, Fake(0x42)), 0);  // instantiated before the hook: unknown
  const uint64_t after = RealtimeNs();
  EXPECT_EQ(light.hooked_launches(), 3u);
  std::vector<LaunchCall> calls;
  streams.Drain([&](const LaunchCall& call) { calls.push_back(call); });
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_NE(calls[0].graph, nullptr);
  EXPECT_EQ(calls[0].unknown_graph, 0u);
  EXPECT_EQ(calls[0].context_id, 5u) << "cuCtxGetId's";
  EXPECT_EQ(calls[0].device_id, 0u);
  EXPECT_EQ(calls[0].stream_id, 0x42u + 100) << "cuStreamGetId's";
  EXPECT_GE(calls[0].api_start_ns, before) << "CLOCK_REALTIME, CUPTI's clock";
  EXPECT_LE(calls[0].api_start_ns, after);
  EXPECT_EQ(calls[1].graph, nullptr);
  EXPECT_EQ(calls[1].unknown_graph, 1u);

  // Module unload passes through (and forgets the function facts read so far).
  EXPECT_EQ(client_module_unload(Fake(0x9000)), 0);
  EXPECT_EQ(fake_driver_calls.module_unloads, 1);

  // Detaching waits for 10 s without new code: none since the hook was installed (at 0) ...
  constexpr int64_t kSecond = 1'000'000'000;
  EXPECT_FALSE(hook->ReadyToDetach(5 * kSecond));
  hook->Tick(11 * kSecond, /*records_on=*/false);
  EXPECT_TRUE(hook->ReadyToDetach(11 * kSecond));
  // ... and again after a CUDA module is loaded (seen at the next tick).
  hook->NoteModuleLoaded();
  hook->Tick(12 * kSecond, false);
  EXPECT_FALSE(hook->ReadyToDetach(15 * kSecond));
  EXPECT_TRUE(hook->ReadyToDetach(22 * kSecond));
}

}  // namespace
}  // namespace occ::inj
