// LaunchHook against a stand-in driver (launch_hook_fake_driver.cc, loaded as libcuda.so.1) and
// a library that calls it through a cuGetProcAddress-filled table, as the CUDA runtime does:
// the hook finds the entry points, rewrites the table, its wrappers pass every argument and
// result through, record only successful outermost calls, and a library loaded later is hooked
// at the writer's next tick. What is recorded from a launch needs CUPTI and a GPU (its facts,
// context and stream ids): that part is checked by tests/gpu/light_hook.sh.
#include <cuda.h>
#include <dlfcn.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "injector/light/launch_calls.h"
#include "injector/tracer/launch_hook.h"
#include "injector/light/light_tracer.h"
#include "tests/injector/launch_hook_fake_driver.h"
#include "tests/injector/launch_hook_test_support.h"

namespace occ::inj {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

using hook_testing::Fake;
using hook_testing::MetaOf;

TEST(LaunchHookWithAStandInDriver, WrapsTheRuntimeStyleTableAndPassesEverythingThrough) {
  ASSERT_EQ(client_init(), 0);
  LaunchCallStreams streams;
  LightTracerOptions options;
  options.cupti_free = true;  // as in light tracing with CUPTI detached, the hook's role here
  LightTracer light(&streams, nullptr, options);
  std::vector<bool> switched;
  CuptiController controller(hook_testing::StandInSeam(&switched), "", /*launch_callbacks_on=*/true);

  // Before the hook: calls reach the driver and nothing is recorded.
  ASSERT_EQ(client_launch(false, Fake(0xf1), 4, 128, 0, nullptr), 0);
  EXPECT_EQ(fake_driver_calls.classic, 1);

  LaunchHook* hook = LaunchHook::Install(&light, &controller, 0);
  ASSERT_NE(hook, nullptr);
  auto meta = MetaOf(*hook);
  EXPECT_EQ(meta["light_hook_entry_points"], "14")
      << "8 launch entry points, instantiation with flags, with params (legacy and per-thread), two unloads, "
         "cuGetProcAddress_v2";
  EXPECT_GE(std::stoi(meta["light_hook_pointers_rewritten"]), 5) << "the client's table";
  EXPECT_NE(meta["light_hook_objects"].find("occ_test_fake_cuda_client"), std::string::npos) << meta["light_hook_objects"];
  EXPECT_EQ(meta["light_hook_rescans"], "1") << "the scan at installation";
  EXPECT_EQ(meta["light_hook_rescans_at_s"], "none") << "times of rescans after the first";
  EXPECT_GE(std::stod(meta["light_hook_callbacks_on_ms"]), 0.0);
  EXPECT_GE(std::stod(meta["light_hook_scan_ms_max"]), 0.0);
  EXPECT_EQ(LaunchHook::Install(&light, &controller, 0), nullptr)
      << "one hook per process";

  // Every argument and the result pass through; successful launches are recorded (their
  // facts cannot be read without a driver: counted as unreadable, the recording path ran).
  EXPECT_EQ(client_launch(false, Fake(0xf2), 7, 256, 1024, Fake(0x5a)), 0);
  EXPECT_EQ(fake_driver_calls.classic, 2);
  EXPECT_EQ(fake_driver_calls.last_function, Fake(0xf2));
  EXPECT_EQ(fake_driver_calls.last_grid[0], 7u);
  EXPECT_EQ(fake_driver_calls.last_grid[1], 2u);
  EXPECT_EQ(fake_driver_calls.last_grid[2], 3u);
  EXPECT_EQ(fake_driver_calls.last_block[0], 256u);
  EXPECT_EQ(fake_driver_calls.last_shared, 1024u);
  EXPECT_EQ(fake_driver_calls.last_stream, Fake(0x5a));
  EXPECT_EQ(light.hooked_launches(), 1u);
  EXPECT_EQ(light.functions_unreadable(), 1u);

  EXPECT_EQ(client_launch(true, Fake(0xf3), 1, 32, 0, nullptr), 0);
  EXPECT_EQ(fake_driver_calls.classic_ptsz, 1) << "the per-thread entry point stays per-thread";
  EXPECT_EQ(client_launch_cooperative(Fake(0xf4), 2, nullptr), 0);
  EXPECT_EQ(fake_driver_calls.cooperative, 1);
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = config.blockDimY = config.blockDimZ = 1;
  EXPECT_EQ(client_launch_ex(&config, Fake(0xf5)), 0);
  EXPECT_EQ(fake_driver_calls.ex, 1);
  EXPECT_EQ(fake_driver_calls.last_config, &config);
  EXPECT_EQ(light.hooked_launches(), 4u);

  // A failed launch returns the driver's error and is not recorded.
  EXPECT_EQ(client_launch(false, Fake(0xf6), 0, 32, 0, nullptr), 1);
  EXPECT_EQ(client_graph_launch(nullptr, nullptr), 1);
  EXPECT_EQ(fake_driver_calls.graph, 1);
  EXPECT_EQ(light.hooked_launches(), 4u);

  // A library loaded after the hook fills its table itself; the writer's next tick rescans.
  const hook_testing::LateClient late = hook_testing::LoadLateClient(OCC_LATE_CLIENT_PATH);
  ASSERT_NE(late.init, nullptr) << dlerror();
  ASSERT_NE(late.launch, nullptr);
  ASSERT_EQ(late.init(), 0);
  EXPECT_EQ(late.launch(false, Fake(0xf7), 3, 64, 0, nullptr), 0);
  EXPECT_EQ(light.hooked_launches(), 4u) << "not hooked yet";
  hook->Tick(10 * kSecond, /*records_on=*/false);
  EXPECT_EQ(late.launch(false, Fake(0xf8), 3, 64, 0, nullptr), 0);
  EXPECT_EQ(light.hooked_launches(), 5u);
  EXPECT_NE(MetaOf(*hook)["light_hook_objects"].find("occ_test_fake_cuda_late"), std::string::npos);
  EXPECT_EQ(MetaOf(*hook)["light_hook_rescans_at_s"], "10.0") << "installed at 0, rescanned at the 10-s tick";

  // The callbacks: on while the hook is watched (the load at 10 s), off once the watch ends.
  EXPECT_TRUE(switched.empty());
  hook->Tick(13 * kSecond, false);
  EXPECT_EQ(switched, std::vector<bool>{false});
  EXPECT_EQ(MetaOf(*hook)["light_hook_callback_switches"], "1");
}

}  // namespace
}  // namespace occ::inj
