// The state libocctrace.so's CUPTI glue shares between its files: cupti_tracer.cc (the
// subscriber, callbacks, activity buffers and the session they feed), cupti_windows.cc (light
// tracing's timing windows: what it asks the controller) and cupti_controller_seam.cc (the
// controller's CUPTI calls). Internal to those files.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/tracer/cupti_controller.h"
#include "injector/light/id_translation.h"
#include "injector/tracer/launch_hook.h"
#include "injector/light/light_tracer.h"
#include "injector/session/trace_session.h"

namespace occ::inj {
class PmCollector;  // pm_collector.h
}  // namespace occ::inj

namespace occ::inj::tracer_internal {

struct Tracer {
  CUpti_SubscriberHandle subscriber = nullptr;
  std::unique_ptr<TraceSession> session;
  std::unique_ptr<AchievedProfiler> achieved;
  // `achieved` when it samples PM counters: hears the writer's reports (on the writer thread,
  // which starts before it is made).
  std::atomic<PmCollector*> pm{nullptr};
  std::unique_ptr<LightTracer> light;  // OCCTRACE_MODE=light
  // Mode::kLightDetached (with its light tracer): CUPTI may detach between windows, and the
  // launch hook records launches meanwhile (launch_hook.h; null when it found no entry points).
  bool detaches = false;
  std::atomic<LaunchHook*> hook{nullptr};
  // The one owner of CUPTI's attachment, kernel records and launch callbacks (every mode).
  // Every CUPTI call outside CUPTI's own callbacks and the initial setup goes through it; while
  // detached, the subscriber handle changes at every attach (read under it).
  std::unique_ptr<CuptiController> controller;
  IdTranslation ids;
  // Writer thread: windows that ended attached because the hook had missed launches or new code
  // had appeared (LaunchHook::ReadyToDetach).
  uint64_t windows_kept_attached = 0;
  std::atomic<uint64_t> windows_refused_by_profiler{0};  // EnableWindowRecords
  // False once CUPTI reported a fatal error (it then finalizes itself) or after the final
  // flush: no more CUPTI calls from our side.
  std::atomic<bool> tracing{false};
  std::atomic<uint32_t> state_errors{0};
  std::atomic<uint32_t> state_warnings{0};
  std::atomic<bool> refused_subscriber_reported{false};
  std::mutex devices_mutex;
  std::set<uint32_t> devices_queried;
};

// cupti_tracer.cc. `again`: attaching after a detach (OCCTRACE_LIGHT_DETACH); DEVICE records
// are not asked for again, and kernel records stay off (the controller switches them).
bool EnableTracing(Tracer* tracer, bool again = false);
// cuptiSubscribe_v2 as "occtrace"; on a refusal, *other names the client holding CUPTI.
CUptiResult Subscribe(Tracer* tracer, CUpti_SubscriberHandle* subscriber, std::string* other);
std::string CuptiResultText(CUptiResult result);

// cupti_controller_seam.cc: the controller's CUPTI calls.
CuptiController::Seam RealCuptiSeam(Tracer* tracer);
// cupti_windows.cc. SessionHooks::set_kernel_records (trace_session.h): a timing window opens
// (`on`) or closes.
uint64_t SetKernelRecords(Tracer* tracer, bool on);
// SessionHooks::light_tick, after every window update on the writer thread.
void LightTick(Tracer* tracer, int64_t now_ns, bool records_on);


}  // namespace occ::inj::tracer_internal
