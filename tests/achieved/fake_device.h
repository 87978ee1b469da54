// A ProfilerDevice (injector/achieved/replay/range_profiler.h) that needs no GPU, for CPU tests and the
// launch-path benchmark of the achieved profiler. It stands in only for what cannot run here
// (CUPTI's range profiler, cuStreamIsCapturing); the policy, callbacks, per-context state and
// error reporting above it are the real code. It records what the profiler asked of it, so
// tests can check serialization: which thread has a range started, and whether a launch ever
// ran while another thread's range was open.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "injector/achieved/replay/range_profiler.h"

namespace occ::inj::testing {

// Shared between the test and the device it handed to the profiler (which owns the device).
struct FakeDeviceState {
  // Set before use: every Initialize / CreateContextProfiler fails with this error when set.
  ProfilerError initialize_error;
  ProfilerError create_error;
  // What StopAndDecode reports for a measured launch.
  size_t ranges_per_measurement = 1;
  double occupancy_pct = 42.5;

  std::atomic<int> initializes{0};
  std::atomic<int> deinitializes{0};
  std::atomic<int> creates{0};
  std::atomic<int> disables{0};
  std::atomic<int> starts{0};
  std::atomic<int> stops{0};
  std::atomic<int> warmups{0};
  // SetLaunchCallbacks: the state CUPTI would be in, and how often it was switched.
  std::atomic<bool> launch_callbacks_on{false};
  std::atomic<int> launch_callback_switches{0};
  // False as for light tracing's device (CreateCuptiProfilerDevice(false)): another part of
  // occtrace keeps the launch callbacks on, and SetLaunchCallbacks leaves them alone.
  bool owns_launch_callbacks = true;
  // Thread that has a range started, default-constructed when none.
  std::atomic<std::thread::id> started_by{};

  std::mutex mutex;
  std::set<CUstream> capturing_streams;  // guarded by mutex

  // While held, CreateContextProfiler waits (as CUPTI's setup takes a while on a GPU), after
  // counting itself in `creates`: tests use it to catch a setup in progress.
  void HoldCreates() {
    std::lock_guard<std::mutex> lock(mutex);
    creates_held = true;
  }
  void ReleaseCreates() {
    std::lock_guard<std::mutex> lock(mutex);
    creates_held = false;
    creates_released.notify_all();
  }
  void WaitWhileCreatesHeld() {
    std::unique_lock<std::mutex> lock(mutex);
    creates_released.wait(lock, [this] { return !creates_held; });
  }
  bool creates_held = false;  // guarded by mutex
  std::condition_variable creates_released;
};

class FakeContextProfiler final : public ContextProfiler {
 public:
  explicit FakeContextProfiler(std::shared_ptr<FakeDeviceState> state) : state_(std::move(state)) {}
  ~FakeContextProfiler() override { Disable(); }

  bool Start(ProfilerError* /*error*/) override {
    state_->started_by.store(std::this_thread::get_id());
    state_->starts.fetch_add(1);
    return true;
  }
  bool StopAndDecode(Measurement* out, ProfilerError* /*error*/) override {
    state_->started_by.store(std::thread::id{});
    state_->stops.fetch_add(1);
    *out = Measurement{};
    out->num_ranges = state_->ranges_per_measurement;
    out->occupancy_pct = state_->occupancy_pct;
    out->warps_per_cycle = 0.425 * 64;
    out->cycles_active = 1000;
    out->gpu_time_ns = 2000;
    return true;
  }
  bool WarmUp(ProfilerError* /*error*/) override {
    state_->warmups.fetch_add(1);
    return true;
  }
  void Disable() override {
    if (disabled_) return;
    disabled_ = true;
    state_->disables.fetch_add(1);
  }
  const std::string& chip_name() const override { return chip_; }
  const std::vector<const char*>& metrics() const override { return metrics_; }

 private:
  std::shared_ptr<FakeDeviceState> state_;
  bool disabled_ = false;
  std::string chip_ = "GH100";
  std::vector<const char*> metrics_ = {kOccupancyMetric};
};

class FakeDevice final : public ProfilerDevice {
 public:
  explicit FakeDevice(std::shared_ptr<FakeDeviceState> state) : state_(std::move(state)) {}

  bool Initialize(ProfilerError* error) override {
    state_->initializes.fetch_add(1);
    if (!state_->initialize_error.ok()) {
      *error = state_->initialize_error;
      return false;
    }
    return true;
  }
  void Deinitialize() override { state_->deinitializes.fetch_add(1); }
  std::unique_ptr<ContextProfiler> CreateContextProfiler(CUcontext /*ctx*/, ProfilerError* error) override {
    state_->creates.fetch_add(1);
    state_->WaitWhileCreatesHeld();
    if (!state_->create_error.ok()) {
      *error = state_->create_error;
      return nullptr;
    }
    return std::make_unique<FakeContextProfiler>(state_);
  }
  bool StreamMayBeCapturing(CUstream stream) override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->capturing_streams.count(stream) > 0;
  }
  bool EnableContextCallbacks(CUpti_SubscriberHandle /*subscriber*/,
                              ProfilerError* /*error*/) override {
    return true;
  }
  bool SetLaunchCallbacks(CUpti_SubscriberHandle /*subscriber*/, bool on,
                          ProfilerError* /*error*/) override {
    if (!state_->owns_launch_callbacks) return true;
    state_->launch_callbacks_on.store(on);
    state_->launch_callback_switches.fetch_add(1);
    return true;
  }

 private:
  std::shared_ptr<FakeDeviceState> state_;
};

}  // namespace occ::inj::testing
