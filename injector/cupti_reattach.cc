// The default mode's re-attach after sampling (OCCTRACE_ACHIEVED_REATTACH, on by default in a
// full trace that samples achieved occupancy): CUPTI finalized and attached again once sampling
// rests, the launch hook recording the launches that get no kernel record meanwhile.
//
// Why: launches the range profiler measured under kernel replay leave work behind for the rest
// of the run, which neither ending the profiler session nor cuptiProfilerDeInitialize gives
// back. Counted per thread (H100, 2026-11-26; docs/performance.md), it is CPU on CUPTI's own
// thread, the one that delivers activity buffers: 3-4x its CPU per step in `off` (ResNet-50
// 2.98 against 0.81 ms, train_small.py 0.22 against 0.06), and step time with it. cuptiFinalize
// ends that thread; the one the attach starts runs at `off`'s cost on train_small.py (0.05 ms;
// step time 1.010 x `off` against 1.053 without the re-attach) but keeps most of the extra work
// on ResNet-50 (2.2-4.7 against 3.0-5.4 ms without), for reasons inside CUPTI.
//
// How, on the writer thread (ReattachTick), once sampling rests (every signature measured, the
// profiler parked and its session ended: AchievedProfiler::PrepareDetach), launches were measured
// since the last re-attach, no new kernel configuration came for 10 s, the launch hook is known
// to see every launch (LaunchHook::ReadyToDetach), and never once CUDA graphs appeared (a graph
// running across a finalize crashed light tracing once, light_tracer.h):
//  1. The runtime and driver launch callbacks on, so that each launch recorded while CUPTI is
//     attached carries the correlation id its kernel record carries, and so that for 1 s they
//     watch the hook: a launch it misses (one the callbacks see outside it) would be lost while
//     CUPTI is detached, so one such miss calls the re-attach off until the hook is ready
//     again. Then the hook starts recording.
//  2. Kernel records off, a forced flush, RequestDetach: the program's next API exit finalizes.
//  3. Once finalized: every thread's open runtime launch forgotten, then Attach (subscribe,
//     callbacks, kernel records on), and the achieved profiler told (OnAttached).
//  4. 100 ms later the hook stops recording and the callbacks go back to their owners; 1 s
//     later (every append done, the kernel records of the launches around the gap flushed) the
//     held calls are resolved: a call whose correlation id a kernel record carried is that
//     record's launch and is dropped; the others are stored as untimed launches
//     (OCC_LAUNCH_CALL; TraceWriter::ResolveGapCalls).
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "injector/cupti_tracer_state.h"
#include "injector/errors.h"

namespace occ::inj::tracer_internal {
namespace {

constexpr int64_t kQuietConfigsNs = 10'000'000'000;  // no new configuration for this long
constexpr int64_t kPrewatchNs = 1'000'000'000;      // the callbacks watch the hook first
constexpr int64_t kTailNs = 100'000'000;             // recording after the attach
constexpr int64_t kResolveAfterNs = 1'000'000'000;   // recording off to resolution
constexpr auto kFinalizeWaitStep = std::chrono::milliseconds(1);
constexpr int kFinalizeWaitSteps = 500;  // per tick; a program making no API call waits longer

std::string Spread(std::vector<int64_t> values) {  // "count, median, max" in ms
  if (values.empty()) return "0";
  std::sort(values.begin(), values.end());
  auto ms = [](int64_t ns) { return std::to_string(static_cast<double>(ns) / 1e6); };
  return std::to_string(values.size()) + ", median " + ms(values[values.size() / 2]) + " ms, max " +
         ms(values.back()) + " ms";
}

// Step 1: the callbacks on, watching the hook for kPrewatchNs. False (nothing changed, the
// profiler woken) when CUPTI refused them.
bool BeginPrewatch(Tracer* tracer, int64_t now_ns) {
  Tracer::Reattach& r = tracer->reattach;
  CuptiAttachment& attachment = *tracer->attachment;
  bool callbacks_on = false;
  attachment.IfAttached([&] { callbacks_on = tracer->light->SetGapCorrelation(tracer->subscriber, true); });
  std::string error;
  if (!callbacks_on || !tracer->launch_callbacks->Want(LaunchCallbackSwitch::Owner::kReattach, true, &error)) {
    attachment.IfAttached([&] { tracer->light->SetGapCorrelation(tracer->subscriber, false); });
    tracer->launch_callbacks->Want(LaunchCallbackSwitch::Owner::kReattach, false, &error);
    tracer->achieved->OnAttached(tracer->subscriber);  // PrepareDetach let it rest; CUPTI stayed
    r.stopped = "CUPTI refused the launch callbacks" + (error.empty() ? std::string() : ": " + error);
    return false;
  }
  r.misses_at_prewatch = tracer->light->launches_outside_hook();
  // Kernel records' correlation ids are collected from now on, a second before the hook
  // records: a launch recorded just after recording began may have had its record processed
  // well before (a thread that lost the CPU between the launch and the hook's check).
  tracer->session->BeginGapCalls(LightTracer::AttachEpoch());
  r.step = Tracer::Reattach::Step::kPrewatch;
  r.step_since_ns = now_ns;
  return true;
}

// The callbacks back to their owners (the end of a re-attach, or of a watch that saw a miss).
void EndCallbacks(Tracer* tracer) {
  tracer->attachment->IfAttached([&] { tracer->light->SetGapCorrelation(tracer->subscriber, false); });
  std::string ignored;
  tracer->launch_callbacks->Want(LaunchCallbackSwitch::Owner::kReattach, false, &ignored);
}

// Step 2, after a watch in which the hook missed nothing: recording on, records off, detach
// requested.
void BeginGap(Tracer* tracer, int64_t now_ns) {
  Tracer::Reattach& r = tracer->reattach;
  CuptiAttachment& attachment = *tracer->attachment;
  tracer->light->SetRecording(true);
  attachment.IfAttached([] { OCC_CUPTI_LOG(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)); });
  r.records_off_ns = SteadyNs();
  tracer->session->FlushActivity(TraceSession::FlushKind::kDetach);
  attachment.RequestDetach();
  ++r.began;
  r.began_at_ns.push_back(now_ns);
  r.step = Tracer::Reattach::Step::kDetachRequested;
  r.step_since_ns = now_ns;
}

// Step 3, once the request was answered. Kernel records are on again when it returns, unless
// CUPTI refused the attach (then it stays detached and the hook records every launch from now
// on, as untimed launches).
void EndGap(Tracer* tracer, int64_t now_ns) {
  Tracer::Reattach& r = tracer->reattach;
  CuptiAttachment& attachment = *tracer->attachment;
  if (attachment.state() == CuptiAttachment::State::kDetached) {
    tracer->session->StartGapEpoch(LightTracer::ForgetOpenRuntimeLaunches());
    if (!attachment.Attach()) {
      r.stopped = "CUPTI refused the re-attach (" + attachment.figures().attach_error +
                  "); launches from then on are untimed";
      return;
    }
    if (tracer->achieved) tracer->achieved->OnAttached(tracer->subscriber);
    ++r.completed;
  } else {
    // The request was refused or the finalize failed: CUPTI never left. Attach takes the
    // API domains back; kernel records on again by hand.
    attachment.Attach();
    attachment.IfAttached([] { OCC_CUPTI_LOG(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)); });
    if (tracer->achieved) tracer->achieved->OnAttached(tracer->subscriber);
    r.stopped = "CUPTI did not finalize";
  }
  r.gap_ns.push_back(SteadyNs() - r.records_off_ns);
  r.step = Tracer::Reattach::Step::kTail;
  r.step_since_ns = now_ns;
}

const char* StepName(Tracer::Reattach::Step step) {
  switch (step) {
    case Tracer::Reattach::Step::kWatching: return "watching";
    case Tracer::Reattach::Step::kPrewatch: return "prewatch";
    case Tracer::Reattach::Step::kDetachRequested: return "detach requested";
    case Tracer::Reattach::Step::kTail: return "tail";
    case Tracer::Reattach::Step::kResolving: return "resolving";
  }
  return "?";
}

// Whether the launch hook must watch and rescan: while a re-attach is under way or may begin,
// and while CUPTI stays detached after a refused re-attach (the hook then records every launch,
// so a library loaded later must be scanned). Otherwise -- nothing measured since the last
// re-attach (or none yet), or the re-attach stopped for the run with CUPTI attached -- it is
// dormant (LaunchHook::Tick): a miss can only matter to a re-attach, whose
// own 1-s watch (kPrewatchNs) checks the hook before CUPTI lets go, and the hook's periodic
// watches (CUPTI's launch callbacks on for 0.5 s every 30 s, 2 s after each library load or
// miss) and its rescans of every loaded object (164 ms of writer CPU each on train_small.py,
// 7 in one run after its re-attach; H100, 2026-11-26) would otherwise run for the whole rest of
// a run that re-attached once, and for good after a fallback, when no re-attach follows at all.
// Launches were measured since the last re-attach began, so their residue is there to end
// (or OCCTRACE_ACHIEVED_REATTACH=force asks for one re-attach regardless, a diagnostic).
bool MeasuredSinceLast(const Tracer::Reattach& r, uint64_t measured) {
  return measured != r.measured_at_last || (r.force_once && r.began == 0);
}

bool HookNeeded(const Tracer::Reattach& r, uint64_t measured, bool cupti_detached) {
  if (cupti_detached) return true;
  if (!r.stopped.empty()) return false;
  return r.step != Tracer::Reattach::Step::kWatching || MeasuredSinceLast(r, measured);
}

bool ReadyToBegin(Tracer* tracer, int64_t now_ns) {
  Tracer::Reattach& r = tracer->reattach;
  // Installed after the writer thread starts (InitializeTracing); one that could not be
  // installed stopped the re-attach there.
  LaunchHook* hook = tracer->hook.load(std::memory_order_acquire);
  if (hook == nullptr) return false;
  if (hook->fell_back()) {
    r.stopped = "the launch hook kept missing launches";
  } else if (tracer->light->graphs_seen()) {
    r.stopped = "CUDA graphs or stream capture";
  }
  if (!r.stopped.empty()) return false;
  const uint64_t measured = tracer->achieved->LaunchesMeasured();
  if (!MeasuredSinceLast(r, measured)) return false;
  if (now_ns - r.last_new_config_ns < kQuietConfigsNs) return false;
  if (!hook->ReadyToDetach(now_ns)) return false;
  if (!tracer->achieved->PrepareDetach()) {
    ++r.waited_for_sampling;
    return false;
  }
  r.measured_at_last = measured;
  return true;
}

}  // namespace

void ReattachTick(Tracer* tracer, int64_t now_ns) {
  Tracer::Reattach& r = tracer->reattach;
  if (!r.on || !tracer->tracing.load() || tracer->attachment == nullptr || tracer->achieved == nullptr) return;
  if (LaunchHook* hook = tracer->hook.load(std::memory_order_acquire)) {
    const bool cupti_detached = tracer->attachment->state() == CuptiAttachment::State::kDetached;
    hook->Tick(now_ns, /*records_on=*/false, !HookNeeded(r, tracer->achieved->LaunchesMeasured(), cupti_detached));
  }
  CuptiAttachment& attachment = *tracer->attachment;
  switch (r.step) {
    case Tracer::Reattach::Step::kWatching:
      if (!r.stopped.empty()) {
        // CUPTI stayed detached (a refused re-attach): every launch is a recorded call now,
        // stored within the commit period.
        if (attachment.state() == CuptiAttachment::State::kDetached) {
          tracer->session->ResolveGapCalls();
          tracer->session->BeginGapCalls(LightTracer::AttachEpoch());
        }
        return;
      }
      if (ReadyToBegin(tracer, now_ns)) BeginPrewatch(tracer, now_ns);
      return;
    case Tracer::Reattach::Step::kPrewatch:
      if (now_ns - r.step_since_ns < kPrewatchNs) return;
      if (tracer->light->launches_outside_hook() != r.misses_at_prewatch) {
        // The hook missed a launch (a rescan follows): such a launch would be lost while
        // detached. Tried again once the hook is ready.
        EndCallbacks(tracer);
        tracer->session->ResolveGapCalls();  // none held: closes the collection
        tracer->achieved->OnAttached(tracer->subscriber);
        ++r.prewatch_misses;
        r.measured_at_last = 0;
        r.step = Tracer::Reattach::Step::kWatching;
        return;
      }
      BeginGap(tracer, now_ns);
      [[fallthrough]];
    case Tracer::Reattach::Step::kDetachRequested: {
      for (int i = 0; i < kFinalizeWaitSteps; ++i) {
        const CuptiAttachment::State state = attachment.state();
        if (state != CuptiAttachment::State::kDetachRequested && state != CuptiAttachment::State::kFinalizing) break;
        std::this_thread::sleep_for(kFinalizeWaitStep);
      }
      const CuptiAttachment::State state = attachment.state();
      if (state == CuptiAttachment::State::kDetachRequested || state == CuptiAttachment::State::kFinalizing) return;
      EndGap(tracer, now_ns);
      if (r.step != Tracer::Reattach::Step::kTail) {  // refused: stays detached, recording
        r.step = Tracer::Reattach::Step::kWatching;
      }
      return;
    }
    case Tracer::Reattach::Step::kTail: {
      if (now_ns - r.step_since_ns < kTailNs) return;
      tracer->light->SetRecording(false);
      EndCallbacks(tracer);
      r.step = Tracer::Reattach::Step::kResolving;
      r.step_since_ns = now_ns;
      return;
    }
    case Tracer::Reattach::Step::kResolving:
      if (now_ns - r.step_since_ns < kResolveAfterNs) return;
      tracer->session->ResolveGapCalls();
      r.step = Tracer::Reattach::Step::kWatching;
      r.step_since_ns = now_ns;
      return;
  }
}

void ReattachBeforeFinalFlush(Tracer* tracer) {
  if (!tracer->reattach.on || !tracer->attachment) return;
  // A detach still pending: taken back, so that the final flush reaches CUPTI (kernel records
  // stay off; the hook records every launch until the end, and the calls held are resolved
  // when the writer closes). Finalizing or detached: left so.
  if (tracer->attachment->state() == CuptiAttachment::State::kDetachRequested) tracer->attachment->Attach();
}

std::vector<std::pair<std::string, std::string>> ReattachMeta(const Tracer& tracer) {
  const Tracer::Reattach& r = tracer.reattach;
  std::string began_at;
  for (int64_t at : r.began_at_ns) {
    if (!began_at.empty()) began_at += ",";
    began_at += std::to_string((at - r.start_ns) / 1'000'000);
  }
  std::vector<std::pair<std::string, std::string>> rows = {
      {"reattach_began", std::to_string(r.began)},
      {"reattach_completed", std::to_string(r.completed)},
      {"reattach_gap_ms", Spread(r.gap_ns)},
      {"reattach_began_at_ms", began_at.empty() ? "none" : began_at},
      {"reattach_step_at_end", StepName(r.step)},
      {"reattach_stopped", r.stopped.empty() ? "no" : r.stopped},
      {"reattach_ticks_waiting_for_sampling", std::to_string(r.waited_for_sampling)},
      {"reattach_given_up_for_hook_misses", std::to_string(r.prewatch_misses)},
  };
  return rows;
}

}  // namespace occ::inj::tracer_internal
