// Light tracing's timing windows (cupti_tracer_state.h): when a window opens or closes, the
// controller switches kernel records (cupti_controller.h); with OCCTRACE_LIGHT_DETACH, this file
// decides whether CUPTI may detach at a window's end, and pins it attached for good when it
// must stay.
#include <string>

#include "injector/tracer/cupti_tracer_state.h"

namespace occ::inj::tracer_internal {
namespace {

// Why CUPTI must stay attached from now on ("" while it may detach). Launches the hook misses
// while detached are lost, not recorded late.
std::string ReasonToStayAttached(const Tracer& tracer, const LaunchHook& hook) {
  if (hook.fell_back()) return "the launch hook fell back to CUPTI's callbacks";
  if (tracer.light->graphs_seen()) return "CUDA graphs or stream capture";
  return "";
}

}  // namespace

uint64_t SetKernelRecords(Tracer* tracer, bool on) {
  if (!tracer->tracing.load()) return 0;
  CuptiController& controller = *tracer->controller;
  uint64_t now = 0;
  if (on) {
    controller.OpenWindow(&now);
    return now;
  }
  bool may_detach = false;
  // Only light tracing with detach installs the hook (without it, the controller was pinned at
  // setup).
  if (LaunchHook* hook = tracer->hook.load(std::memory_order_acquire)) {
    const std::string reason = ReasonToStayAttached(*tracer, *hook);
    if (!reason.empty()) {
      controller.Pin(reason);
    } else if (hook->ReadyToDetach(SteadyNs())) {
      // Stay attached (the callbacks catch misses, a rescan follows) while the hook misses any
      // launch or the program still loads new code.
      may_detach = true;
    } else {
      ++tracer->windows_kept_attached;
    }
  }
  controller.CloseWindow(may_detach, &now);
  return now;
}

void LightTick(Tracer* tracer, int64_t now_ns, bool records_on) {
  if (!tracer->tracing.load()) return;
  // CUDA graphs appeared while CUPTI was detached: attached again now, for good (records stay
  // off until the next window), so that no graph runs across a later detach.
  LaunchHook* hook = tracer->hook.load(std::memory_order_acquire);
  if (hook == nullptr) return;
  if (!records_on && tracer->light->graphs_seen()) tracer->controller->Pin("CUDA graphs or stream capture");
  hook->Tick(now_ns, records_on);
}

}  // namespace occ::inj::tracer_internal
