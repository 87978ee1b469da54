// The state libocctrace.so's CUPTI glue shares between its two files: cupti_tracer.cc (the
// subscriber, callbacks, activity buffers and the session they feed) and cupti_windows.cc
// (light tracing's timing windows on CUPTI: kernel records on and off, and with
// OCCTRACE_LIGHT_DETACH CUPTI detached between windows and attached again). Internal to those
// two files.
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

#include "injector/achieved.h"
#include "injector/cupti_attachment.h"
#include "injector/id_translation.h"
#include "injector/launch_callback_switch.h"
#include "injector/launch_hook.h"
#include "injector/light_tracer.h"
#include "injector/trace_session.h"

namespace occ::inj::tracer_internal {

struct Tracer {
  CUpti_SubscriberHandle subscriber = nullptr;
  std::unique_ptr<TraceSession> session;
  std::unique_ptr<AchievedProfiler> achieved;
  std::unique_ptr<LightTracer> light;  // OCCTRACE_MODE=light
  // Mode::kLightDetached: the launch hook, and the switch by which it sets the launch callbacks
  // (launch_hook.h).
  std::unique_ptr<LaunchCallbackSwitch> launch_callbacks;
  std::atomic<LaunchHook*> hook{nullptr};
  // OCCTRACE_LIGHT_DETACH=1: CUPTI finalized between timing windows (cupti_attachment.h); every
  // CUPTI call outside CUPTI's own callbacks then goes through attachment->IfAttached, and the
  // subscriber handle changes at every attach (read under it).
  std::unique_ptr<CuptiAttachment> attachment;
  IdTranslation ids;
  // Writer thread: why light tracing stopped detaching for good ("" while it still does), and
  // windows that ended attached because the hook had missed launches or new code had appeared
  // (LaunchHook::ReadyToDetach).
  std::string detach_stopped;
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
// are not asked for again.
bool EnableTracing(Tracer* tracer, bool again = false);
// cuptiSubscribe_v2 as "occtrace"; on a refusal, *other names the client holding CUPTI.
CUptiResult Subscribe(Tracer* tracer, CUpti_SubscriberHandle* subscriber, std::string* other);
std::string CuptiResultText(CUptiResult result);

// cupti_windows.cc. OCCTRACE_LIGHT_DETACH: the hooks by which CuptiAttachment detaches and
// attaches CUPTI.
CuptiAttachment::Hooks DetachHooks(Tracer* tracer);
// SessionHooks::set_kernel_records (trace_session.h): a timing window opens (`on`) or closes.
uint64_t SetKernelRecords(Tracer* tracer, bool on);
// SessionHooks::light_tick, after every window update on the writer thread.
void LightTick(Tracer* tracer, int64_t now_ns, bool records_on);


}  // namespace occ::inj::tracer_internal
