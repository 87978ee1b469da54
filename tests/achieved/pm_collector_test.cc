// The PM-sampling collector (injector/achieved/pm/pm_collector.h) on CPU: its real decode thread, state
// table, image pool, overflow handling, status lines and OCC_META rows, over a stand-in for
// CUPTI's PM sampling (the PmBackend seam of pm_device.h). The stand-in produces samples at a
// fixed count per decode, can report an overflow, refuse permission or fail a call, and records
// the order of what the collector asked of it.
#include "injector/achieved/pm/pm_collector.h"
#include "injector/writer/trace_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace occ::inj {
namespace {

using namespace std::chrono_literals;

struct FakePmState {
  std::mutex mutex;
  std::vector<std::string> calls;  // "open 0", "start 0", "decode 0", "stop 0", "disable 0"
  ProfilerError open_error;        // Open fails with this when set
  size_t samples_per_decode = 3;
  int overflow_at_decode = -1;     // this decode (0-based, over all samplers) reports an overflow
  bool fail_restarts = false;      // a sampler's second Start fails (CUPTI_ERROR_UNKNOWN)
  int decodes = 0;
  int opens = 0;
  uint64_t next_time = 1000;
  // Set: samples follow this stand-in GPU clock instead (one per interval while started, as the
  // GPU-time trigger takes them), and an overflow loses all but the first of its decode's samples.
  std::function<int64_t()> clock;
  int64_t interval_ns = 0;
  uint64_t samples_lost_to_overflow = 0;
  std::atomic<bool> gpu_active{true};  // what the evaluator's spot check finds
  std::atomic<int> spot_checks{0};

  void Log(const std::string& call) {
    std::lock_guard lock(mutex);
    calls.push_back(call);
  }
  int Count(const std::string& call) {
    std::lock_guard lock(mutex);
    return static_cast<int>(std::count(calls.begin(), calls.end(), call));
  }
  std::vector<std::string> Calls() {
    std::lock_guard lock(mutex);
    return calls;
  }
};

class FakeEvaluator final : public PmEvaluator {
 public:
  explicit FakeEvaluator(std::shared_ptr<FakePmState> state) : state_(std::move(state)) {}
  bool AnyActive(const std::vector<uint8_t>&, const std::vector<uint32_t>& samples, bool* active) override {
    EXPECT_FALSE(samples.empty());
    ++state_->spot_checks;
    *active = state_->gpu_active.load();
    return true;
  }
  void Evaluate(const std::vector<uint8_t>&, const std::vector<uint32_t>& samples, std::vector<PmValues>* values,
                std::vector<uint8_t>* failed, std::string*) override {
    values->assign(samples.size(), PmValues{});
    failed->assign(samples.size(), 0);
  }

 private:
  std::shared_ptr<FakePmState> state_;
};

class FakeSampler final : public PmDeviceSampler {
 public:
  FakeSampler(std::shared_ptr<FakePmState> state, uint32_t device) : state_(std::move(state)), device_(device) {}
  bool Start(ProfilerError* error) override {
    state_->Log("start " + std::to_string(device_));
    std::lock_guard lock(state_->mutex);
    if (state_->fail_restarts && starts_++ > 0) {
      *error = ProfilerError{"cuptiPmSamplingStart", CUPTI_ERROR_UNKNOWN, ""};
      return false;
    }
    if (state_->clock) {
      started_ = true;
      next_sample_ = state_->clock();
    }
    return true;
  }
  bool Stop(ProfilerError*) override {
    state_->Log("stop " + std::to_string(device_));
    std::lock_guard lock(state_->mutex);
    if (state_->clock && started_) {
      started_ = false;
      stopped_at_ = state_->clock();
    }
    return true;
  }
  bool NewImage(std::vector<uint8_t>* image, ProfilerError*) override {
    image->assign(64, 0);
    return true;
  }
  bool Decode(std::vector<uint8_t>* image, std::vector<PmImage::Span>* spans, PmDecodeResult* result,
              ProfilerError*) override {
    state_->Log("decode " + std::to_string(device_));
    spans->clear();
    *result = PmDecodeResult{};
    std::lock_guard lock(state_->mutex);
    (*image)[0] = 1;  // "decoded into"
    const int decode = state_->decodes++;
    result->overflow = decode == state_->overflow_at_decode;
    if (state_->clock) {
      const int64_t until = started_ ? state_->clock() : stopped_at_;
      for (; next_sample_ + state_->interval_ns <= until; next_sample_ += state_->interval_ns) {
        spans->push_back({static_cast<uint64_t>(next_sample_), static_cast<uint64_t>(next_sample_ + state_->interval_ns)});
      }
      // The first decode from overflow_at_decode on with many samples (the hardware buffer
      // filled up): all but the first are lost.
      result->overflow = state_->overflow_at_decode >= 0 && decode >= state_->overflow_at_decode &&
                         state_->samples_lost_to_overflow == 0 && spans->size() >= 8;
      if (result->overflow) {
        const size_t kept = 1;
        state_->samples_lost_to_overflow += spans->size() - kept;
        spans->resize(kept);
      }
    } else {
      for (size_t i = 0; i < state_->samples_per_decode; ++i) {
        spans->push_back({state_->next_time, state_->next_time + 50});
        state_->next_time += 50;
      }
    }
    result->completed_samples = spans->size();
    return true;
  }
  void Disable() override {
    if (!disabled_) state_->Log("disable " + std::to_string(device_));
    disabled_ = true;
  }
  std::shared_ptr<PmEvaluator> evaluator() const override { return evaluator_; }
  const std::vector<const char*>& metrics() const override { return metrics_; }
  const std::string& chip_name() const override { return chip_; }

 private:
  std::shared_ptr<FakePmState> state_;
  uint32_t device_;
  bool disabled_ = false;
  int starts_ = 0;
  bool started_ = false;
  int64_t next_sample_ = 0;
  int64_t stopped_at_ = 0;
  std::shared_ptr<PmEvaluator> evaluator_ = std::make_shared<FakeEvaluator>(state_);
  std::vector<const char*> metrics_ = {kPmCyclesActiveMetric, kPmWarpsActiveMetric};
  std::string chip_ = "GH100";
};

class FakeBackend final : public PmBackend {
 public:
  explicit FakeBackend(std::shared_ptr<FakePmState> state) : state_(std::move(state)) {}
  bool DeviceOf(void* context, uint32_t* device_index) override {
    *device_index = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(context) / 0x1000);
    return true;
  }
  std::unique_ptr<PmDeviceSampler> Open(uint32_t device_index, const PmSettings&, ProfilerError* error) override {
    state_->Log("open " + std::to_string(device_index));
    {
      std::lock_guard lock(state_->mutex);
      ++state_->opens;
      if (!state_->open_error.ok()) {
        *error = state_->open_error;
        return nullptr;
      }
    }
    return std::make_unique<FakeSampler>(state_, device_index);
  }
  bool Initialize(ProfilerError*) override { return true; }
  void Deinitialize() override {}

 private:
  std::shared_ptr<FakePmState> state_;
};

void* Ctx(uintptr_t device) { return reinterpret_cast<void*>(0x1000 * device + 0x10); }

// What the sink received, with a way to wait for it.
struct Received {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<PmImage> images;
  bool hold = true;  // keep the images (as a writer that has not got to them yet)
  size_t samples = 0;          // in images with counter data
  size_t dropped_samples = 0;  // spans only: no image was free for them

  PmCollector::Sink sink() {
    return [this](PmImage&& image) {
      std::lock_guard lock(mutex);
      if (image.dropped) {
        EXPECT_TRUE(image.counter_data.empty());
        dropped_samples += image.spans.size();
      } else {
        samples += image.spans.size();
        if (hold) images.push_back(std::move(image));
      }
      changed.notify_all();
    };
  }
  bool WaitForSamples(size_t n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return samples >= n; });
  }
};

PmCollectorSettings FastSettings() {
  PmCollectorSettings settings;
  settings.decode_period_ns = 1'000'000;  // 1 ms
  settings.max_images = 4;
  return settings;
}

// Every row's key goes through the writer's check (declared in schema/meta_keys.h;
// tests/injector/meta_keys_checked.cc fails the run otherwise).
std::string MetaValue(const std::vector<std::pair<std::string, std::string>>& meta, const std::string& name) {
  std::string found = "<absent>";
  for (const auto& [key, value] : meta) {
    CheckMetaKey(key);
    if (key == name) found = value;
  }
  return found;
}

// A budget that a fast decode loop spends at once: 20 % of GPU-busy time, nothing free, 5 ms
// windows.
PmCollectorSettings BudgetedSettings() {
  PmCollectorSettings settings = FastSettings();
  settings.policy.budget_fraction = 0.2;
  settings.policy.free_ns = 0;
  settings.policy.window_ns = 5'000'000;
  return settings;
}

// A collector over a fresh stand-in, its sink passing the images straight back (a writer that
// keeps up).
struct Rig {
  explicit Rig(const PmCollectorSettings& settings, std::function<void(FakePmState&)> prepare = {},
               PmCollector::Clock clock = {})
      : state(std::make_shared<FakePmState>()) {
    if (prepare) prepare(*state);
    received.hold = false;
    collector = std::make_unique<PmCollector>(received.sink(), std::make_unique<FakeBackend>(state), settings,
                                              PmCollector::OnSampling{}, std::move(clock));
  }
  std::shared_ptr<FakePmState> state;
  Received received;
  std::unique_ptr<PmCollector> collector;
};

PmWorkReport Wanting(uint32_t wanting, int64_t busy_ns, uint32_t device = 0) {
  PmWorkReport report;
  report.devices.push_back({device, wanting, 0, 0, busy_ns});
  return report;
}

// The writer's side of a GPU that works all the time on configurations that keep wanting
// samples: reports every millisecond, GPU-busy time `busy_per_ns` x the time since it began.
struct BusyWriter {
  BusyWriter(PmCollector* collector, double busy_per_ns) {
    thread = std::thread([this, collector, busy_per_ns] {
      const auto began = std::chrono::steady_clock::now();
      while (!stop.load()) {
        const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began);
        collector->NoteWork(Wanting(1, static_cast<int64_t>(busy_per_ns * static_cast<double>(elapsed.count()))));
        std::this_thread::sleep_for(1ms);
      }
    });
  }
  ~BusyWriter() { Stop(); }
  void Stop() {
    stop.store(true);
    if (thread.joinable()) thread.join();
  }
  std::atomic<bool> stop{false};
  std::thread thread;
};

// Waits (up to 10 s) until `done` holds.
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 10'000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// Waits (up to 10 s) until the collector has paused and resumed `rounds` times.
bool WaitForRounds(const PmCollector& collector, uint64_t rounds) {
  return WaitFor([&] { return collector.pauses() >= rounds && collector.resumes() >= rounds; });
}

// Set up at the first context and left armed (stopped and drained); a module load (new code
// running) starts it and samples flow; once the process ends nothing more is called in CUPTI: no
// decode, no Stop, no Disable (pm_collector.cc says what each did at exit on an H100).
TEST(PmCollectorTest, ArmedAtTheFirstContextSamplesOnceNewCodeRunsAndShutdownCallsNothingInCupti) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  received.hold = false;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  EXPECT_EQ(state->Count("open 0"), 0) << "nothing is set up before a context exists";
  collector.NoteContext(Ctx(0));
  collector.NoteContext(Ctx(0));  // a second context on the same device: still one sampler
  EXPECT_EQ(state->Calls(), (std::vector<std::string>{"open 0", "start 0", "decode 0", "stop 0", "decode 0"}));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(state->Count("decode 0"), 2) << "armed: no periodic decode";
  collector.NoteNewCode();
  ASSERT_TRUE(received.WaitForSamples(30));
  EXPECT_EQ(state->Count("open 0"), 1);
  EXPECT_EQ(state->Count("start 0"), 2) << "a restart is a Start, not a new set-up";
  const size_t calls_before = state->Calls().size();
  collector.Shutdown();
  const std::vector<std::string> calls = state->Calls();
  // A decode already under way when Shutdown came may finish; nothing starts after it.
  for (size_t i = calls_before; i < calls.size(); ++i) EXPECT_EQ(calls[i].rfind("decode", 0), 0u) << calls[i];
  EXPECT_LE(calls.size(), calls_before + 1);
  EXPECT_EQ(state->Count("stop 0"), 1) << "only the set-up's";
  EXPECT_EQ(state->Count("disable 0"), 0);
  const auto meta = collector.SessionMeta();
  EXPECT_EQ(MetaValue(meta, "pm_status"), "on");
  EXPECT_EQ(MetaValue(meta, "achieved_mode"), "pm");
  EXPECT_EQ(MetaValue(meta, "pm_interval_ns"), "50000");
  EXPECT_EQ(MetaValue(meta, "pm_overflows"), "0");
  EXPECT_EQ(MetaValue(meta, "pm_metrics"), "sm__cycles_active.sum,sm__warps_active.sum");
  EXPECT_EQ(MetaValue(meta, "pm_samples_decoded"), std::to_string(received.samples));
  EXPECT_EQ(MetaValue(meta, "pm_new_code_signals"), "1");
  EXPECT_EQ(MetaValue(meta, "pm_starts"), "1");
  // After shutdown nothing new is set up.
  collector.NoteContext(Ctx(1));
  EXPECT_EQ(state->Count("open 1"), 0);
}

TEST(PmCollectorTest, EachDeviceGetsItsOwnSampler) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  received.hold = false;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  collector.NoteContext(Ctx(0));
  collector.NoteContext(Ctx(1));
  collector.NoteNewCode();
  ASSERT_TRUE(received.WaitForSamples(30));
  ASSERT_TRUE(WaitFor([&] { return state->Count("start 1") == 2; }));
  collector.Shutdown();
  EXPECT_EQ(state->Count("open 0"), 1);
  EXPECT_EQ(state->Count("open 1"), 1);
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_devices_sampled"), "2");
}

TEST(PmCollectorTest, AnOverflowIsCountedAndSamplingStartsAfresh) {
  auto state = std::make_shared<FakePmState>();
  state->overflow_at_decode = 3;  // the second periodic decode (the set-up made two)
  Received received;
  received.hold = false;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  collector.NoteContext(Ctx(0));
  collector.NoteNewCode();
  ASSERT_TRUE(received.WaitForSamples(60));
  collector.Shutdown();
  EXPECT_EQ(collector.overflows(), 1u);
  EXPECT_EQ(state->Count("open 0"), 2) << "disabled and set up again after the overflow";
  EXPECT_EQ(state->Count("disable 0"), 1) << "the first sampler, at the overflow";
  const auto meta = collector.SessionMeta();
  EXPECT_EQ(MetaValue(meta, "pm_overflows"), "1");
  EXPECT_EQ(MetaValue(meta, "pm_reopens"), "1");
  EXPECT_EQ(MetaValue(meta, "pm_status"), "on") << "an overflow loses samples, not the collector";
}

TEST(PmCollectorTest, WithoutCounterPermissionItSaysSoOnceAndTheTraceGoesOn) {
  auto state = std::make_shared<FakePmState>();
  state->open_error = ProfilerError{"cuptiPmSamplingEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ""};
  Received received;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  ::testing::internal::CaptureStderr();
  collector.NoteContext(Ctx(0));
  collector.NoteContext(Ctx(1));
  collector.NoteNewCode();
  for (int i = 0; i < 1000 && state->Count("open 1") == 0; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(5ms);
  const std::string err = ::testing::internal::GetCapturedStderr();
  collector.Shutdown();
  EXPECT_EQ(collector.status(), "no-permission");
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_status"), "no-permission");
  // One line for the run, however many devices refused.
  size_t lines = 0;
  for (size_t at = err.find("occtrace: "); at != std::string::npos; at = err.find("occtrace: ", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << err;
  EXPECT_NE(err.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos) << err;
  EXPECT_EQ(received.samples, 0u);
  EXPECT_EQ(state->Count("start 0"), 0);
}

// With the writer holding every image, decodes go on into the spare: the hardware buffer is
// drained, memory stays bounded, and the lost samples' spans still reach the writer (to be
// counted as lost idle or lost busy).
// The writer is the slower side, so the pool is the flow control: a writer that holds every
// image stops sampling (pm_throttles) before a decode finds none, so no sample is dropped and
// memory stays bounded; once the writer gives half the pool back, sampling starts again.
TEST(PmCollectorTest, AWriterThatFallsBehindStopsSamplingInsteadOfDroppingSamples) {
  auto state = std::make_shared<FakePmState>();
  Received received;  // holds every image until told otherwise
  PmCollectorSettings settings = FastSettings();
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), settings);
  collector.NoteContext(Ctx(0));
  collector.NoteNewCode();
  for (int i = 0; i < 5000 && collector.throttles() == 0; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_GT(collector.throttles(), 0u) << "a pool held by the writer must stop sampling";
  const int decodes_when_throttled = state->Count("decode 0");
  std::this_thread::sleep_for(50ms);  // ten decode periods: stopped, nothing more to decode
  EXPECT_EQ(state->Count("decode 0"), decodes_when_throttled) << "throttled: stopped and drained";
  {
    std::lock_guard lock(received.mutex);
    EXPECT_LE(received.images.size(), settings.max_images) << "at most max_images in flight";
    received.images.clear();  // the writer caught up: every slot goes back
    received.hold = false;
  }
  const size_t before = received.samples;
  ASSERT_TRUE(received.WaitForSamples(before + 30)) << "half the pool back: sampling starts again";
  collector.Shutdown();
  const auto meta = collector.SessionMeta();
  EXPECT_EQ(MetaValue(meta, "pm_samples_lost"), "0");
  EXPECT_EQ(std::stoull(MetaValue(meta, "pm_samples_decoded")), received.samples + received.dropped_samples);
  EXPECT_EQ(MetaValue(meta, "pm_throttles"), std::to_string(collector.throttles()));
}

TEST(PmCollectorTest, ImagesGoBackToThePoolWhenTheWriterIsDoneWithThem) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  collector.NoteContext(Ctx(0));
  collector.NoteNewCode();
  ASSERT_TRUE(received.WaitForSamples(12));
  {
    std::lock_guard lock(received.mutex);
    received.images.clear();  // the writer evaluated them
    received.hold = false;
  }
  const size_t before = received.samples;
  ASSERT_TRUE(received.WaitForSamples(before + 30));
  collector.Shutdown();
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_samples_lost"), "0");
}

// Set-up happens on the thread creating the context, before NoteContext returns, with a first
// decode: by then CUPTI's teardown-at-exit state exists, and on_sampling re-registers the exit
// handler (pm_collector.h). Nothing wants samples yet, so it is stopped and drained again
// (armed). A second context on the device sets nothing up again.
TEST(PmCollectorTest, SetUpIsDoneWhenTheContextCallbackReturnsThenOnSamplingIsCalled) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  received.hold = false;
  std::vector<std::string> calls_at_on_sampling;
  int on_sampling = 0;
  PmCollectorSettings settings = FastSettings();
  settings.decode_period_ns = 3'600'000'000'000;  // no periodic decode during the test
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), settings, [&] {
    ++on_sampling;
    calls_at_on_sampling = state->Calls();
  });
  collector.NoteContext(Ctx(0));
  EXPECT_EQ(on_sampling, 1);
  EXPECT_EQ(calls_at_on_sampling, (std::vector<std::string>{"open 0", "start 0", "decode 0", "stop 0", "decode 0"}));
  EXPECT_EQ(received.samples, 6u) << "both decodes' samples reach the sink";
  collector.NoteContext(Ctx(0));
  EXPECT_EQ(on_sampling, 1);
  EXPECT_EQ(state->Count("open 0"), 1);
  collector.Shutdown();
}

// cudaDeviceReset / cuCtxDestroy of a device's last context: the samples so far are decoded and
// the device stopped and disabled while the context still exists; a new context sets it up
// again. Destroying one of two contexts changes nothing.
TEST(PmCollectorTest, TheLastContextsDestructionDecodesStopsAndDisablesAndANewContextSamplesAgain) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  received.hold = false;
  PmCollectorSettings settings = FastSettings();
  settings.decode_period_ns = 3'600'000'000'000;
  int on_sampling = 0;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), settings, [&] { ++on_sampling; });
  void* first = Ctx(0);
  void* second = reinterpret_cast<void*>(0x20);  // device 0 too (FakeBackend: address / 0x1000)
  collector.NoteContext(first);
  collector.NoteContext(second);
  collector.NoteNewCode();  // wakes the decode thread, which starts the device
  ASSERT_TRUE(WaitFor([&] { return state->Count("start 0") == 2; }));
  collector.NoteContextDestroyed(first);
  EXPECT_EQ(state->Count("stop 0"), 1) << "another context still lives on the device";
  collector.NoteContextDestroyed(second);
  EXPECT_EQ(state->Calls(), (std::vector<std::string>{"open 0", "start 0", "decode 0", "stop 0", "decode 0", "start 0",
                                                      "decode 0", "stop 0", "disable 0"}));
  EXPECT_EQ(received.samples, 9u);
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_retirements"), "1");
  collector.NoteContextDestroyed(second);  // unknown now: nothing
  collector.NoteContext(first);
  EXPECT_EQ(state->Count("open 0"), 2);
  EXPECT_EQ(on_sampling, 2);
  collector.Shutdown();
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_devices_sampled"), "1");
}

// An armed device's last context: drained when it stopped, so disabled without a decode.
TEST(PmCollectorTest, AnArmedDevicesLastContextIsDisabledWithoutADecode) {
  Rig rig(FastSettings());
  rig.collector->NoteContext(Ctx(0));
  rig.collector->NoteContextDestroyed(Ctx(0));
  EXPECT_EQ(rig.state->Calls(),
            (std::vector<std::string>{"open 0", "start 0", "decode 0", "stop 0", "decode 0", "disable 0"}));
  rig.collector->Shutdown();
}

// After Shutdown (the process is ending) a context's destruction calls nothing in CUPTI: cudart
// tears its contexts down after our exit handler.
TEST(PmCollectorTest, AContextDestroyedAfterShutdownCallsNothing) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  received.hold = false;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  collector.NoteContext(Ctx(0));
  collector.NoteNewCode();
  collector.Shutdown();
  const size_t calls = state->Calls().size();
  collector.NoteContextDestroyed(Ctx(0));
  collector.NoteNewCode();
  EXPECT_EQ(state->Calls().size(), calls);
}

TEST(PmCollectorTest, ShutdownIsIdempotentAndWorksWithoutAnyContext) {
  auto state = std::make_shared<FakePmState>();
  Received received;
  PmCollector collector(received.sink(), std::make_unique<FakeBackend>(state), FastSettings());
  collector.Shutdown();
  collector.Shutdown();
  EXPECT_EQ(state->Calls().size(), 0u);
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_devices"), "0");
}

// The arm/start/stop logic against a stand-in clock: a compile-heavy start (a minute with no GPU
// work) samples nothing and spends nothing; new code starts sampling; configurations that keep
// running without enough samples keep it on; once all are covered it stops (and drains); a new
// configuration starts it again. Sampling time is the stand-in time between starts and stops.
TEST(PmCollectorTest, SamplingFollowsGpuWorkOnAStandInClock) {
  std::atomic<int64_t> now{0};
  PmCollectorSettings settings = FastSettings();
  settings.policy.new_code_ns = 1'000'000'000;
  Rig rig(settings, {}, [&] { return now.load(); });
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  now += 60'000'000'000;  // the compile
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(collector.sampled_ns(), 0);
  EXPECT_EQ(collector.starts(), 0u);
  collector.NoteNewCode();  // at 60 s
  ASSERT_TRUE(WaitFor([&] { return collector.starts() == 1; }));
  now += 500'000'000;
  collector.NoteWork(Wanting(2, 400'000'000));  // the new code's records: two configurations want samples
  now += 1'000'000'000;                          // the new-code window is over; they still want
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(collector.stops(), 1u) << "only the set-up's stop: still sampling";
  collector.NoteWork(Wanting(0, 1'400'000'000));  // both have enough
  ASSERT_TRUE(WaitFor([&] { return collector.stops() == 2; }));
  const std::vector<std::string> calls = rig.state->Calls();
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls[calls.size() - 2], "stop 0");
  EXPECT_EQ(calls.back(), "decode 0") << "drained right after the stop";
  EXPECT_EQ(collector.sampled_ns(), 1'500'000'000) << "from the start at 60 s to the stop at 61.5 s";
  now += 10'000'000'000;  // idle: nothing sampled
  collector.NoteWork(Wanting(1, 1'500'000'000));  // a new configuration
  ASSERT_TRUE(WaitFor([&] { return collector.starts() == 2; }));
  now += 250'000'000;
  collector.Shutdown();
  EXPECT_EQ(collector.sampled_ns(), 1'750'000'000);
  const auto meta = collector.SessionMeta();
  EXPECT_EQ(MetaValue(meta, "pm_sampling_ms"), "1750");
  EXPECT_EQ(MetaValue(meta, "pm_gpu_busy_ms"), "1500");
  EXPECT_EQ(MetaValue(meta, "pm_pauses"), "0") << "stopping for want of work is not a budget pause";
}

// Spot checks (pm_sampling_policy.h): each decode of a sampling device is checked for an active
// SM. With the idle allowance spent (none here), a device found idle stops although new code
// wants samples; new code starts it again at once; a GPU found working samples on.
TEST(PmCollectorTest, AnIdleGpuStopsSamplingOnceTheIdleAllowanceIsSpent) {
  std::atomic<int64_t> now{0};
  PmCollectorSettings settings = FastSettings();
  settings.policy.idle_free_ns = 0;
  settings.policy.new_code_ns = 3'600'000'000'000;  // wanted throughout
  Rig rig(settings, [](FakePmState& state) { state.gpu_active = false; }, [&] { return now.load(); });
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  collector.NoteNewCode();
  ASSERT_TRUE(WaitFor([&] { return collector.starts() == 1 && collector.stops() == 2; }))
      << "the set-up's stop, then the idle one: " << collector.starts() << " starts, " << collector.stops() << " stops";
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(collector.starts(), 1u) << "stopped until a look, 250 ms of the stand-in clock away";
  collector.NoteNewCode();
  ASSERT_TRUE(WaitFor([&] { return collector.starts() == 2 && collector.stops() == 3; }));
  rig.state->gpu_active = true;
  now += 300'000'000;  // a look is due
  ASSERT_TRUE(WaitFor([&] { return collector.starts() == 3; }));
  const int checks = rig.state->spot_checks.load();
  ASSERT_TRUE(WaitFor([&] { return rig.state->spot_checks.load() >= checks + 5; }));
  EXPECT_EQ(collector.stops(), 3u) << "working: it samples on";
  collector.Shutdown();
  const auto meta = collector.SessionMeta();
  EXPECT_EQ(MetaValue(meta, "pm_idle_stops"), "2");
  EXPECT_GE(std::stoi(MetaValue(meta, "pm_spot_checks")), checks + 5);
  EXPECT_EQ(MetaValue(meta, "pm_spot_checks_untold"), "0");
  EXPECT_EQ(MetaValue(meta, "pm_idle_sampling_ms"), "0") << "2 decodes of 3 samples of 50 us";
}

// The accounting adds up: decoded + undecoded = sampling time / interval, and what the stand-in
// device lost to an overflow shows as undecoded, to within one sample per start and per stop.
TEST(PmCollectorTest, DecodedAndUndecodedSamplesAddUpToTheSamplingTime) {
  std::atomic<int64_t> now{0};
  PmCollectorSettings settings = FastSettings();
  settings.device.interval_ns = 1'000'000;       // 1 ms of stand-in time
  settings.policy.new_code_ns = 300'000'000;     // 300 samples' worth
  Rig rig(settings, [&](FakePmState& state) {
    state.clock = [&] { return now.load(); };
    state.interval_ns = 1'000'000;
    state.overflow_at_decode = 6;
  }, [&] { return now.load(); });
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  collector.NoteNewCode();
  ASSERT_TRUE(WaitFor([&] { return collector.starts() == 1; }));
  // The stand-in GPU clock runs 500 us per 200 us of sleep: a few samples per 1 ms decode
  // period.
  // Once, 20 ms at a time: the decode after it overflows.
  for (int step = 0; collector.stops() < 2 && now.load() < 10'000'000'000; ++step) {
    now += step == 50 ? 20'000'000 : 500'000;
    std::this_thread::sleep_for(200us);
  }
  ASSERT_EQ(collector.stops(), 2u);
  collector.Shutdown();
  const auto meta = collector.SessionMeta();
  const uint64_t expected = std::stoull(MetaValue(meta, "pm_samples_expected"));
  const uint64_t decoded = std::stoull(MetaValue(meta, "pm_samples_decoded"));
  const uint64_t undecoded = std::stoull(MetaValue(meta, "pm_samples_undecoded"));
  ASSERT_GE(rig.state->samples_lost_to_overflow, 7u);
  EXPECT_EQ(decoded, rig.received.samples);
  EXPECT_EQ(decoded + undecoded, expected);
  // The new-code window, and whatever the stand-in clock ran on before the pass that stopped it.
  EXPECT_GE(expected, 298u);
  const uint64_t starts = collector.starts() + std::stoull(MetaValue(meta, "pm_reopens"));
  EXPECT_NEAR(static_cast<double>(undecoded), static_cast<double>(rig.state->samples_lost_to_overflow),
              static_cast<double>(2 * starts));
}

// The CPU bound (pm_sampling_policy.h): once sampling has had its share of GPU-busy time, the
// device is stopped and drained, and nothing is decoded until a window fits; then it is
// started again. The meta says how long sampling was on.
TEST(PmCollectorTest, TheBudgetStopsSamplingAndAWindowStartsItAgain) {
  Rig rig(BudgetedSettings());
  auto& state = rig.state;
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  BusyWriter writer(&collector, 2.0);  // allowance 0.4 x the time: pauses, then windows fit
  ASSERT_TRUE(WaitForRounds(collector, 3));
  writer.Stop();
  collector.Shutdown();
  const std::vector<std::string> calls = state->Calls();
  bool stopped = false;
  int stops = 0, restarts = 0, decodes_while_stopped = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i] == "stop 0") {
      ASSERT_FALSE(stopped) << "stopped twice at " << i;
      ASSERT_LT(i + 1, calls.size());
      EXPECT_EQ(calls[i + 1], "decode 0") << "drained just after it stopped";
      stopped = true;
      decodes_while_stopped = -1;  // the drain
      ++stops;
    } else if (calls[i] == "start 0") {
      restarts += stopped ? 1 : 0;
      stopped = false;
    } else if (stopped && calls[i] == "decode 0") {
      EXPECT_EQ(++decodes_while_stopped, 0) << "decoded while stopped, at " << i;
    }
  }
  EXPECT_GE(stops, 4) << "the set-up's and three pauses";
  EXPECT_GE(restarts, 3);
  EXPECT_EQ(state->Count("open 0"), 1) << "a restart is a Start, not a new set-up";
  const auto meta = collector.SessionMeta();
  EXPECT_EQ(MetaValue(meta, "pm_budget"), "0.2");
  EXPECT_EQ(MetaValue(meta, "pm_pauses"), std::to_string(collector.pauses()));
  const long sampling_ms = std::stol(MetaValue(meta, "pm_sampling_ms"));
  const long run_ms = std::stol(MetaValue(meta, "pm_run_ms"));
  EXPECT_LT(sampling_ms, run_ms) << "paused part of the time";
  EXPECT_EQ(MetaValue(meta, "pm_status"), "on");
}

// Stopped, the decode thread sleeps instead of waking every decode period (1 ms here): on a GPU
// that polling cost 0.5 ms of CPU per ResNet-50 step. A module load wakes it at once (the
// longest sleep is 1 s).
TEST(PmCollectorTest, StoppedTheDecodeThreadSleepsUntilASignal) {
  Rig rig(FastSettings());
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  std::this_thread::sleep_for(20ms);
  const uint64_t wakeups = collector.wakeups();
  std::this_thread::sleep_for(300ms);
  EXPECT_LE(collector.wakeups() - wakeups, 1u) << "woke every period while armed";
  collector.NoteNewCode();
  for (int i = 0; i < 300 && collector.starts() == 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(collector.starts(), 1u) << "the module load did not wake the decode thread";
  collector.Shutdown();
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_wakeups"), std::to_string(collector.wakeups()));
}

// Paused with no report coming (the GPU stopped working), it sleeps too.
TEST(PmCollectorTest, PausedWithoutGpuWorkTheDecodeThreadSleeps) {
  PmCollectorSettings settings = BudgetedSettings();
  settings.policy.window_ns = 3'600'000'000'000;  // once paused, no window fits for an hour
  settings.policy.free_ns = 2'000'000;  // else the set-up's few microseconds spend it all
  Rig rig(settings);
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  BusyWriter writer(&collector, 1.0);
  ASSERT_TRUE(WaitFor([&] { return collector.pauses() == 1; }));
  writer.Stop();
  std::this_thread::sleep_for(20ms);
  const uint64_t wakeups = collector.wakeups();
  std::this_thread::sleep_for(300ms);
  EXPECT_LE(collector.wakeups() - wakeups, 1u) << "woke every period while paused";
  collector.Shutdown();
}

// A whole share never pauses; nor does a short program, sampled whole in the free time that
// comes before the share.
TEST(PmCollectorTest, AWholeShareOrTheFreeTimeSamplesWithoutPause) {
  PmCollectorSettings whole = BudgetedSettings();
  whole.policy.budget_fraction = 1.0;
  PmCollectorSettings free_hour = BudgetedSettings();
  free_hour.policy.free_ns = 3'600'000'000'000;
  for (const PmCollectorSettings& settings : {whole, free_hour}) {
    Rig rig(settings);
    rig.collector->NoteContext(Ctx(0));
    rig.collector->NoteNewCode();
    for (int i = 0; i < 10'000 && rig.state->Count("decode 0") < 50; ++i) std::this_thread::sleep_for(1ms);
    rig.collector->Shutdown();
    EXPECT_GE(rig.state->Count("decode 0"), 50);
    EXPECT_EQ(rig.state->Count("stop 0"), 1) << "the set-up's only";
    EXPECT_EQ(rig.collector->pauses(), 0u);
  }
}

// A sampler that will not start again is set up afresh (as after an overflow), and sampling
// goes on.
TEST(PmCollectorTest, ARestartThatFailsIsReopened) {
  Rig rig(BudgetedSettings(), [](FakePmState& state) { state.fail_restarts = true; });
  auto& state = rig.state;
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  BusyWriter writer(&collector, 2.0);
  ASSERT_TRUE(WaitForRounds(collector, 2));
  writer.Stop();
  collector.Shutdown();
  EXPECT_GE(state->Count("open 0"), 3) << "the first set-up and one per failed restart";
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_status"), "on");
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_reopens"), std::to_string(state->Count("open 0") - 1));
}

// The last context destroyed while paused: the sampler (drained when it paused) is disabled
// without another decode, and a new context samples again.
TEST(PmCollectorTest, AContextDestroyedWhilePausedIsDisabledWithoutADecode) {
  PmCollectorSettings settings = BudgetedSettings();
  settings.policy.window_ns = 3'600'000'000'000;  // once paused, it stays paused
  settings.policy.free_ns = 2'000'000;  // else the set-up's few microseconds spend it all
  Rig rig(settings);
  auto& state = rig.state;
  PmCollector& collector = *rig.collector;
  collector.NoteContext(Ctx(0));
  BusyWriter writer(&collector, 1.0);
  ASSERT_TRUE(WaitFor([&] { return collector.pauses() == 1; }));
  writer.Stop();
  const size_t decodes = static_cast<size_t>(state->Count("decode 0"));
  collector.NoteContextDestroyed(Ctx(0));
  EXPECT_EQ(state->Calls().back(), "disable 0");
  EXPECT_EQ(static_cast<size_t>(state->Count("decode 0")), decodes);
  EXPECT_EQ(MetaValue(collector.SessionMeta(), "pm_retirements"), "1");
  collector.NoteContext(Ctx(0));
  EXPECT_EQ(state->Count("open 0"), 2);
  collector.Shutdown();
}

}  // namespace
}  // namespace occ::inj
