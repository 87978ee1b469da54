// TraceSession in light mode (its settings: settings_test.cc): launch calls
// appended from application threads reaching the file within the commit period, timing
// windows switching kernel records through the hook, and the closing light_* OCC_META rows.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "injector/light/id_translation.h"
#include "injector/session/trace_session.h"
#include "tests/injector/fake_records.h"

namespace occ::inj {
namespace {

using testing::TraceReader;

const FunctionFacts& SquareFacts() {
  static const FunctionFacts facts = [] {
    FunctionFacts f;
    f.mangled_name = "_Z6squarePfi";
    f.registers_per_thread = 40;
    return f;
  }();
  return facts;
}

void RemoveTrace(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

// Records the set_kernel_records hook's calls (writer thread) for the test thread.
struct RecordSwitches {
  std::mutex mutex;
  std::vector<bool> calls;
  std::vector<bool> Get() {
    std::lock_guard lock(mutex);
    return calls;
  }
};

TEST(TraceSessionLightTest, LaunchCallsAreCommittedWhileRunningAndClosingRowsWritten) {
  const std::string path = testing::TempPath("light-session");
  SessionOptions options;
  options.path = path;
  options.flush_period_ms = 20;
  options.buffer_bytes = 64 << 10;
  options.quiet = true;
  options.handle_signals = false;
  options.light = true;
  options.windows.window_ns = 30'000'000;
  options.windows.period_ns = 3'600'000'000'000;  // no periodic window while the test runs
  RecordSwitches switches;
  SessionHooks hooks;
  hooks.set_kernel_records = [&](bool on) -> uint64_t {
    std::lock_guard lock(switches.mutex);
    switches.calls.push_back(on);
    return 0;
  };
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  ASSERT_NE(session->launch_calls(), nullptr);

  constexpr uint32_t kCalls = 2500;  // more than two chunks
  std::thread app([&] {
    for (uint32_t i = 0; i < kCalls; ++i) {
      LaunchCall call;
      call.function = &SquareFacts();
      call.api_start_ns = 1000 + i;
      call.correlation_id = i;
      call.context_id = 1;
      call.stream_id = 7;
      call.grid[0] = 132;
      call.block[0] = 256;
      ASSERT_TRUE(session->launch_calls()->Append(call));
    }
    session->NotifyNewLaunchShape();
  });
  app.join();  // the thread is gone before the writer reads its calls

  int64_t visible = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (visible < kCalls && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    TraceReader reader(path);
    visible = reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL");
  }
  EXPECT_EQ(visible, kCalls) << "committed while the program runs";
  {
    TraceReader reader(path);
    EXPECT_EQ(reader.Meta("status"), "running");
    EXPECT_EQ(reader.Meta("trace_mode"), "light");
    EXPECT_EQ(reader.Meta("launch_count"), std::to_string(kCalls)) << "committed with the rows";
    EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 1);
  }

  // The first window ends window_ns after the first launch; its one configuration was timed in
  // it, so no window opens for new configurations afterwards.
  while (switches.Get().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(switches.Get(), std::vector<bool>{false});

  // A new shape opens a window for it (well within 10 % of the 10 s grace period), which
  // closes window_ns later.
  std::thread([&] {
    LaunchCall wider;
    wider.function = &SquareFacts();
    wider.correlation_id = kCalls;
    wider.context_id = 1;
    wider.grid[0] = 264;
    wider.block[0] = 256;
    ASSERT_TRUE(session->launch_calls()->Append(wider));
    session->NotifyNewLaunchShape();
  }).join();
  while (switches.Get().size() < 3 && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(switches.Get(), (std::vector<bool>{false, true, false}));

  // No kernel records come back here, so the first shape is still under-timed: 40 more of its
  // launches (>= 32 since the last window opened) open a window for under-timed
  // configurations.
  constexpr uint32_t kMore = 40;
  std::thread([&] {
    for (uint32_t i = 0; i < kMore; ++i) {
      LaunchCall call;
      call.function = &SquareFacts();
      call.correlation_id = kCalls + 1 + i;
      call.context_id = 1;
      call.grid[0] = 132;
      call.block[0] = 256;
      ASSERT_TRUE(session->launch_calls()->Append(call));
    }
  }).join();
  while (switches.Get().size() < 5 && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(switches.Get(), (std::vector<bool>{false, true, false, true, false}));

  session->Finish();
  EXPECT_EQ(session->final_stats().launch_calls, kCalls + 1 + kMore);
  TraceReader reader(path);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Meta("status"), "complete");
  EXPECT_EQ(reader.Meta("launch_count"), std::to_string(kCalls + 1 + kMore));
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), kCalls + 1 + kMore);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), kCalls + 1 + kMore);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 2);
  EXPECT_EQ(reader.Meta("timed_launch_count"), "0");
  EXPECT_EQ(reader.Meta("light_launches_dropped"), "0");
  EXPECT_EQ(reader.Meta("light_graph_launches"), "0");
  EXPECT_EQ(reader.Meta("light_unknown_graph_launches"), "0");
  EXPECT_EQ(reader.Meta("light_timed_unmatched"), "0");
  EXPECT_EQ(reader.Meta("light_windows"), "3");
  EXPECT_EQ(reader.Meta("light_windows_for_new_configs"), "1");
  EXPECT_EQ(reader.Meta("light_windows_for_under_timed"), "1");
  EXPECT_GE(reader.Int("SELECT value FROM OCC_META WHERE name = 'light_records_on_ms'"), 3 * 30);
  for (const char* name : {"light_records_on_pct", "light_records_switch_on_ms_max", "light_records_switch_off_ms_max",
                           "light_records_switch_on_ms_total", "light_records_switch_off_ms_total"}) {
    EXPECT_NE(reader.Meta(name), "<no row>") << name;
  }
  EXPECT_EQ(reader.Meta("setting_light_window_ms"), "30");
  EXPECT_EQ(reader.Meta("setting_light_period_ms"), "3600000");
  EXPECT_EQ(reader.Meta("setting_light_max_duty_pct"), "10");
  EXPECT_EQ(reader.Meta("setting_light_new_config_windows"), "1");
  session.reset();
  RemoveTrace(path);
}

// CUPTI detached between windows: launches carry the driver's ids, and the writer turns them
// into CUPTI's (translate_launch_ids) before writing, whenever it writes them.
TEST(TraceSessionLightTest, LaunchIdsAreTranslatedBeforeTheyAreWritten) {
  const std::string path = testing::TempPath("light-translated");
  SessionOptions options;
  options.path = path;
  options.flush_period_ms = 20;
  options.quiet = true;
  options.handle_signals = false;
  options.light = true;
  options.windows.period_ns = 3'600'000'000'000;
  IdTranslation ids;
  ids.LearnContext(5, 1);
  ids.LearnStream(113, 7);
  SessionHooks hooks;
  hooks.set_kernel_records = [](bool) -> uint64_t { return 0; };
  hooks.translate_launch_ids = [&](LaunchCall* call) { ids.Translate(&call->context_id, &call->stream_id); };
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  for (uint32_t stream : {113u, 114u}) {
    LaunchCall call;
    call.function = &SquareFacts();
    call.api_start_ns = 1000 + stream;
    call.context_id = 5;
    call.stream_id = stream;
    call.grid[0] = 132;
    call.block[0] = 256;
    ASSERT_TRUE(session->launch_calls()->Append(call));
  }
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Text("SELECT group_concat(streamId) FROM (SELECT streamId FROM OCC_LAUNCH_CALL ORDER BY apiStart)"),
            "7,114")
      << "learned: CUPTI's id; not learned: the driver's";
  EXPECT_EQ(reader.Text("SELECT group_concat(DISTINCT contextId) FROM OCC_KERNEL_CONFIG"), "1");
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionLightTest, FullTraceHasNoLaunchCallStreams) {
  const std::string path = testing::TempPath("full-session");
  SessionOptions options;
  options.path = path;
  options.quiet = true;
  options.handle_signals = false;
  auto session = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->launch_calls(), nullptr);
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("trace_mode"), "full");
  EXPECT_EQ(reader.Meta("light_windows"), "<no row>");
  session.reset();
  RemoveTrace(path);
}

}  // namespace
}  // namespace occ::inj
