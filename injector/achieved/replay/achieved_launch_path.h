// AchievedLaunchPath: the measurement of a launch, and where every CUPTI callback of the range
// achieved-occupancy profiler arrives (OnCallback) -- the top layer of the range profiler
// (achieved_profiler.h shows the layers).
//
// A chosen driver-level launch is bracketed: the profiler's Start in the launch's ENTER
// callback, Stop + decode + evaluate in its EXIT callback. Auto range captures every kernel
// launched in the context between Start and Stop, so every launch in a context with an enabled
// profiler holds that context's mutex from ENTER to EXIT: a launch from another thread
// (PyTorch's autograd threads) cannot fall into someone else's range.
//
// The per-launch path is built for the steady state of sample mode (every signature sampled,
// the context parked), where it must cost next to nothing on the application's threads:
//  - the context's state comes from a per-thread cache validated by one atomic load of the
//    context table's version (its mutex only on a miss, i.e. once per thread after a context
//    appears or goes away);
//  - the policy answers an exhausted signature from a per-thread cache (AchievedPolicy::
//    ThreadCache) without its mutex;
//  - a parked context is not locked unless the launch is to be measured.
// So an exhausted launch into a parked context takes no lock at all; into an enabled context it
// takes only that context's mutex, which is what keeps other threads' launches out of a
// measured range (a stopped-but-enabled profiler is cheap to keep, not to bypass).
//
// The path compiles as one piece in achieved_launch_path.cc: the layers below keep inline in
// their headers what it runs on every launch or while measuring (ShouldPark, Park, Unpark,
// FailContext), and what it calls out of line there (LockContext, FindOrCreateContext on a
// cache miss, DropProfiler, Enable, AchievedStatus::Fail) takes a lock or calls CUPTI anyway.
//
// Known window: a launch that read "parked" just before another thread re-enables the
// profiler for a measurement may still run inside that measurement; the range then reads
// multi-range (two kernels), never a wrong value.
//
// Takes: the subscriber's callbacks (launches; context created and destroyed, which go to
// AchievedContexts and AchievedParking), the policy's decision for each launch.
// Gives: one AchievedSample per launch the policy picked, to the sink (it only queues: SQLite
// stays on the writer thread); the launches it does not measure, to parking; and the phase
// times and count of launches not measured for OCC_META (achieved_profiler.cc).
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "injector/achieved/achieved.h"
#include "injector/achieved/replay/achieved_parking.h"

namespace occ::inj {

// The launching thread's state (achieved_launch_path.cc).
struct LaunchThreadState;
// What a launch's ENTER left for its EXIT on the same thread.
struct PendingLaunch;

class AchievedLaunchPath : public AchievedProfiler, protected AchievedParking {
 public:
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const void* cbdata) override;

 protected:
  AchievedLaunchPath(AchievedSink sink, AchievedConfig config,
                     std::unique_ptr<ProfilerDevice> device, NanoClock clock, int64_t start_ns);

  // Where measured launches spend their time (OCC_META.achieved_phase_ms): the profiler's
  // Start, the launch call itself while profiled, then StopAndDecode's phases.
  enum Phase { kPhaseStart, kPhaseLaunch, kPhaseStop, kPhaseDecode, kPhaseEvaluate, kPhaseReset, kPhases };
  std::array<std::atomic<int64_t>, kPhases> phase_ns_{};
  std::atomic<int64_t> not_measured_{0};

 private:
  // What the launch path calls on every launch is forced inline into its callers (OnCallback,
  // ENTER, EXIT), all in achieved_launch_path.cc: as members of a class that other files see,
  // the compiler would otherwise keep some of them as separate calls. Defined only there.
  [[gnu::always_inline]] inline void OnRuntimeLaunch(const CUpti_CallbackData* data);
  [[gnu::always_inline]] inline uint32_t CorrelationId(const CUpti_CallbackData* data) const;
  [[gnu::always_inline]] inline void OnKernelLaunch(CUpti_CallbackId cbid,
                                                    const CUpti_CallbackData* data);
  void OnKernelLaunchEnter(LaunchThreadState* thread, CUpti_CallbackId cbid,
                           const CUpti_CallbackData* data);
  // ENTER's first step, on every launch: the policy's decision and, for a launch to be
  // measured, the context's lock in *lock. False when the launch is not measured, and then
  // already dealt with (held until EXIT in an enabled context, the context parked, or let go).
  [[gnu::always_inline]] inline bool DecideAndLock(const std::shared_ptr<ContextState>& context,
                                                   const LaunchSignature& signature,
                                                   LaunchThreadState* thread,
                                                   std::unique_lock<std::timed_mutex>* lock,
                                                   AchievedPolicy::Decision* decision);
  // ENTER of a launch to be measured, holding the context's lock: the profiler (re-enabled if
  // the context is parked) started, and `sample` left in *pending for EXIT.
  void StartMeasurement(const std::shared_ptr<ContextState>& context, const LaunchSignature& signature,
                        AchievedSample sample, std::unique_lock<std::timed_mutex> lock, CUcontext ctx,
                        PendingLaunch* pending);
  // The context lock stays held until this thread's EXIT callback for the launch.
  [[gnu::always_inline]] inline void HoldUntilExit(const std::shared_ptr<ContextState>& state,
                                                   std::unique_lock<std::timed_mutex> lock,
                                                   PendingLaunch* pending);
  void OnKernelLaunchExit(const CUpti_CallbackData* data, PendingLaunch* pending);
  // A sample whose setup or Start failed: finished (not to be retried: AchievedPolicy::Finish),
  // unless the profiler was only busy, in which case the sample is given back for later.
  void GiveUpSample(const LaunchSignature& signature, int64_t profiling_ns, const ProfilerError& error);
  [[gnu::always_inline]] inline void OnGraphLaunch(const CUpti_CallbackData* data);
  [[gnu::always_inline]] inline void Emit(AchievedSample&& sample, bool measured);

  // The launching thread's view of the context table: its cached entry while the table has not
  // changed (one acquire load), else the table under its mutex. Null when achieved
  // measurement is off for the context. Points into the thread's cache: valid until this
  // thread's next call.
  [[gnu::always_inline]] inline const std::shared_ptr<ContextState>* ContextForLaunch(
      LaunchThreadState* thread, CUcontext ctx);

  const AchievedSink sink_;
  const std::string policy_name_;
};

}  // namespace occ::inj
