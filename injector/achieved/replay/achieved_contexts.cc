#include "injector/achieved/replay/achieved_contexts.h"

#include <pthread.h>

#include <algorithm>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "injector/common/errors.h"

namespace occ::inj {
namespace {

constexpr int kYieldsBeforeTimedWait = 16;

// Table versions start at 1: a thread's initial version 0 matches no profiler.
std::atomic<uint64_t> g_next_contexts_version{1};

}  // namespace

AchievedContexts::AchievedContexts(AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
                                   NanoClock clock, int64_t start_ns)
    : device_(std::move(device)),
      clock_(clock),
      policy_(config, std::move(clock), start_ns),
      context_wait_(config.context_wait_ns),
      contexts_version_(g_next_contexts_version.fetch_add(1, std::memory_order_relaxed)) {}

void AchievedContexts::ShutDownContexts() {
  std::unordered_map<CUcontext, std::shared_ptr<ContextState>> contexts;
  {
    std::lock_guard<std::mutex> lock(contexts_mutex_);
    if (shut_down_) return;
    shut_down_ = true;
    contexts.swap(contexts_);
    BumpContextsVersionLocked();
  }
  status_.Stop();
  for (auto& [ctx, state] : contexts) Retire(state.get());
  if (!WaitForSetupThreads()) left_enabled_.store(true, std::memory_order_relaxed);
  // Not under a profiler that a stuck launch may still be using.
  if (!left_enabled_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(session_mutex_);
    EndProfilerSessionLocked();
  }
}

void AchievedContexts::BumpContextsVersionLocked() {
  contexts_version_.store(g_next_contexts_version.fetch_add(1, std::memory_order_relaxed),
                          std::memory_order_release);
}

std::shared_ptr<ContextState> AchievedContexts::FindOrCreateContext(CUcontext ctx,
                                                                    uint64_t* version,
                                                                    bool* created) {
  if (ctx == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(contexts_mutex_);
  if (shut_down_) return nullptr;
  auto [it, inserted] = contexts_.try_emplace(ctx);
  if (inserted) {
    it->second = std::make_shared<ContextState>();
    BumpContextsVersionLocked();
  }
  if (version != nullptr) *version = contexts_version_.load(std::memory_order_relaxed);
  if (created != nullptr) *created = inserted;
  return it->second;
}

void AchievedContexts::DestroyContext(CUcontext ctx) {
  std::shared_ptr<ContextState> state;
  {
    std::lock_guard<std::mutex> lock(contexts_mutex_);
    auto it = contexts_.find(ctx);
    if (it == contexts_.end()) return;
    state = std::move(it->second);
    contexts_.erase(it);
    BumpContextsVersionLocked();
  }
  Retire(state.get());
}

void AchievedContexts::Retire(ContextState* state) {
  std::unique_lock<std::timed_mutex> lock(state->mutex, std::defer_lock);
  if (!lock.try_lock_for(context_wait_)) {
    NoteContextWaitTimeout();
    left_enabled_.store(true, std::memory_order_relaxed);
    return;
  }
  DropProfiler(state);
  state->parked.store(false, std::memory_order_release);
}

void AchievedContexts::WaitForBusyProfiler(ContextState* state) {
  constexpr int64_t kFirstWaitNs = 1'000'000'000;
  constexpr int64_t kLongestWaitNs = 64'000'000'000;
  state->busy_backoff_ns = std::clamp(state->busy_backoff_ns * 2, kFirstWaitNs, kLongestWaitNs);
  state->busy_until_ns.store(clock_() + state->busy_backoff_ns, std::memory_order_relaxed);
  state->parked.store(true, std::memory_order_release);
  if (busy_waits_.fetch_add(1, std::memory_order_relaxed) == 0) {
    LogLine("achieved occupancy: the GPU's profiler is in use by another process "
            "(CUPTI_ERROR_HARDWARE_BUSY); sampling waits and tries again, tracing continues");
  }
}

void AchievedContexts::DropProfiler(ContextState* state) {
  if (!state->profiler) return;
  state->profiler->Disable();
  state->profiler.reset();
  ReleaseProfilerSession();
}

std::unique_lock<std::timed_mutex> AchievedContexts::LockContext(ContextState* state) {
  std::unique_lock<std::timed_mutex> lock(state->mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    if (state->stalled.load(std::memory_order_acquire)) return lock;
    // Most holds last one launch call (a few us). A timed futex wait arms a kernel timer
    // that costs more than that: yield a few times first (with 4 threads launching into one
    // enabled context, 0.89x the old untimed lock's ns/launch instead of 1.15x).
    for (int i = 0; i < kYieldsBeforeTimedWait && !lock.try_lock(); ++i) {
      std::this_thread::yield();
    }
    if (!lock.owns_lock() && !lock.try_lock_for(context_wait_)) {
      if (!state->stalled.exchange(true, std::memory_order_acq_rel)) NoteContextWaitTimeout();
      return lock;
    }
  }
  if (state->stalled.load(std::memory_order_relaxed)) {
    state->stalled.store(false, std::memory_order_release);
  }
  return lock;
}

void AchievedContexts::NoteContextWaitTimeout() {
  if (context_wait_timeouts_.fetch_add(1, std::memory_order_relaxed) > 0) return;
  LogLine(
      "achieved occupancy: a kernel launch held a context's profiler lock for more than %.1f "
      "s (its EXIT callback may never come, e.g. CUPTI was finalized by another client); "
      "launches in that context go ahead without it and unmeasured",
      static_cast<double>(context_wait_.count()) / 1e9);
}

void AchievedContexts::AcquireProfilerSession() {
  std::lock_guard<std::mutex> lock(session_mutex_);
  ++enabled_profilers_;
}

void AchievedContexts::ReleaseProfilerSession() {
  std::lock_guard<std::mutex> lock(session_mutex_);
  --enabled_profilers_;
  if (enabled_profilers_ > 0 || !policy_.config().park_deinitializes) return;
  if (EndProfilerSessionLocked()) session_ends_.fetch_add(1, std::memory_order_relaxed);
}

bool AchievedContexts::EndProfilerSessionLocked() {
  if (!profiler_session_) return false;
  device_->Deinitialize();
  profiler_session_ = false;
  return true;
}

bool AchievedContexts::EnsureProfilerSession(ProfilerError* error) {
  std::lock_guard<std::mutex> lock(session_mutex_);
  if (profiler_session_) return true;
  profiler_session_ = device_->Initialize(error);
  return profiler_session_;
}

bool AchievedContexts::Enable(ContextState* state, CUcontext ctx, ProfilerError* error) {
  if (EnsureProfilerSession(error)) {
    state->profiler = device_->CreateContextProfiler(ctx, error);
  }
  if (!state->profiler) return false;
  AcquireProfilerSession();
  state->ever_enabled = true;
  state->parked.store(false, std::memory_order_release);
  status_.SetProfiler(state->profiler->chip_name(), state->profiler->metrics());
  return true;
}

void AchievedContexts::OnContextCreated(CUcontext ctx) {
  bool created = false;
  std::shared_ptr<ContextState> state = FindOrCreateContext(ctx, nullptr, &created);
  if (!state || !created || !BeginSetup()) return;
  if (policy_.config().background_setup && StartSetupThread(state, ctx)) return;  // it ends the setup
  {
    std::unique_lock<std::timed_mutex> lock = LockContext(state.get());
    ProfilerError error;
    if (lock.owns_lock() && state->parked.load(std::memory_order_relaxed) &&
        !Unpark(state.get(), ctx, &error)) {
      FailContext(state.get(), error);
    }
  }
  EndSetup();
}

bool AchievedContexts::BeginSetup() {
  std::lock_guard<std::mutex> lock(setup_threads_mutex_);
  if (setup_threads_closed_) return false;
  ++setup_threads_running_;
  return true;
}

void AchievedContexts::EndSetup() {
  std::lock_guard<std::mutex> lock(setup_threads_mutex_);
  --setup_threads_running_;
  setup_threads_done_.notify_all();  // under the mutex: the waiter may destroy *this next
}

// Called inside a setup begun by BeginSetup, which the thread ends (or the caller, when no
// thread could start).
bool AchievedContexts::StartSetupThread(std::shared_ptr<ContextState> state, CUcontext ctx) {
  try {
    std::thread([this, state = std::move(state), ctx]() mutable {
      pthread_setname_np(pthread_self(), "occtrace-setup");
      SetUpInBackground(state.get(), ctx);
      state.reset();  // nothing of this thread touches the context state after this
      EndSetup();
    }).detach();
  } catch (const std::system_error&) {
    return false;  // no thread: the caller sets up on its own thread
  }
  return true;
}

// On the setup thread. It holds the context's mutex throughout, so a launch that is to be
// measured meanwhile waits for the setup (bounded, LockContext) and then finds the profiler
// ready and warm; launches not to be measured go ahead, since a parked context needs no lock
// and an enabled-but-stopped profiler measures nothing. Enable unparks the context before
// the warm-up Start, so from then on every launch waits rather than run inside the warm-up
// range (except one already past its parked check: the known window in
// achieved_launch_path.h).
void AchievedContexts::SetUpInBackground(ContextState* state, CUcontext ctx) {
  std::unique_lock<std::timed_mutex> lock(state->mutex, std::defer_lock);
  if (!lock.try_lock_for(context_wait_)) return;  // a launch will set it up if it needs it
  // Already set up by a launch that got here first, retired, or measurement stopped.
  if (!state->parked.load(std::memory_order_relaxed) || state->ever_enabled ||
      status_.disabled()) {
    return;
  }
  const int64_t start_ns = clock_();
  ProfilerError error;
  const bool ready = Enable(state, ctx, &error) && state->profiler->WarmUp(&error);
  background_setup_ns_.fetch_add(clock_() - start_ns, std::memory_order_relaxed);
  if (!ready) FailContext(state, error);
}

bool AchievedContexts::WaitForSetupThreads() {
  std::unique_lock<std::mutex> lock(setup_threads_mutex_);
  setup_threads_closed_ = true;
  return setup_threads_done_.wait_for(lock, context_wait_,
                                      [this] { return setup_threads_running_ == 0; });
}

}  // namespace occ::inj
