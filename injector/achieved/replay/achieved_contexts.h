// AchievedContexts: each CUDA context's range profiler from CONTEXT_CREATED to
// CONTEXT_DESTROY_STARTING or shutdown -- the bottom layer of the range achieved-occupancy
// profiler (achieved_profiler.h shows the layers).
//
// Per context, the range profiler is enabled once with a one-pass config: on a setup thread
// started at CONTEXT_CREATED (it takes 0.2-0.65 s, which the program should not wait for),
// which also warms it up with a first Start, or by the first launch to be measured (Unpark).
// Every enabled context profiler counts as a user of CUPTI's profiler session
// (cuptiProfilerInitialize); with park_deinitializes the session ends when the last one is
// dropped.
//
// Takes: context events (OnContextCreated, DestroyContext, ShutDownContexts at shutdown), and
// from the layers above, requests to set a parked context's profiler up (Unpark), to drop it
// (DropProfiler: parking) or to stop measuring after a CUPTI error (FailContext).
// Gives: the table of contexts and its version, by which launching threads cache it
// (FindOrCreateContext, contexts_version_); the bounded wait for a context's mutex
// (LockContext); the collaborators every layer uses (device_, clock_, policy_, status_);
// and counters for OCC_META.
#pragma once

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "injector/achieved/achieved_policy.h"
#include "injector/achieved/replay/achieved_status.h"
#include "injector/achieved/replay/range_profiler.h"

namespace occ::inj {

struct ContextState {
  // Held from launch ENTER to EXIT while the context is not parked, around every change to
  // `profiler`, and by the setup thread for the whole background setup. Timed, so that every
  // wait for it is bounded (LockContext).
  std::timed_mutex mutex;
  std::unique_ptr<ContextProfiler> profiler;  // guarded by mutex; null when parked or failed
  // A new context starts parked (nothing set up yet); Retire leaves it unparked with no
  // profiler, which nothing re-enables. Written under mutex, read without it.
  std::atomic<bool> parked{true};
  bool ever_enabled = false;  // guarded by mutex: a later enable is an unpark
  // A wait for `mutex` timed out and its holder has not let go since: launches do not wait.
  std::atomic<bool> stalled{false};
  // Another process held the GPU's profiler (CUPTI_ERROR_HARDWARE_BUSY): no launch sets the
  // profiler up again before this clock_() time. 0: not waiting. Written under mutex.
  std::atomic<int64_t> busy_until_ns{0};
  int64_t busy_backoff_ns = 0;  // guarded by mutex: the last wait, doubled on each busy answer
};

class AchievedContexts {
 protected:
  // `clock` gives monotonic ns; wall time for the policy's budget counts from `start_ns`.
  AchievedContexts(AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
                   NanoClock clock, int64_t start_ns);
  ~AchievedContexts() = default;
  AchievedContexts(const AchievedContexts&) = delete;
  AchievedContexts& operator=(const AchievedContexts&) = delete;

  // CONTEXT_CREATED, on the creating thread: the profiler is set up now, on a setup thread of
  // our own (AchievedConfig::background_setup) or, failing that, here.
  void OnContextCreated(CUcontext ctx);
  // CONTEXT_DESTROY_STARTING: the context leaves the table and its profiler is dropped.
  void DestroyContext(CUcontext ctx);
  // Returns with no setup thread running, unless one outlived context_wait_ (then the profiler
  // session is left alone, as for a stuck launch; the tracer is never destroyed in a traced
  // program, so the thread cannot outlive the object there).
  void ShutDownContexts();

  // The context's state, created parked (its profiler is set up by OnContextCreated, or by the
  // first launch to be measured); nullptr after shutdown. *version: the table version the
  // answer belongs to; *created: whether this call added it.
  std::shared_ptr<ContextState> FindOrCreateContext(CUcontext ctx, uint64_t* version = nullptr,
                                                    bool* created = nullptr);

  // Waits for the context's mutex at most context_wait_ns. A holder keeping it longer has most
  // likely lost its EXIT callback (CUPTI finalized or our callbacks disabled by another client)
  // and may never let go: rather than hang the program, the launch goes ahead without the
  // mutex and unmeasured, and while the context is marked stalled later launches do not wait at
  // all. Whoever next gets the mutex clears the mark. If the holder was merely slow (a measured
  // kernel running longer than the bound), a launch that went ahead may run inside its range,
  // which then reads multi-range: lost, never a wrong value.
  std::unique_lock<std::timed_mutex> LockContext(ContextState* state);

  // Sets the parked context's profiler up on this (application) thread. Called with the
  // context's mutex held. Inline: the launch path calls it.
  bool Unpark(ContextState* state, CUcontext ctx, ProfilerError* error) {
    const int64_t start_ns = clock_();
    const bool reenable = state->ever_enabled;
    const bool enabled = Enable(state, ctx, error);
    setup_ns_.fetch_add(clock_() - start_ns, std::memory_order_relaxed);
    if (enabled && reenable) unparks_.fetch_add(1, std::memory_order_relaxed);
    return enabled;
  }

  // Called with the context's mutex held.
  void DropProfiler(ContextState* state);

  // A CUPTI profiler error during measurement: stop measuring everywhere, keep tracing. A busy
  // profiler (another process on this GPU is profiling: a second occtrace'd process, Nsight
  // Compute) is not an error of ours and passes: the context waits and tries again
  // (WaitForBusyProfiler). Called with the context's mutex held.
  void FailContext(ContextState* state, const ProfilerError& error) {
    DropProfiler(state);
    if (error.result == CUPTI_ERROR_HARDWARE_BUSY) {
      WaitForBusyProfiler(state);
      return;
    }
    status_.Fail(error);
  }
  // Parks the context for 1 s after the first busy answer, doubling up to 64 s.
  void WaitForBusyProfiler(ContextState* state);
  // Whether a launch into this parked context may set the profiler up now.
  bool BusyWaitOver(const ContextState& state) const {
    const int64_t until = state.busy_until_ns.load(std::memory_order_relaxed);
    return until == 0 || clock_() >= until;
  }

  const std::unique_ptr<ProfilerDevice> device_;
  const NanoClock clock_;
  AchievedPolicy policy_;
  const std::chrono::nanoseconds context_wait_;
  AchievedStatus status_;

  // Version of contexts_ (see the launch path's per-thread cache); written under
  // contexts_mutex_. Versions come from one process-wide counter, starting at 1.
  std::atomic<uint64_t> contexts_version_;

  std::atomic<int64_t> session_ends_{0};
  std::atomic<int64_t> setup_ns_{0};             // on application threads
  std::atomic<int64_t> background_setup_ns_{0};  // on setup threads (StartSetupThread)
  std::atomic<int64_t> unparks_{0};
  std::atomic<int64_t> context_wait_timeouts_{0};
  std::atomic<int64_t> busy_waits_{0};  // WaitForBusyProfiler calls

 private:
  // Under contexts_mutex_; any change to contexts_ or shut_down_ invalidates threads' caches.
  void BumpContextsVersionLocked();

  // A context going away (destroyed, or everything at shutdown): its profiler is dropped, and a
  // launch that already holds the state must not re-enable it. A stuck holder (a lost EXIT
  // callback) keeps its profiler rather than hang the program here.
  void Retire(ContextState* state);
  void NoteContextWaitTimeout();

  // Called with the context's mutex held.
  bool Enable(ContextState* state, CUcontext ctx, ProfilerError* error);

  // Each enabled context profiler counts as a user of CUPTI's profiler session; with
  // park_deinitializes the session ends when the last one parks. session_mutex_ comes after a
  // context's mutex (Park/Unpark hold it) and is never held while taking one.
  void AcquireProfilerSession();
  void ReleaseProfilerSession();
  bool EndProfilerSessionLocked();
  // Called before creating a context profiler: starts the session if parking ended it.
  bool EnsureProfilerSession(ProfilerError* error);

  bool StartSetupThread(std::shared_ptr<ContextState> state, CUcontext ctx);
  void SetUpInBackground(ContextState* state, CUcontext ctx);
  bool WaitForSetupThreads();

  std::mutex session_mutex_;       // guards the two below: CUPTI's profiler session and its users
  bool profiler_session_ = false;  // cuptiProfilerInitialize done and not yet undone
  int enabled_profilers_ = 0;
  // A context's profiler could not be disabled (its lock never came free).
  std::atomic<bool> left_enabled_{false};

  std::mutex contexts_mutex_;
  std::unordered_map<CUcontext, std::shared_ptr<ContextState>> contexts_;
  bool shut_down_ = false;

  // Setups starting with OnContextCreated (on setup threads, or inline on the creating thread
  // when no thread could start) are counted here; ShutDownContexts waits (bounded) until none
  // runs. A leaf lock.
  bool BeginSetup();  // false: closed (shut down)
  void EndSetup();
  std::mutex setup_threads_mutex_;
  std::condition_variable setup_threads_done_;
  int setup_threads_running_ = 0;
  bool setup_threads_closed_ = false;
};

}  // namespace occ::inj
