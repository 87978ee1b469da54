// The controller's Seam on real CUPTI (cupti_controller.h): the only place in libocctrace.so
// that switches kernel records or the driver launch callbacks, subscribes again, or finalizes.
#include <cupti.h>

#include <string>

#include "injector/achieved/achieved_launch.h"
#include "injector/tracer/cupti_tracer_state.h"
#include "injector/common/errors.h"

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

CuptiController::Seam RealCuptiSeam(Tracer* tracer) {
  CuptiController::Seam seam;
  // Taken before switching off (a kernel still running or queued then ends after it) and after
  // switching on (a kernel that starts after it was launched with records on).
  seam.records = [tracer](bool on) -> uint64_t {
    uint64_t now = 0;
    if (on) {
      EnableWindowRecords(tracer);
      if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) now = 0;
    } else {
      if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) now = 0;
      OCC_CUPTI_LOG(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    }
    return now;
  };
  seam.flush = [tracer] { tracer->session->FlushActivity(TraceSession::FlushKind::kDetach); };
  // Both domains on before the state says "requested": once it does, the next API exit may
  // finalize, and enabling after that fails (CUPTI_ERROR_NOT_INITIALIZED, seen on an H100).
  seam.request_detach = [tracer] {
    return OCC_CUPTI_OK(cuptiEnableDomain(1, tracer->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API)) &&
           OCC_CUPTI_OK(cuptiEnableDomain(1, tracer->subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
  };
  seam.cancel_detach = [tracer] {
    OCC_CUPTI_LOG(cuptiEnableDomain(0, tracer->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
    OCC_CUPTI_LOG(cuptiEnableDomain(0, tracer->subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
    if (tracer->light) tracer->light->EnableCallbacks(tracer->subscriber);
  };
  // Not once graphs or a capture appeared (light_tracer.h, graphs_seen): the capture-begin
  // callback itself can be the API exit asked to finalize. The request then fails, and the
  // writer pins CUPTI attached (LightTick).
  seam.finalize = [tracer] { return !tracer->light->graphs_seen() && OCC_CUPTI_OK(cuptiFinalize()); };
  seam.attach = [tracer](std::string* error) {
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
      cuptiUnsubscribe(subscriber);
      return false;
    }
    return true;
  };
  seam.launch_callbacks = [tracer](bool on, std::string* error) {
    for (CUpti_CallbackId cbid : kDriverLaunchCbids) {
      const CUptiResult result = cuptiEnableCallback(on ? 1 : 0, tracer->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
      if (result != CUPTI_SUCCESS) {
        *error = "cuptiEnableCallback(driver launch): " + CuptiResultText(result);
        return false;
      }
    }
    return true;
  };
  return seam;
}

}  // namespace occ::inj::tracer_internal
