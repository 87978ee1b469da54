// The achieved profiler's callback side on CPU: the real RangeAchievedProfiler (policy,
// per-context state, parking, locking, error reporting, session meta) driven with synthetic
// CUpti_CallbackData as CUPTI delivers a cudaLaunchKernel, over the no-GPU device of
// fake_device.h (the only part that needs a GPU).
#include "injector/achieved/replay/achieved_profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/achieved/achieved_launch.h"
#include "injector/writer/trace_writer.h"
#include "tests/achieved/fake_device.h"

namespace occ::inj {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::FakeDevice;
using testing::FakeDeviceState;

constexpr int64_t kMs = 1'000'000;
constexpr auto kHangLimit = std::chrono::seconds(20);

CUcontext Ctx(uintptr_t n) { return reinterpret_cast<CUcontext>(0x1000 * n); }
CUstream Stream(uintptr_t n) { return reinterpret_cast<CUstream>(0x7000 + n); }

// A clock the test moves by hand; it can also hold one chosen thread inside a clock read
// (the policy reads the clock under its mutex, so that thread then holds the policy's mutex).
class TestClock {
 public:
  NanoClock fn() {
    return [this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (blocked_thread_ == std::this_thread::get_id()) {
        ++blocked_reads_;
        changed_.notify_all();
        changed_.wait(lock, [this] { return blocked_thread_ != std::this_thread::get_id(); });
      }
      return now_;
    };
  }
  void Advance(int64_t ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    now_ += ns;
  }
  void BlockThread(std::thread::id id) {
    std::lock_guard<std::mutex> lock(mutex_);
    blocked_thread_ = id;
  }
  void WaitUntilBlocked() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return blocked_reads_ > 0; });
  }
  void Unblock() {
    std::lock_guard<std::mutex> lock(mutex_);
    blocked_thread_ = std::thread::id{};
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t now_ = 1000 * kMs;  // well after start: the budget is not what these tests limit
  std::thread::id blocked_thread_{};
  int blocked_reads_ = 0;
};

struct Rig {
  explicit Rig(AchievedConfig config = SampleConfig()) {
    device = std::make_shared<FakeDeviceState>();
    profiler = CreateRangeAchievedProfiler(
        [this](AchievedSample&& sample) {
          std::lock_guard<std::mutex> lock(samples_mutex);
          samples.push_back(std::move(sample));
        },
        config, std::make_unique<FakeDevice>(device), clock.fn(), 0);
  }

  static AchievedConfig SampleConfig() {
    AchievedConfig config;
    config.mode = AchievedMode::kSample;
    config.samples_per_signature = 1;
    config.budget_fraction = 1.0;
    config.idle_park_ns = 100 * kMs;
    config.context_wait_ns = 200 * kMs;
    // Set up at CONTEXT_CREATED on the calling thread, so that counts are exact right after;
    // the background setup has its own tests below.
    config.background_setup = false;
    return config;
  }

  void Subscribe(uintptr_t handle = 0x1) {
    profiler->EnableCallbacks(reinterpret_cast<CUpti_SubscriberHandle>(handle));
  }

  std::map<std::string, std::string> Meta() const {
    std::map<std::string, std::string> meta;
    for (auto& [name, value] : profiler->SessionMeta()) {
      CheckMetaKey(name);  // declared in schema/meta_keys.h (tests/injector/meta_keys_checked.cc)
      meta[name] = value;
    }
    return meta;
  }
  std::vector<AchievedSample> Samples() {
    std::lock_guard<std::mutex> lock(samples_mutex);
    return samples;
  }

  void ContextCreated(CUcontext ctx) { Resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, ctx); }
  void ContextDestroyed(CUcontext ctx) {
    Resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, ctx);
  }
  void Resource(CUpti_CallbackId cbid, CUcontext ctx) {
    CUpti_ResourceData data{};
    data.context = ctx;
    profiler->OnCallback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
  }

  TestClock clock;
  std::shared_ptr<FakeDeviceState> device;
  std::mutex samples_mutex;
  std::vector<AchievedSample> samples;
  std::unique_ptr<AchievedProfiler> profiler;
};

// One application thread's cudaLaunchKernel, callback by callback.
class Launch {
 public:
  Launch(AchievedProfiler* profiler, CUcontext ctx, uint64_t function, uint32_t grid = 66,
         CUstream stream = nullptr)
      : profiler_(profiler) {
    params_.f = reinterpret_cast<CUfunction>(function);
    params_.gridDimX = grid;
    params_.gridDimY = params_.gridDimZ = 1;
    params_.blockDimX = 256;
    params_.blockDimY = params_.blockDimZ = 1;
    params_.hStream = stream;
    data_.context = ctx;
    data_.contextUid = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ctx) / 0x1000);
    data_.functionParams = &params_;
    data_.functionReturnValue = &result_;
  }

  // The runtime API's id (what the kernel record carries) and the driver call's own.
  void Enter(uint32_t runtime_id = 100, uint32_t driver_id = 200) {
    runtime_id_ = runtime_id;
    data_.callbackSite = CUPTI_API_ENTER;
    data_.correlationId = runtime_id;
    profiler_->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API,
                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &data_);
    data_.correlationId = driver_id;
    profiler_->OnCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                          &data_);
  }
  void Exit() {
    data_.callbackSite = CUPTI_API_EXIT;
    profiler_->OnCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                          &data_);
    data_.correlationId = runtime_id_;
    profiler_->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API,
                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &data_);
  }
  void Run(uint32_t runtime_id = 100) {
    Enter(runtime_id, runtime_id + 1);
    Exit();
  }

 private:
  AchievedProfiler* profiler_;
  cuLaunchKernel_params params_{};
  CUresult result_ = CUDA_SUCCESS;
  CUpti_CallbackData data_{};
  uint32_t runtime_id_ = 0;
};

// Runs `body` on a new thread and waits at most kHangLimit for it; a hang fails the test
// instead of blocking the test program (after `unblock`, which should let it finish).
template <typename Body, typename Unblock>
bool FinishesInTime(Body body, Unblock unblock) {
  auto done = std::async(std::launch::async, body);
  const bool in_time = done.wait_for(kHangLimit) == std::future_status::ready;
  if (!in_time) unblock();
  done.get();
  return in_time;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(AchievedProfiler, MeasuresEachSignatureOnceThenParksAndReenables) {
  Rig rig;
  rig.ContextCreated(Ctx(1));
  EXPECT_EQ(rig.device->creates.load(), 1);
  Launch a(rig.profiler.get(), Ctx(1), 0x10);
  a.Run(/*runtime_id=*/500);
  ASSERT_EQ(rig.Samples().size(), 1u);
  EXPECT_EQ(rig.Samples()[0].status, "measured");
  EXPECT_EQ(rig.Samples()[0].correlation_id, 500u);  // the outer (runtime) id
  EXPECT_DOUBLE_EQ(rig.Samples()[0].achieved_occupancy_pct, rig.device->occupancy_pct);
  a.Run();
  a.Run();
  EXPECT_EQ(rig.device->starts.load(), 1);
  EXPECT_EQ(rig.Meta()["achieved_parks"], "0");
  // Idle for longer than idle_park_ns: the next launch with nothing to measure parks.
  rig.clock.Advance(150 * kMs);
  a.Run();
  EXPECT_EQ(rig.Meta()["achieved_parks"], "1");
  EXPECT_EQ(rig.device->disables.load(), 1);
  for (int i = 0; i < 10; ++i) a.Run();
  EXPECT_EQ(rig.device->creates.load(), 1);  // parked launches never re-enable
  // A new signature re-enables it and is measured.
  Launch b(rig.profiler.get(), Ctx(1), 0x10, /*grid=*/132);
  b.Run();
  EXPECT_EQ(rig.device->creates.load(), 2);
  EXPECT_EQ(rig.device->starts.load(), 2);
  auto meta = rig.Meta();
  EXPECT_EQ(meta["achieved_unparks"], "1");
  EXPECT_EQ(meta["achieved_launches_measured"], "2");
  EXPECT_EQ(meta["achieved_signatures_seen"], "2");
  EXPECT_EQ(meta["achieved_status"], "ok");
  rig.profiler->Shutdown();
  // The session ended when the only context parked, started again for the new signature, and
  // ended at shutdown.
  EXPECT_EQ(rig.device->initializes.load(), 2);
  EXPECT_EQ(rig.device->deinitializes.load(), 2);
}

// Kernel replay is an explicit choice: its launch callbacks are switched on once, at subscribe,
// and stay on while contexts park and after measurement stopped (no quiet parking any more).
TEST(AchievedProfiler, TheLaunchCallbacksStayOnWhileParkedAndAfterAFailure) {
  for (const AchievedMode mode : {AchievedMode::kSample, AchievedMode::kAll}) {
    AchievedConfig config = Rig::SampleConfig();
    config.mode = mode;
    Rig rig(config);
    rig.profiler->EnableCallbacks(reinterpret_cast<CUpti_SubscriberHandle>(0x1));
    rig.ContextCreated(Ctx(1));
    Launch a(rig.profiler.get(), Ctx(1), 0x10);
    for (int i = 0; i < 5; ++i) {
      rig.clock.Advance(500 * kMs);
      a.Run();
    }
    EXPECT_TRUE(rig.device->launch_callbacks_on.load());
    EXPECT_EQ(rig.device->launch_callback_switches.load(), 1) << "on at subscribe, never switched again";
    if (mode == AchievedMode::kSample) {
      EXPECT_GE(std::stoi(rig.Meta()["achieved_parks"]), 1);
    }
    rig.profiler->Shutdown();
  }
  Rig failing;
  failing.profiler->EnableCallbacks(reinterpret_cast<CUpti_SubscriberHandle>(0x1));
  failing.device->create_error = {"cuptiRangeProfilerEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ""};
  ::testing::internal::CaptureStderr();
  failing.ContextCreated(Ctx(1));
  Launch(failing.profiler.get(), Ctx(1), 0x40).Run();
  failing.ContextCreated(Ctx(2));
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failing.device->creates.load(), 1) << "no second attempt";
  EXPECT_EQ(failing.Samples().size(), 0u) << "nothing measured once measurement stopped";
  failing.profiler->Shutdown();
}

// The default (OCCTRACE_ACHIEVED_PARK_DEINIT=1): parking the last enabled context also ends
// CUPTI's profiler session, and the next measurement starts it again before re-creating the
// context profiler.
TEST(AchievedProfiler, ParkingTheLastContextEndsTheProfilerSession) {
  AchievedConfig config = Rig::SampleConfig();
  config.park_deinitializes = true;
  Rig rig(config);
  rig.ContextCreated(Ctx(1));
  rig.ContextCreated(Ctx(2));
  EXPECT_EQ(rig.device->initializes.load(), 1);
  Launch a(rig.profiler.get(), Ctx(1), 0x10);
  Launch b(rig.profiler.get(), Ctx(2), 0x10);
  a.Run();
  b.Run();
  rig.clock.Advance(150 * kMs);
  a.Run();  // parks context 1: context 2 still enabled, the session stays
  EXPECT_EQ(rig.Meta()["achieved_parks"], "1");
  EXPECT_EQ(rig.device->deinitializes.load(), 0);
  b.Run();  // parks context 2, the last one: the session ends
  EXPECT_EQ(rig.Meta()["achieved_parks"], "2");
  EXPECT_EQ(rig.device->deinitializes.load(), 1);
  EXPECT_EQ(rig.Meta()["achieved_profiler_session_ends"], "1");
  // A new signature starts the session again and is measured.
  Launch c(rig.profiler.get(), Ctx(1), 0x10, /*grid=*/132);
  c.Run();
  EXPECT_EQ(rig.device->initializes.load(), 2);
  EXPECT_EQ(rig.Meta()["achieved_launches_measured"], "3");
  rig.profiler->Shutdown();
  EXPECT_EQ(rig.device->deinitializes.load(), 2);  // every start has its end, no more
}

// With OCCTRACE_ACHIEVED_PARK_DEINIT=0 the session lives until shutdown, however often contexts
// park.
TEST(AchievedProfiler, ParkingCanKeepTheProfilerSession) {
  AchievedConfig config = Rig::SampleConfig();
  config.park_deinitializes = false;
  Rig rig(config);
  rig.ContextCreated(Ctx(1));
  Launch a(rig.profiler.get(), Ctx(1), 0x10);
  a.Run();
  rig.clock.Advance(150 * kMs);
  a.Run();
  EXPECT_EQ(rig.Meta()["achieved_parks"], "1");
  EXPECT_EQ(rig.device->deinitializes.load(), 0);
  rig.profiler->Shutdown();
  EXPECT_EQ(rig.device->initializes.load(), 1);
  EXPECT_EQ(rig.device->deinitializes.load(), 1);
}

TEST(AchievedProfiler, CapturingLaunchGivesItsSampleBack) {
  Rig rig;
  rig.device->capturing_streams.insert(Stream(1));
  Launch captured(rig.profiler.get(), Ctx(1), 0x20, 66, Stream(1));
  captured.Run();
  Launch eager(rig.profiler.get(), Ctx(1), 0x20, 66, Stream(2));
  eager.Run();
  const std::vector<AchievedSample> samples = rig.Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].status, "capturing");
  EXPECT_EQ(samples[1].status, "measured");
  EXPECT_EQ(samples[1].sample_index, 0);
  EXPECT_EQ(rig.device->starts.load(), 1);  // never started under capture
}

TEST(AchievedProfiler, SignatureCapIsCountedInSessionMeta) {
  AchievedConfig config = Rig::SampleConfig();
  config.max_signatures = 2;
  Rig rig(config);
  for (uint32_t grid = 1; grid <= 5; ++grid) Launch(rig.profiler.get(), Ctx(1), 0x30, grid).Run();
  auto meta = rig.Meta();
  EXPECT_EQ(meta["achieved_signature_cap"], "2");
  EXPECT_EQ(meta["achieved_signatures_seen"], "2");
  EXPECT_EQ(meta["achieved_launches_measured"], "2");
  EXPECT_EQ(meta["achieved_launches_over_signature_cap"], "3");
}

// The steady state takes no global lock: while one thread is held inside the policy's mutex
// (its clock read while deciding on a new signature), exhausted launches of other threads go on.
TEST(AchievedProfiler, ExhaustedLaunchesNeedNotThePolicyLock) {
  for (const bool parked : {true, false}) {
    SCOPED_TRACE(parked ? "parked context" : "enabled context");
    AchievedConfig config = Rig::SampleConfig();
    if (!parked) config.idle_park_ns = int64_t{1} << 62;
    Rig rig(config);
    rig.ContextCreated(Ctx(1));
    // Context 2 is where the steady thread launches: its signature is sampled and (if
    // `parked`) the context parked.
    Launch(rig.profiler.get(), Ctx(2), 0x40).Run();
    rig.clock.Advance(150 * kMs);
    Launch(rig.profiler.get(), Ctx(2), 0x40).Run();
    EXPECT_EQ(rig.Meta()["achieved_parks"], parked ? "1" : "0");

    std::promise<void> learned;
    std::promise<void> go;
    std::shared_future<void> going = go.get_future().share();
    std::atomic<bool> steady_done{false};
    std::thread steady([&] {
      Launch launch(rig.profiler.get(), Ctx(2), 0x40);
      launch.Run();  // this thread's first launch of it: learns it is exhausted (locked path)
      learned.set_value();
      going.wait();
      for (int i = 0; i < 1000; ++i) launch.Run();
      steady_done.store(true);
    });
    learned.get_future().wait();

    std::thread holder([&] {
      // A new signature in context 1: the policy reads the clock under its mutex and blocks.
      rig.clock.BlockThread(std::this_thread::get_id());
      Launch(rig.profiler.get(), Ctx(1), 0x41).Run();
    });
    rig.clock.WaitUntilBlocked();
    go.set_value();
    const auto deadline = std::chrono::steady_clock::now() + kHangLimit;
    while (!steady_done.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(steady_done.load()) << "an exhausted launch waited for the policy's mutex";
    rig.clock.Unblock();
    holder.join();
    steady.join();
    EXPECT_EQ(rig.Meta()["achieved_launches_measured"], "2");
  }
}

// While a context's profiler is enabled, no launch of another thread runs between a measured
// launch's Start and Stop (its kernel would land in the measured range). One thread launches
// new signatures (each measured), three launch exhausted ones meanwhile.
TEST(AchievedProfiler, MeasuredLaunchesAreSerializedPerContext) {
  AchievedConfig config = Rig::SampleConfig();
  config.idle_park_ns = int64_t{1} << 62;
  Rig rig(config);
  constexpr uint32_t kExhausted = 8;
  constexpr uint32_t kMeasured = 150;
  for (uint32_t grid = 1; grid <= kExhausted; ++grid) {
    Launch(rig.profiler.get(), Ctx(1), 0x50, grid).Run();
  }
  std::atomic<bool> measuring_done{false};
  std::atomic<int> inside_foreign_range{0};
  std::atomic<int> launches_beside{0};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    for (uint32_t i = 0; i < kMeasured; ++i) {
      Launch launch(rig.profiler.get(), Ctx(1), 0x51, i + 1);
      launch.Enter();
      EXPECT_EQ(rig.device->started_by.load(), std::this_thread::get_id());
      // A measured kernel takes ~3 ms: keep the range open a while.
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      launch.Exit();
    }
    measuring_done.store(true);
  });
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; !measuring_done.load(); ++i) {
        Launch launch(rig.profiler.get(), Ctx(1), 0x50,
                      1 + (i + static_cast<uint32_t>(t)) % kExhausted);
        launch.Enter();
        // Between ENTER and EXIT the driver enqueues the kernel: a range open on another
        // thread now would capture it.
        const std::thread::id started_by = rig.device->started_by.load();
        if (started_by != std::thread::id{} && started_by != std::this_thread::get_id()) {
          inside_foreign_range.fetch_add(1);
        }
        launch.Exit();
        launches_beside.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(inside_foreign_range.load(), 0);
  EXPECT_GT(launches_beside.load(), 0);
  EXPECT_EQ(rig.device->starts.load(), static_cast<int>(kExhausted + kMeasured));
  EXPECT_EQ(rig.Meta()["achieved_launches_measured"], std::to_string(kExhausted + kMeasured));
}

TEST(AchievedProfiler, DestroyedContextIsSetUpAgainWhenItsHandleComesBack) {
  Rig rig;
  Launch(rig.profiler.get(), Ctx(1), 0x60).Run();
  rig.ContextDestroyed(Ctx(1));
  EXPECT_EQ(rig.device->disables.load(), 1);
  // cudaDeviceReset then a new primary context at the same address: this thread's cached
  // state of the old one must not be used.
  Launch(rig.profiler.get(), Ctx(1), 0x61).Run();
  EXPECT_EQ(rig.device->creates.load(), 2);
  EXPECT_EQ(rig.Meta()["achieved_launches_measured"], "2");
}

TEST(AchievedProfiler, AThreadsCachesDoNotOutliveTheirProfiler) {
  for (int round = 0; round < 3; ++round) {
    Rig rig;  // each round's profiler may reuse the last one's address
    Launch(rig.profiler.get(), Ctx(1), 0x70).Run();
    Launch(rig.profiler.get(), Ctx(1), 0x70).Run();
    EXPECT_EQ(rig.device->creates.load(), 1);
    EXPECT_EQ(rig.Meta()["achieved_launches_measured"], "1") << round;
  }
}

// A launch whose EXIT callback never comes (CUPTI finalized by another client) keeps its
// context's lock: other threads' launches, context destruction and shutdown must not wait for
// it forever.
TEST(AchievedProfiler, LostExitDoesNotHangOtherLaunchesOrShutdown) {
  for (const bool measuring : {false, true}) {
    SCOPED_TRACE(measuring ? "stuck launch was measured" : "stuck launch was not measured");
    AchievedConfig config = Rig::SampleConfig();
    config.idle_park_ns = int64_t{1} << 62;
    Rig rig(config);
    Launch(rig.profiler.get(), Ctx(1), 0x80).Run();  // context set up; signature 0x80 exhausted

    std::promise<void> entered;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::once_flag release_once;
    auto unblock = [&] { std::call_once(release_once, [&] { release.set_value(); }); };
    std::thread stuck([&] {
      Launch launch(rig.profiler.get(), Ctx(1), measuring ? 0x81 : 0x80);
      launch.Enter();
      entered.set_value();
      released.wait();  // its EXIT is never delivered; the thread ends with the launch open
    });
    entered.get_future().wait();
    ASSERT_EQ(rig.device->starts.load(), measuring ? 2 : 1);

    ::testing::internal::CaptureStderr();
    bool first_in_time = false;
    bool second_in_time = false;
    double first_s = 0;
    double second_s = 0;
    first_in_time = FinishesInTime(
        [&] {
          const auto start = std::chrono::steady_clock::now();
          Launch(rig.profiler.get(), Ctx(1), 0x80).Run();
          first_s = SecondsSince(start);
          // The context is now marked stalled: no more waiting.
          const auto again = std::chrono::steady_clock::now();
          for (uint64_t i = 0; i < 5; ++i) Launch(rig.profiler.get(), Ctx(1), 0x82 + i).Run();
          second_s = SecondsSince(again);
        },
        unblock);
    second_in_time = FinishesInTime(
        [&] {
          rig.ContextDestroyed(Ctx(1));
          rig.profiler->Shutdown();
        },
        unblock);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(first_in_time);
    EXPECT_TRUE(second_in_time);
    EXPECT_GE(first_s, 0.2);  // waited the bound once...
    EXPECT_LT(first_s, 5.0);
    EXPECT_LT(second_s, 0.15);  // ...and not again
    // Launches that went ahead were not measured (no Start while another thread holds it).
    EXPECT_EQ(rig.device->starts.load(), measuring ? 2 : 1);
    auto meta = rig.Meta();
    EXPECT_EQ(meta["achieved_context_wait_timeouts"], "2");  // the launch, then the destroy
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_THAT(err, HasSubstr("EXIT callback may never come"));
    // The stuck launch's profiler was left alone (no Disable under its holder), and the profiler
    // API not deinitialized under it.
    EXPECT_EQ(rig.device->deinitializes.load(), 0);
    unblock();
    stuck.join();  // its thread-local pending launch releases the lock on the owner's thread
  }
}

// A holder that was only slow (its EXIT does come): the context recovers and is measured again.
TEST(AchievedProfiler, SlowHolderClearsTheStall) {
  AchievedConfig config = Rig::SampleConfig();
  config.idle_park_ns = int64_t{1} << 62;
  config.context_wait_ns = 50 * kMs;
  Rig rig(config);
  Launch(rig.profiler.get(), Ctx(1), 0x90).Run();
  std::promise<void> entered;
  std::promise<void> release;
  std::thread slow([&] {
    Launch launch(rig.profiler.get(), Ctx(1), 0x90);
    launch.Enter();
    entered.set_value();
    release.get_future().wait();
    launch.Exit();
  });
  entered.get_future().wait();
  ::testing::internal::CaptureStderr();
  Launch(rig.profiler.get(), Ctx(1), 0x91).Run();  // times out, goes ahead unmeasured
  release.set_value();
  slow.join();
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rig.Meta()["achieved_context_wait_timeouts"], "1");
  Launch(rig.profiler.get(), Ctx(1), 0x92).Run();  // gets the lock: the stall is over
  Launch(rig.profiler.get(), Ctx(1), 0x91).Run();  // not charged when it went ahead: measured now
  EXPECT_EQ(rig.Meta()["achieved_launches_measured"], "3");
  EXPECT_EQ(rig.Meta()["achieved_context_wait_timeouts"], "1");
}

// Polls `done` until it holds or kHangLimit passes.
template <typename Predicate>
bool Eventually(Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + kHangLimit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

AchievedConfig BackgroundConfig() {
  AchievedConfig config = Rig::SampleConfig();
  config.background_setup = true;
  config.context_wait_ns = 5'000 * kMs;  // waits below end when the test releases the setup
  return config;
}

// The setup runs on a thread of its own: CONTEXT_CREATED returns at once, launches that are not
// to be measured go ahead, and the first launch to be measured waits for the setup and then
// uses it (warm, set up once), so the first launch of each signature is still the one measured.
TEST(AchievedProfiler, BackgroundSetupKeepsTheProgramGoingAndTheFirstLaunchMeasured) {
  Rig rig(BackgroundConfig());
  rig.device->HoldCreates();
  EXPECT_TRUE(FinishesInTime([&] { rig.ContextCreated(Ctx(1)); },
                             [&] { rig.device->ReleaseCreates(); }));
  ASSERT_TRUE(Eventually([&] { return rig.device->creates.load() == 1; }));

  std::atomic<bool> measured_launch_done{false};
  std::thread first([&] {
    Launch(rig.profiler.get(), Ctx(1), 0x10).Run(/*runtime_id=*/700);
    measured_launch_done.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(measured_launch_done.load());  // waiting for the setup, not measured without it
  rig.device->ReleaseCreates();
  first.join();

  ASSERT_EQ(rig.Samples().size(), 1u);
  EXPECT_EQ(rig.Samples()[0].status, "measured");
  EXPECT_EQ(rig.Samples()[0].correlation_id, 700u);
  EXPECT_EQ(rig.device->creates.load(), 1);  // the setup thread's, none on the launch's thread
  EXPECT_EQ(rig.device->warmups.load(), 1);
  EXPECT_EQ(rig.device->starts.load(), 1);
  auto meta = rig.Meta();
  EXPECT_EQ(meta["achieved_background_setup"], "1");
  EXPECT_EQ(meta["achieved_setup_ns"], "0");  // nothing on application threads
  EXPECT_EQ(meta["achieved_unparks"], "0");
  EXPECT_EQ(meta["achieved_chip"], "GH100");
  rig.profiler->Shutdown();
  EXPECT_EQ(rig.device->disables.load(), 1);
  EXPECT_EQ(rig.device->deinitializes.load(), rig.device->initializes.load());
}

TEST(AchievedProfiler, LaunchesNotToBeMeasuredDoNotWaitForTheBackgroundSetup) {
  AchievedConfig config = BackgroundConfig();
  config.max_signatures = 0;  // the policy measures nothing
  Rig rig(config);
  rig.device->HoldCreates();
  rig.ContextCreated(Ctx(1));
  ASSERT_TRUE(Eventually([&] { return rig.device->creates.load() == 1; }));
  EXPECT_TRUE(FinishesInTime(
      [&] {
        for (uint32_t i = 0; i < 100; ++i) Launch(rig.profiler.get(), Ctx(1), 0x20, 1 + i).Run();
      },
      [&] { rig.device->ReleaseCreates(); }));
  rig.device->ReleaseCreates();
  rig.profiler->Shutdown();
  EXPECT_TRUE(rig.Samples().empty());
  EXPECT_EQ(rig.device->starts.load(), 0);
  EXPECT_EQ(rig.Meta()["achieved_launches_over_signature_cap"], "100");
}

// cudaDeviceReset or cuCtxDestroy during the setup: the destroy waits for it and drops the
// profiler; a context at the same address later is set up anew.
TEST(AchievedProfiler, ContextDestroyedDuringBackgroundSetup) {
  Rig rig(BackgroundConfig());
  rig.device->HoldCreates();
  rig.ContextCreated(Ctx(1));
  ASSERT_TRUE(Eventually([&] { return rig.device->creates.load() == 1; }));
  std::thread destroyer([&] { rig.ContextDestroyed(Ctx(1)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rig.device->ReleaseCreates();
  destroyer.join();
  EXPECT_EQ(rig.device->disables.load(), 1);
  Launch(rig.profiler.get(), Ctx(1), 0x30).Run();
  EXPECT_TRUE(Eventually([&] { return rig.Meta()["achieved_launches_measured"] == "1"; }));
  rig.profiler->Shutdown();
  EXPECT_EQ(rig.device->disables.load(), rig.device->creates.load());
  EXPECT_EQ(rig.device->deinitializes.load(), rig.device->initializes.load());
}

// Shutdown (process exit) during the setup waits for the setup thread: it must not end CUPTI's
// profiler session under it, nor leave it running on a destroyed profiler (ASan checks this).
TEST(AchievedProfiler, ShutdownWaitsForTheBackgroundSetup) {
  for (const bool destroy_right_after : {false, true}) {
    SCOPED_TRACE(destroy_right_after ? "profiler destroyed by Shutdown" : "explicit Shutdown");
    auto rig = std::make_unique<Rig>(BackgroundConfig());
    rig->device->HoldCreates();
    rig->ContextCreated(Ctx(1));
    rig->ContextCreated(Ctx(2));
    ASSERT_TRUE(Eventually([&] { return rig->device->creates.load() == 2; }));
    std::shared_ptr<FakeDeviceState> device = rig->device;
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      device->ReleaseCreates();
    });
    if (destroy_right_after) {
      rig.reset();  // ~RangeAchievedProfiler runs Shutdown
    } else {
      rig->profiler->Shutdown();
    }
    releaser.join();
    EXPECT_EQ(device->disables.load(), 2);
    EXPECT_EQ(device->deinitializes.load(), 1);
    EXPECT_EQ(device->initializes.load(), 1);
  }
}

struct SetupFailure {
  const char* name;
  bool at_initialize;
  ProfilerError error;
  const char* status;
  const char* line_start;
  std::vector<const char*> line_has;
};

// No counter permission or an unsupported device: tracing goes on (every callback returns,
// nothing measured, no retry per launch), OCC_META says why, and stderr gets one line.
// Two sampling processes on one GPU: CUPTI lets one profile at a time and answers the other
// CUPTI_ERROR_HARDWARE_BUSY (seen on an H100 when two traced benchmark processes started
// together). That process waits 1 s, then 2 s, ... and tries again; its samples are given back,
// not spent, and measurement is not stopped.
TEST(AchievedProfiler, BusyProfilerIsWaitedForNotGivenUp) {
  Rig rig;
  rig.device->create_error = {"cuptiProfilerGetCounterAvailability", CUPTI_ERROR_HARDWARE_BUSY, ""};
  ::testing::internal::CaptureStderr();
  rig.ContextCreated(Ctx(1));
  EXPECT_EQ(rig.device->creates.load(), 1);
  Launch a(rig.profiler.get(), Ctx(1), 0x30);
  for (int i = 0; i < 20; ++i) a.Run();
  EXPECT_EQ(rig.device->creates.load(), 1) << "no new attempt within the first second";
  rig.clock.Advance(999 * kMs);
  a.Run();
  EXPECT_EQ(rig.device->creates.load(), 1);
  rig.clock.Advance(1 * kMs);
  a.Run();
  EXPECT_EQ(rig.device->creates.load(), 2) << "1 s later: tried again, still busy";
  rig.clock.Advance(1500 * kMs);
  a.Run();
  EXPECT_EQ(rig.device->creates.load(), 2) << "the second wait is 2 s";
  rig.device->create_error = {};
  rig.clock.Advance(500 * kMs);
  a.Run(/*runtime_id=*/700);
  EXPECT_EQ(rig.device->creates.load(), 3);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(rig.Samples().size(), 1u) << "the sample was not spent on the busy attempts";
  EXPECT_EQ(rig.Samples()[0].status, "measured");
  EXPECT_EQ(rig.Samples()[0].correlation_id, 700u);
  auto meta = rig.Meta();
  EXPECT_EQ(meta["achieved_status"], "ok");
  EXPECT_EQ(meta["achieved_busy_waits"], "2");
  EXPECT_EQ(meta["achieved_signatures_measured"], "1");
  EXPECT_NE(err.find("occtrace: achieved occupancy: the GPU's profiler is in use by another process "
                     "(CUPTI_ERROR_HARDWARE_BUSY); sampling waits and tries again, tracing continues"),
            std::string::npos) << err;
  EXPECT_EQ(err.find("HARDWARE_BUSY", err.find("HARDWARE_BUSY") + 1), std::string::npos) << "one line: " << err;
  rig.profiler->Shutdown();
}

TEST(AchievedProfiler, SetupFailureKeepsTracingAndSaysWhyOnce) {
  const std::vector<SetupFailure> failures = {
      {"no permission at cuptiRangeProfilerEnable", false,
       {"cuptiRangeProfilerEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ""},
       "no-permission: cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
       "occtrace: achieved occupancy not measured: no permission to read GPU performance "
       "counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); tracing continues.",
       {"NVreg_RestrictProfilingToAdminUsers=0", "CAP_PERFMON", "CAP_SYS_ADMIN",
        "ERR_NVGPUCTRPERM"}},
      {"no permission at cuptiProfilerInitialize", true,
       {"cuptiProfilerInitialize", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ""},
       "no-permission: cuptiProfilerInitialize failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
       "occtrace: achieved occupancy not measured: no permission",
       {"NVreg_RestrictProfilingToAdminUsers=0", "CAP_PERFMON"}},
      {"unsupported device", false,
       {"cuptiProfilerDeviceSupported", CUPTI_ERROR_NOT_SUPPORTED,
        "architecture unsupported, sli supported, vGpu supported"},
       "unsupported: cuptiProfilerDeviceSupported failed: CUPTI_ERROR_NOT_SUPPORTED "
       "(architecture unsupported, sli supported, vGpu supported)",
       "occtrace: achieved occupancy not measured on this device: cuptiProfilerDeviceSupported "
       "failed: CUPTI_ERROR_NOT_SUPPORTED (architecture unsupported",
       {"; tracing continues"}},
  };
  for (const SetupFailure& failure : failures) {
    for (const char* where : {"at CONTEXT_CREATED", "on the setup thread", "at launch"}) {
      SCOPED_TRACE(std::string(failure.name) + ", " + where);
      const bool eager = std::string_view(where) != "at launch";
      AchievedConfig config = Rig::SampleConfig();
      config.background_setup = std::string_view(where) == "on the setup thread";
      Rig rig(config);
      (failure.at_initialize ? rig.device->initialize_error : rig.device->create_error) =
          failure.error;
      ::testing::internal::CaptureStderr();
      if (eager) {
        rig.ContextCreated(Ctx(1));
      } else {
        Launch(rig.profiler.get(), Ctx(1), 0xa0).Run();  // set up lazily at the first launch
      }
      std::vector<std::thread> threads;
      for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
          for (int i = 0; i < 50; ++i) {
            Launch(rig.profiler.get(), Ctx(1), 0xa0, 1 + static_cast<uint32_t>(i + t)).Run();
          }
        });
      }
      for (std::thread& thread : threads) thread.join();
      rig.ContextCreated(Ctx(2));  // another device: no new attempt, no second line
      Launch(rig.profiler.get(), Ctx(2), 0xa0).Run();
      rig.profiler->Shutdown();
      const std::string err = ::testing::internal::GetCapturedStderr();

      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
      EXPECT_THAT(err, StartsWith(failure.line_start));
      for (const char* part : failure.line_has) EXPECT_THAT(err, HasSubstr(part));
      auto meta = rig.Meta();
      EXPECT_EQ(meta["achieved_status"], failure.status);
      EXPECT_EQ(meta["achieved_mode"], "sample");
      EXPECT_EQ(meta["achieved_launches_measured"], "0");
      EXPECT_TRUE(rig.Samples().empty());
      EXPECT_EQ(rig.device->starts.load(), 0);
      // One attempt for the run, not one per launch or per context.
      EXPECT_EQ(rig.device->initializes.load() + rig.device->creates.load(),
                failure.at_initialize ? 1 : 2);
    }
  }
}

}  // namespace
}  // namespace occ::inj
