#include "injector/tracer/cupti_tracer.h"

#include <cupti_target.h>
#include <dlfcn.h>
#include <stdlib.h>

#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/achieved/achieved_launch.h"
#include "injector/achieved/achieved_policy.h"
#include "injector/tracer/cupti_controller.h"
#include "injector/tracer/cupti_tracer_state.h"
#include "injector/common/errors.h"
#include "injector/light/id_translation.h"
#include "injector/tracer/launch_hook.h"
#include "injector/light/light_tracer.h"
#include "injector/writer/module_loader.h"
#include "injector/session/output_path.h"
#include "injector/achieved/pm/pm_collector.h"
#include "injector/tracer/settings.h"
#include "injector/tracer/subscriber_guard.h"
#include "injector/session/trace_session.h"
#include "injector/writer/triton_cache.h"

namespace occ::inj {
namespace {

using tracer_internal::CuptiResultText;
using tracer_internal::RealCuptiSeam;
using tracer_internal::EnableTracing;
using tracer_internal::LightTick;
using tracer_internal::SetKernelRecords;
using tracer_internal::Subscribe;
using tracer_internal::Tracer;


// Leaked on purpose: CUPTI may call back during process teardown, after static destructors.
Tracer* g_tracer = nullptr;

std::string VersionString(int version) {  // 13000 -> "13.0"
  if (version <= 0) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The CUDA runtime is optional (driver-API programs) and often linked statically (nvcc's
// default), in which case its version is not discoverable: "unknown".
std::string RuntimeVersion() {
  using GetVersion = int (*)(int*);
  void* symbol = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
  for (const char* soname : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}) {
    if (symbol != nullptr) break;
    if (void* handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) symbol = dlsym(handle, "cudaRuntimeGetVersion");
  }
  if (symbol == nullptr) return "unknown";
  GetVersion get_version = nullptr;
  std::memcpy(&get_version, &symbol, sizeof(symbol));
  int version = 0;
  return get_version(&version) == 0 ? VersionString(version) : "unknown";
}

// CONTEXT_CREATED runs on the thread creating the context, where driver calls are safe; the
// attributes travel to the writer as data.
void QueryDevice(Tracer* tracer, CUcontext context) {
  uint32_t device_id = 0;
  if (!OCC_CUPTI_OK(cuptiGetDeviceId(context, &device_id))) return;
  {
    std::lock_guard lock(tracer->devices_mutex);
    if (!tracer->devices_queried.insert(device_id).second) return;
  }
  DeviceExtras extras;
  extras.device_id = device_id;
  const DriverApi& driver = Driver();
  CUdevice device = 0;
  if (driver.Loaded() && OCC_CU_OK(driver.cuDeviceGet(&device, static_cast<int>(device_id)))) {
    auto attribute = [&](CUdevice_attribute which, int64_t* out) {
      int value = 0;
      if (OCC_CU_OK(driver.cuDeviceGetAttribute(&value, which, device))) *out = value;
    };
    attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &extras.max_shared_memory_per_block_optin);
    attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, &extras.reserved_shared_memory_per_block);
    attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &extras.max_threads_per_multiprocessor);
    attribute(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, &extras.async_engines);
    attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED, &extras.integrated);
    char bus[64] = {};
    if (driver.cuDeviceGetPCIBusId != nullptr &&
        OCC_CU_OK(driver.cuDeviceGetPCIBusId(bus, static_cast<int>(sizeof(bus) - 1), device))) {
      extras.bus_location = bus;
    }
    int driver_version = 0;
    if (driver.cuDriverGetVersion != nullptr && OCC_CU_OK(driver.cuDriverGetVersion(&driver_version))) {
      extras.driver_version = driver_version;
    }
  }
  CUpti_Device_GetChipName_Params chip{};
  chip.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  chip.deviceIndex = device_id;
  // Optional (a profiler API; may be unavailable, e.g. under vGPU): no message when it fails.
  if (cuptiDeviceGetChipName(&chip) == CUPTI_SUCCESS && chip.pChipName != nullptr) {
    extras.chip_name = chip.pChipName;
  }
  tracer->session->SubmitDeviceExtras(std::move(extras));
}

// Runs on the refused client's thread (subscriber_guard.h), possibly long after start-up.
void OnRefusedSubscriber(const OtherCuptiClient& client) {
  Tracer* tracer = g_tracer;
  if (tracer == nullptr || !tracer->session || TraceSession::InForkedChild()) return;
  if (tracer->refused_subscriber_reported.exchange(true)) return;
  const std::string who = DescribeCuptiClient(client);
  LogLine("%s asked CUPTI for a subscription and was refused: CUPTI 13.0 allows one subscriber and occtrace "
          "holds it, so that tool records no GPU activity in this run (occtrace goes on tracing; "
          "use one tool at a time)", who.c_str());
  tracer->session->SetMeta("cupti_refused_subscriber", who);
}

// CUPTI's non-fatal notifications (CUPTI_CBID_STATE_ERROR / _WARNING): one line each for the
// first few, all counted in OCC_META. None is documented for a refused second subscriber, but
// whatever CUPTI does report about other clients surfaces here.
void ReportStateNotification(Tracer* tracer, CUpti_CallbackId cbid, const CUpti_StateData* state) {
  constexpr uint32_t kLoggedNotifications = 5;
  const bool is_error = cbid == CUPTI_CBID_STATE_ERROR;
  std::atomic<uint32_t>& count = is_error ? tracer->state_errors : tracer->state_warnings;
  const uint32_t index = count.fetch_add(1) + 1;
  const char* kind = is_error ? "error" : "warning";
  const char* message = state != nullptr && state->notification.message != nullptr
                            ? state->notification.message
                            : "no details";
  const int result = state != nullptr ? static_cast<int>(state->notification.result) : 0;
  const char* result_text = nullptr;
  if (state == nullptr || cuptiGetResultString(state->notification.result, &result_text) != CUPTI_SUCCESS) {
    result_text = nullptr;
  }
  if (index <= kLoggedNotifications) {
    LogLine("CUPTI %s: %s (%s)%s", kind, message,
            result_text != nullptr ? result_text : std::to_string(result).c_str(), index == kLoggedNotifications ? "; further ones are only counted" : "");
    tracer->session->SetMeta(std::string("cupti_") + kind + "_" + std::to_string(index), message);
  }
  tracer->session->SetMeta(is_error ? "cupti_error_count" : "cupti_warning_count", std::to_string(index));
}

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* cbdata) {
  if (TraceSession::InForkedChild()) return;
  auto* tracer = static_cast<Tracer*>(userdata);
  if (tracer->tracing.load(std::memory_order_acquire)) {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        QueryDevice(tracer, resource->context);
      } else if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
        // On the loading thread, possibly at a kernel's first launch (lazy loading), and
        // modules can be megabytes (PyTorch): only copy here; the writer thread parses.
        const auto* module =
            static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
        if (module != nullptr) {
          // Which shared object held the image: the kernel's owner for occ-report (cuDNN,
          // cuBLAS, libtorch, the program's extension). An image decompressed or JIT-compiled
          // into the heap has none. dladdr is cheap next to a module load.
          std::string library;
          Dl_info info{};
          if (module->pCubin != nullptr && dladdr(module->pCubin, &info) != 0 && info.dli_fname != nullptr) {
            library = info.dli_fname;
          }
          // Who loaded it: raw return addresses only here, resolved on the writer thread.
          LoaderFrames loader;
          CaptureLoaderFrames(&loader);
          tracer->session->SubmitModule(module->moduleId, module->pCubin, module->cubinSize, std::move(library),
                                        &loader);
        }
        if (LaunchHook* hook = tracer->hook.load(std::memory_order_acquire)) hook->NoteModuleLoaded();
      } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        // The context's records must leave CUPTI while it still exists (cudaDeviceReset,
        // cuCtxDestroy): a forced flush, then the writer commits them on its next wake-up.
        // Through the session, which serializes it with the writer's periodic flush and the
        // final one (trace_session.h, "Threads and locks"); CUPTI delivers the buffers to
        // BufferCompleted on this thread, inside the flush.
        tracer->session->FlushActivity(TraceSession::FlushKind::kContextDestroy);
      }
    } else if (domain == CUPTI_CB_DOMAIN_STATE && cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
      const auto* state = static_cast<const CUpti_StateData*>(cbdata);
      const char* message = state->notification.message != nullptr ? state->notification.message : "no details";
      LogLine("CUPTI reported a fatal error (%s); tracing stops here", message);
      tracer->session->SetMeta("cupti_fatal_error", message);
      tracer->tracing.store(false);
    } else if (domain == CUPTI_CB_DOMAIN_STATE &&
               (cbid == CUPTI_CBID_STATE_ERROR || cbid == CUPTI_CBID_STATE_WARNING)) {
      ReportStateNotification(tracer, cbid, static_cast<const CUpti_StateData*>(cbdata));
    }
  }
  if (tracer->light && tracer->tracing.load(std::memory_order_relaxed)) tracer->light->OnCallback(domain, cbid, cbdata);
  if (tracer->achieved) tracer->achieved->OnCallback(domain, cbid, cbdata);
  // Last: CUPTI's way to detach is cuptiFinalize at an API's exit (cupti_controller.h).
  if (tracer->controller && (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
      static_cast<const CUpti_CallbackData*>(cbdata)->callbackSite == CUPTI_API_EXIT &&
      tracer->tracing.load(std::memory_order_relaxed)) {
    tracer->controller->FinalizeFromCallback();
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  *max_num_records = 0;  // as many as fit
  Tracer* tracer = g_tracer;
  *buffer = tracer != nullptr && tracer->session ? tracer->session->AcquireBuffer(size) : nullptr;
  if (*buffer == nullptr) *size = 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                              size_t valid_size) {
  Tracer* tracer = g_tracer;
  if (tracer == nullptr || !tracer->session || TraceSession::InForkedChild()) return;
  // Called with none of our locks held (CUPTI may hold its own; see Kineto's ABBA note).
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
  tracer->session->CompleteBuffer(buffer, valid_size, dropped);
}

void AtExit() {
  // A forked child inherits this handler but must not touch CUPTI or the parent's file.
  if (TraceSession::InForkedChild()) return;
  Tracer* tracer = g_tracer;
  if (tracer == nullptr || !tracer->session) return;
  tracer->session->Finish("complete");
  tracer->tracing.store(false);
}

// PM sampling: CUPTI creates its profiler state (and loads libnvperf_*) lazily, at set-up, at the
// first decode and at the first evaluation, and what it creates then is torn down at exit
// before any handler registered earlier (atexit is LIFO): ours from InitializeTracing included.
// Registering the same handler again after each of those moments runs it first, while PM
// sampling's state is still whole (pm_collector.h). AtExit runs once; later calls do nothing.
void RegisterExitHandlerAgain() { atexit(AtExit); }

}  // namespace

namespace tracer_internal {

// `again`: attaching after a detach (OCCTRACE_LIGHT_DETACH). DEVICE records are not asked for
// again: CUPTI sent every device's at the first attach, and the writer takes each once.
bool EnableTracing(Tracer* tracer, bool again) {
  CUpti_SubscriberHandle sub = tracer->subscriber;
  OCC_CUPTI_CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
  OCC_CUPTI_CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  // Per-function facts (barriers, local memory) from the cubin; optional: tracing goes on without.
  OCC_CUPTI_LOG(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED));
  OCC_CUPTI_CHECK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_STATE));
  // With the range profiler measuring every launch (`all`), CUPTI's per-thread activity
  // buffers (its default) leave one buffer in flight per profiled launch until CUPTI hands it
  // back, which can be seconds: at ~300 profiled launches/s the pool ran dry and 1,028-1,414
  // of 3,438 kernel records were dropped (H200, 2026-11-21; more frequent flushes made it
  // worse). Shared buffers: 0 dropped. In `sample` mode the budget keeps profiled launches far
  // rarer, and shared buffers cost 0.7 us per launch on the program's threads (H100,
  // 2026-11-25; docs/performance.md), so every other mode keeps CUPTI's per-thread default.
  // Must be set before the callbacks are registered.
  if (tracer->achieved && tracer->achieved->NeedsSharedActivityBuffers()) {
    uint8_t per_thread = 0;
    size_t size = sizeof(per_thread);
    OCC_CUPTI_LOG(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &per_thread));
  }
  // Our buffers reach CUPTI zeroed (TraceSession::AcquireBuffer), so CUPTI does not zero them on
  // the application's thread.
  {
    uint8_t zeroed = 1;
    size_t size = sizeof(zeroed);
    OCC_CUPTI_LOG(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed));
  }
  OCC_CUPTI_CHECK(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted));
  if (!again) OCC_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE));
  OCC_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT));
  // CONCURRENT_KERNEL, never KERNEL: the latter serializes every kernel of the program. Light
  // tracing switches it on and off for its timing windows (set_kernel_records) instead.
  // Light tracing keeps them on until its first window ends (kernel_windows.h).
  if (tracer->light && !tracer->light->EnableCallbacks(tracer->subscriber)) return false;
  if (!again) OCC_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  return true;
}

CUptiResult Subscribe(Tracer* tracer, CUpti_SubscriberHandle* subscriber, std::string* other) {
  char other_subscriber[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "occtrace";
  params.oldSubscriberName = other_subscriber;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  const CUptiResult subscribed = cuptiSubscribe_v2(subscriber, OnCallback, tracer, &params);
  *other = other_subscriber[0] != '\0' ? other_subscriber : "unnamed";
  return subscribed;
}

std::string CuptiResultText(CUptiResult result) {
  const char* message = nullptr;
  if (cuptiGetResultString(result, &message) != CUPTI_SUCCESS || message == nullptr) return "unknown CUPTI error";
  return message;
}

}  // namespace tracer_internal

namespace {

// A subscribed Tracer, or nullptr (with one line) when CUPTI refused: the program runs untraced.
Tracer* SubscribeTracer() {
  auto* tracer = new Tracer;
  std::string other_subscriber;
  const CUptiResult subscribed = Subscribe(tracer, &tracer->subscriber, &other_subscriber);
  if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    // CUPTI 13.0 allows one subscriber: torch.profiler, Nsight Systems/Compute,
    // compute-sanitizer or cuda-gdb got there first.
    LogLine("another CUPTI client (%s) is already active in this process; running untraced",
            other_subscriber.c_str());
    delete tracer;
    return nullptr;
  }
  if (!detail::CheckCupti(subscribed, "cuptiSubscribe_v2", __FILE__, __LINE__, "running untraced")) {
    delete tracer;
    return nullptr;
  }
  return tracer;
}

void Unsubscribe(Tracer* tracer) {
  cuptiUnsubscribe(tracer->subscriber);
  delete tracer;
}

// SessionHooks::final_meta: what the profiler, light tracing, the launch hook and the
// attachment report at the end of the run.
std::vector<std::pair<std::string, std::string>> FinalMeta(Tracer* tracer) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (tracer->achieved) {
    rows = tracer->achieved->SessionMeta();
  } else {
    rows.emplace_back("achieved_mode", "off");
  }
  if (tracer->light) {
    rows.emplace_back("light_windows_refused_by_profiler", std::to_string(tracer->windows_refused_by_profiler.load()));
    rows.emplace_back("light_functions_unreadable", std::to_string(tracer->light->functions_unreadable()));
    rows.emplace_back("light_captured_launches", std::to_string(tracer->light->captured_launches()));
  }
  if (LaunchHook* hook = tracer->hook.load(std::memory_order_acquire)) {
    for (auto& row : hook->Meta()) rows.push_back(std::move(row));
  }
  if (tracer->detaches) {
    for (auto& row : tracer->controller->Meta()) rows.push_back(std::move(row));
    for (auto& row : tracer->ids.Meta()) rows.push_back(std::move(row));
    rows.emplace_back("light_detach_graphs_read_by_hook", std::to_string(tracer->light->graphs_read_by_hook()));
    const std::string pinned = tracer->controller->pinned();
    rows.emplace_back("light_detach_stopped", pinned.empty() ? "no" : pinned);
    rows.emplace_back("light_detach_windows_kept_attached", std::to_string(tracer->windows_kept_attached));
  }
  return rows;
}

SessionHooks MakeSessionHooks(Tracer* tracer, Mode mode) {
  SessionHooks hooks;
  hooks.flush_activity = [tracer](bool forced) {
    if (!tracer->tracing.load()) return;
    // Detached: nothing is held (flushed at detach).
    tracer->controller->IfAttached(
        [forced] { OCC_CUPTI_LOG(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0)); });
  };
  hooks.before_final_flush = [tracer] {
    if (tracer->achieved) tracer->achieved->Shutdown();
    tracer->controller->Stop();  // attached for the final flush if it can be; no more events
  };
  hooks.set_kernel_records = [tracer](bool on) { return SetKernelRecords(tracer, on); };
  hooks.final_meta = [tracer] { return FinalMeta(tracer); };
  hooks.first_pm_image_written = RegisterExitHandlerAgain;  // PM sampling only
  hooks.cupti_timestamp = [tracer]() -> uint64_t {
    uint64_t now = 0;
    return tracer->tracing.load() && cuptiGetTimestamp(&now) == CUPTI_SUCCESS ? now : 0;
  };
  hooks.pm_work = [tracer](const PmWorkReport& report) {
    if (PmCollector* collector = tracer->pm.load()) collector->NoteWork(report);
  };
  // Detached, launches carry the driver's ids until the writer translates them.
  if (mode == Mode::kLightDetached) {
    hooks.translate_launch_ids = [tracer](LaunchCall* call) { tracer->ids.Translate(&call->context_id, &call->stream_id); };
  }
  hooks.light_tick = [tracer](int64_t now_ns, bool records_on) { LightTick(tracer, now_ns, records_on); };
  return hooks;
}

void WriteStartMeta(TraceSession& session, const Settings& settings, const std::string& path) {
  uint32_t cupti_version = 0;
  session.SetMeta("cupti_version", cuptiGetVersion(&cupti_version) == CUPTI_SUCCESS ? std::to_string(cupti_version) : "unknown");
  session.SetMeta("cupti_api_version_compiled", std::to_string(CUPTI_API_VERSION));
  int driver_version = 0;
  session.SetMeta("cuda_driver_version",
                  Driver().cuDriverGetVersion != nullptr && Driver().cuDriverGetVersion(&driver_version) == CUDA_SUCCESS
                      ? VersionString(driver_version) : "unknown");
  session.SetMeta("cuda_runtime_version", RuntimeVersion());
  session.SetMeta("setting_output_pattern", settings.output_pattern);
  session.SetMeta("setting_force", settings.force ? "1" : "0");
  session.SetMeta("output_path", path);
}

// Mode::kLight: launches from the launch callbacks. kLightDetached: also from the launch hook,
// which is what records them while CUPTI is gone.
void SetUpLight(Tracer* tracer, bool detached) {
  LaunchCallStreams* launch_calls = tracer->session->launch_calls();
  if (launch_calls == nullptr) return;
  LightTracerOptions options;
  options.cupti_free = detached;
  tracer->light = std::make_unique<LightTracer>(
      launch_calls, [tracer] { if (tracer->session) tracer->session->NotifyNewLaunchShape(); }, options);
  if (!detached) return;
  tracer->light->SetIdTranslation(&tracer->ids);
  tracer->detaches = true;
}

// Every mode: the controller, pinned attached unless light tracing detaches; the launch
// callbacks are on at setup in light tracing (LightTracer::EnableCallbacks).
void CreateController(Tracer* tracer, Mode mode) {
  const char* pinned = tracer->detaches ? "" : mode == Mode::kFull ? "full trace" : "light tracing without detach";
  const bool callbacks_on = mode == Mode::kLight || mode == Mode::kLightDetached;
  tracer->controller = std::make_unique<CuptiController>(RealCuptiSeam(tracer), pinned, callbacks_on);
}

// The achieved-occupancy profiler of the settings, if any (none in kLightDetached: settings.h).
void CreateAchieved(Tracer* tracer, const Settings& settings) {
  try {
    if (settings.achieved.mode == AchievedMode::kPm) {
      std::unique_ptr<PmCollector> collector = CreatePmCollector(
          settings.pm,
          [tracer](PmImage&& image) {
            if (tracer->session) tracer->session->SubmitPmImage(std::move(image));
          },
          RegisterExitHandlerAgain);
      tracer->pm.store(collector.get());
      tracer->achieved = std::move(collector);
    } else {
      tracer->achieved = CreateAchievedProfiler(
          settings.achieved,
          [tracer](AchievedSample&& sample) {
            if (tracer->session) tracer->session->SubmitAchieved(std::move(sample));
          },
          /*light_tracing=*/tracer->light != nullptr);
    }
  } catch (const std::exception& e) {
    LogLine("achieved-occupancy profiler unavailable: %s", e.what());
    tracer->pm.store(nullptr);
    tracer->achieved.reset();
  }
}

// Mode::kLightDetached: the launch hook, or why there is none in OCC_META.
void InstallLaunchHook(Tracer* tracer) {
  TraceSession& session = *tracer->session;
  LaunchHook* hook = LaunchHook::Install(tracer->light.get(), tracer->controller.get(), SteadyNs());
  if (hook == nullptr) {
    LogLine("light tracing: the launch hook found no driver launch entry points; CUPTI stays attached, with its "
            "launch callbacks on");
    tracer->controller->Pin("no launch hook");
  }
  session.SetMeta("light_hook", hook != nullptr ? "on" : "unavailable");
  tracer->hook.store(hook, std::memory_order_release);
}

void WatchSubscribers(TraceSession& session, bool on) {
  if (!on) {
    session.SetMeta("subscriber_watch", "off");
    return;
  }
  const RedirectReport watch = WatchForRefusedSubscribers(OnRefusedSubscriber);
  session.SetMeta("subscriber_watch", std::to_string(watch.rewritten) + " call sites in " +
                                          std::to_string(watch.objects.size()) + " libraries" +
                                          (watch.failed > 0 ? ", " + std::to_string(watch.failed) + " failed" : ""));
}

}  // namespace

// Runs inside cuInit. Reads no environment of its own: the settings are parsed once
// (settings.h), and the mode they yield decides what is set up.
int InitializeTracing() {
  static std::atomic<bool> initialized{false};
  if (initialized.exchange(true) || TraceSession::InForkedChild()) return 1;

  const Settings settings = ReadProcessSettings();
  const Mode mode = settings.mode();
  Tracer* tracer = SubscribeTracer();
  if (tracer == nullptr) return 1;
  ClaimedOutput output = ClaimOutputFile(settings.output_pattern, CurrentProcessContext(), settings.force);
  if (!output.ok) {
    LogLine("%s; running untraced", output.error.c_str());
    Unsubscribe(tracer);
    return 1;
  }
  // output.lock_fd stays open, never closed: it tells a later --force claim of the same name
  // (a helper process of this job) that this process is writing the file (output_path.h).
  SessionOptions options = settings.session;
  options.path = output.path;
  if (settings.triton_metadata) options.triton_cache_roots = TritonCacheIndex::DefaultRoots();
  tracer->session = TraceSession::Start(options, MakeSessionHooks(tracer, mode));
  if (!tracer->session) {  // the failing call printed why
    Unsubscribe(tracer);
    return 1;
  }
  TraceSession& session = *tracer->session;
  WriteStartMeta(session, settings, output.path);

  // Before CUPTI can report a module: the unwinder's first use may set itself up (allocate).
  WarmUpLoaderCapture();
  g_tracer = tracer;
  switch (mode) {
    case Mode::kFull: break;
    case Mode::kLight: SetUpLight(tracer, /*detached=*/false); break;
    case Mode::kLightDetached: SetUpLight(tracer, /*detached=*/true); break;
  }
  CreateController(tracer, mode);
  CreateAchieved(tracer, settings);
  tracer->tracing.store(true);
  if (!EnableTracing(tracer)) {  // the failing call printed "...; tracing off"
    tracer->tracing.store(false);
    session.Finish("failed: CUPTI setup");
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiUnsubscribe(tracer->subscriber);
    return 1;
  }
  if (tracer->achieved) tracer->achieved->EnableCallbacks(tracer->subscriber);
  if (tracer->detaches) InstallLaunchHook(tracer);
  WatchSubscribers(session, settings.watch_subscribers);
  // Registered inside cuInit, i.e. after the program's own static-init atexit entries (fatbin
  // unregistration, libtorch): LIFO order runs ours first, while the driver still works.
  atexit(AtExit);
  session.InstallSignalHandlers();
  return 1;
}

}  // namespace occ::inj
