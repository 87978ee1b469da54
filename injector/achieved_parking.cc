#include "injector/achieved_parking.h"

#include <string>
#include <utility>

#include "injector/errors.h"

namespace occ::inj {
namespace {

// Launch-callback epochs, process-wide like the context table's versions.
std::atomic<uint64_t> g_next_callbacks_epoch{1};

}  // namespace

AchievedParking::AchievedParking(AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
                                 NanoClock clock, int64_t start_ns)
    : AchievedContexts(config, std::move(device), std::move(clock), start_ns),
      callbacks_epoch_(g_next_callbacks_epoch.fetch_add(1)) {}

void AchievedParking::SubscribeCallbacks(CUpti_SubscriberHandle subscriber) {
  ProfilerError error;
  const bool ok = device_->EnableContextCallbacks(subscriber, &error) &&
                  device_->SetLaunchCallbacks(subscriber, /*on=*/true, &error);
  if (!ok) {
    status_.FailWith("error: " + error.Message());
    return;
  }
  std::lock_guard<std::mutex> lock(callbacks_mutex_);
  subscriber_ = subscriber;
  callbacks_on_since_ns_.store(clock_(), std::memory_order_relaxed);
}

void AchievedParking::ListenForNewConfigurations() {
  if (launch_callbacks_on_.load(std::memory_order_relaxed) || status_.disabled()) return;
  ListenForLaunches();
}

void AchievedParking::QuietPark() {
  std::unique_lock<std::mutex> lock(callbacks_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || subscriber_ == nullptr || quiet_park_failed_ ||
      !launch_callbacks_on_.load(std::memory_order_relaxed)) {
    return;
  }
  if (enabled_profilers() != 0 || SetupThreadsRunning()) return;
  launch_callbacks_on_.store(false, std::memory_order_seq_cst);
  if (launches_awaiting_exit_.load(std::memory_order_seq_cst) != 0 || enabled_profilers() != 0) {
    // A launch holds a context until its EXIT: a later launch tries again.
    launch_callbacks_on_.store(true, std::memory_order_seq_cst);
    return;
  }
  ProfilerError error;
  if (!device_->SetLaunchCallbacks(subscriber_, /*on=*/false, &error)) {
    // Some may be off already: all on again, and parking stays at the profiler level.
    ProfilerError ignored;
    device_->SetLaunchCallbacks(subscriber_, /*on=*/true, &ignored);
    quiet_park_failed_ = true;
    NewCallbacksEpoch();
    launch_callbacks_on_.store(true, std::memory_order_seq_cst);
    LogLine("achieved occupancy: switching the launch callbacks off while parked failed (%s); "
            "they stay on", error.Message().c_str());
    return;
  }
  quiet_parks_.fetch_add(1, std::memory_order_relaxed);
}

bool AchievedParking::RestForDetach() {
  std::lock_guard<std::mutex> lock(callbacks_mutex_);
  if (cupti_away_) return true;
  // Quietly parked (or measuring stopped for the run): no launch can start a measurement
  // (ExitClaim), and none holds a context.
  const bool stopped = subscriber_ == nullptr || status_.disabled();
  if ((!stopped && launch_callbacks_on_.load(std::memory_order_seq_cst)) ||
      launches_awaiting_exit_.load(std::memory_order_seq_cst) != 0 || enabled_profilers() != 0) {
    return false;
  }
  if (!PauseSetups()) return false;
  EndProfilerSession();
  cupti_away_ = true;
  return true;
}

void AchievedParking::WakeAfterAttach(CUpti_SubscriberHandle subscriber) {
  bool listen = false;
  {
    std::lock_guard<std::mutex> lock(callbacks_mutex_);
    if (subscriber_ != nullptr) subscriber_ = subscriber;  // null: measurement never started
    if (!cupti_away_) return;
    cupti_away_ = false;
    ResumeSetups();
    listen = std::exchange(listen_at_attach_, false);
  }
  if (listen) ListenForLaunches();
}

void AchievedParking::ListenForLaunches() {
  std::lock_guard<std::mutex> lock(callbacks_mutex_);
  if (launch_callbacks_on_.load(std::memory_order_relaxed) || subscriber_ == nullptr) return;
  if (cupti_away_) {
    listen_at_attach_ = true;
    return;
  }
  NewCallbacksEpoch();
  ProfilerError error;
  if (!device_->SetLaunchCallbacks(subscriber_, /*on=*/true, &error)) {
    LogLine("achieved occupancy: switching the launch callbacks on again failed (%s); no "
            "further launches are measured", error.Message().c_str());
    return;
  }
  callbacks_on_since_ns_.store(clock_(), std::memory_order_relaxed);
  launch_callbacks_on_.store(true, std::memory_order_seq_cst);
  listens_.fetch_add(1, std::memory_order_relaxed);
}

void AchievedParking::NewCallbacksEpoch() {
  callbacks_epoch_.store(g_next_callbacks_epoch.fetch_add(1, std::memory_order_relaxed),
                         std::memory_order_release);
}

}  // namespace occ::inj
