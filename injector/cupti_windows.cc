// Light tracing's timing windows on CUPTI (cupti_tracer_state.h): kernel records switched on
// and off for each window and, with OCCTRACE_LIGHT_DETACH, CUPTI detached at a window's end and
// attached again for the next one (cupti_attachment.h).
#include <cupti.h>

#include <string>

#include "injector/cupti_tracer_state.h"
#include "injector/errors.h"

namespace occ::inj::tracer_internal {
namespace {

// Light tracing's window opens: kernel records on. While achieved occupancy's range profiler is
// enabled CUPTI refuses them (CUPTI_ERROR_NOT_COMPATIBLE, seen on an H200 when a window opened
// during sampling, 2026-11-26): that window then times nothing, which is counted
// (light_windows_refused_by_profiler), not reported as an error.
void EnableWindowRecords(Tracer* tracer) {
  const CUptiResult result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result == CUPTI_ERROR_NOT_COMPATIBLE) {
    tracer->windows_refused_by_profiler.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  static_cast<void>(detail::CheckCupti(result, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)", __FILE__, __LINE__));
}

}  // namespace

CuptiAttachment::Hooks DetachHooks(Tracer* tracer) {
  CuptiAttachment::Hooks hooks;
  // Both domains on before the state says "requested": once it does, the next API exit may
  // finalize, and enabling after that fails (CUPTI_ERROR_NOT_INITIALIZED, seen on an H100).
  hooks.request_detach = [tracer] {
    return OCC_CUPTI_OK(cuptiEnableDomain(1, tracer->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API)) &&
           OCC_CUPTI_OK(cuptiEnableDomain(1, tracer->subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
  };
  hooks.cancel_detach = [tracer] {
    OCC_CUPTI_LOG(cuptiEnableDomain(0, tracer->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
    OCC_CUPTI_LOG(cuptiEnableDomain(0, tracer->subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
    if (tracer->light) tracer->light->EnableCallbacks(tracer->subscriber);
  };
  // Not once graphs or a capture appeared (light_tracer.h, graphs_seen): the capture-begin
  // callback itself can be the API exit asked to finalize. The request then fails, and the
  // next window takes the domains back and stays attached.
  hooks.finalize = [tracer] { return !tracer->light->graphs_seen() && OCC_CUPTI_OK(cuptiFinalize()); };
  hooks.attach = [tracer](std::string* error) {
    CUpti_SubscriberHandle subscriber = nullptr;
    std::string other;
    const CUptiResult subscribed = Subscribe(tracer, &subscriber, &other);
    if (subscribed != CUPTI_SUCCESS) {
      *error = subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                   ? "another CUPTI client (" + other + ") subscribed while occtrace was detached"
                   : "cuptiSubscribe_v2: " + CuptiResultText(subscribed);
      return false;
    }
    tracer->subscriber = subscriber;
    if (!EnableTracing(tracer, /*again=*/true)) {
      *error = "CUPTI refused a setup call (above)";
      cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      cuptiUnsubscribe(subscriber);
      return false;
    }
    return true;
  };
  return hooks;
}

uint64_t SetKernelRecords(Tracer* tracer, bool on) {
  if (!tracer->tracing.load()) return 0;
  if (CuptiAttachment* attachment = tracer->attachment.get()) {
    // Detached between windows: attached again to open one; at its end, records off, every
    // record flushed out of CUPTI, then detached (unless the hook fell back to CUPTI's
    // callbacks, which need CUPTI attached for good).
    uint64_t now = 0;
    if (on) {
      if (!attachment->Attach()) return 0;
      attachment->IfAttached([&now, tracer] {
        EnableWindowRecords(tracer);
        if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) now = 0;
      });
      return now;
    }
    attachment->IfAttached([&now] {
      if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) now = 0;
      OCC_CUPTI_LOG(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    });
    tracer->session->FlushActivity(TraceSession::FlushKind::kDetach);
    LaunchHook* hook = tracer->hook.load(std::memory_order_acquire);
    if (tracer->detach_stopped.empty()) {
      if (hook == nullptr) {
        tracer->detach_stopped = "no launch hook";
      } else if (hook->fell_back()) {
        tracer->detach_stopped = "the launch hook fell back to CUPTI's callbacks";
      } else if (tracer->light->graphs_seen()) {
        tracer->detach_stopped = "CUDA graphs or stream capture";
      }
    }
    if (!tracer->detach_stopped.empty()) return now;
    // Launches the hook misses while detached are lost: stay attached (the callbacks catch
    // them, a rescan follows) while it misses any or the program still loads new code.
    if (!hook->ReadyToDetach(SteadyNs())) {
      ++tracer->windows_kept_attached;
      return now;
    }
    attachment->RequestDetach();
    return now;
  }
  // Taken before switching off (a kernel still running or queued then ends after it) and
  // after switching on (a kernel that starts after it was launched with records on).
  uint64_t now = 0;
  if (on) {
    EnableWindowRecords(tracer);
    if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) now = 0;
  } else {
    if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) now = 0;
    OCC_CUPTI_LOG(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  return now;
}

void LightTick(Tracer* tracer, int64_t now_ns, bool records_on) {
  if (!tracer->tracing.load()) return;
  // CUDA graphs appeared while CUPTI was detached: attached again now, for good (records stay
  // off until the next window), so that no graph runs across a later detach.
  // (Attach also takes back a pending request, or the domains a refused finalize left on.)
  if (CuptiAttachment* attachment = tracer->attachment.get();
      attachment != nullptr && !records_on && tracer->light->graphs_seen()) {
    if (tracer->detach_stopped.empty()) tracer->detach_stopped = "CUDA graphs or stream capture";
    const bool was_attached = attachment->state() == CuptiAttachment::State::kAttached;
    if (attachment->Attach() && !was_attached) {
      attachment->IfAttached([] { OCC_CUPTI_LOG(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)); });
    }
  }
  if (LaunchHook* hook = tracer->hook.load(std::memory_order_acquire)) hook->Tick(now_ns, records_on);
}

}  // namespace occ::inj::tracer_internal
