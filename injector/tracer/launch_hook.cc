#include "injector/tracer/launch_hook.h"

#include <cuda.h>
#include <cupti.h>  // also brings generated_cuda_meta.h (launch parameter structs)
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "injector/tracer/cupti_controller.h"
#include "injector/common/errors.h"
#include "injector/tracer/import_redirect.h"
#include "injector/light/light_tracer.h"
#include "injector/session/trace_session.h"

namespace occ::inj {

HookWatchPolicy::Decision HookWatchPolicy::Tick(int64_t now_ns, bool objects_added, bool modules_loaded, bool misses,
                                                bool records_on) {
  Decision decision;
  if (objects_added || modules_loaded || misses) watch_until_ns_ = std::max(watch_until_ns_, now_ns + settings_.watch_ns);
  if (now_ns >= next_periodic_ns_) {
    watch_until_ns_ = std::max(watch_until_ns_, now_ns + settings_.periodic_watch_ns);
    next_periodic_ns_ = now_ns + settings_.periodic_period_ns;
  }
  if (objects_added) rescan_pending_ = true;
  if (misses) rescan_for_misses_ = true;
  if ((rescan_pending_ || rescan_for_misses_) && now_ns - last_rescan_ns_ >= settings_.rescan_interval_ns) {
    decision.rescan = true;
  }
  if (!records_on) callbacks_ = fell_back_ || now_ns < watch_until_ns_;
  decision.callbacks = callbacks_;
  return decision;
}

void HookWatchPolicy::Rescanned(int64_t now_ns, int rewritten) {
  last_rescan_ns_ = now_ns;
  rescan_pending_ = false;
  if (!rescan_for_misses_) return;
  rescan_for_misses_ = false;
  fruitless_rescans_ = rewritten > 0 ? 0 : fruitless_rescans_ + 1;
  if (fruitless_rescans_ >= settings_.fruitless_rescans_to_fall_back) fell_back_ = true;
}

namespace {

// The launch entry points, then (CUPTI detached between windows only) those whose CUPTI
// callbacks light tracing needs and loses while detached: graph instantiation, module unload.
enum class Shape {
  kClassic, kCooperative, kEx, kGraph,
  kInstantiateWithFlags, kInstantiateWithParams, kModuleUnload, kLibraryUnload, kGetProcAddress
};

// One rewritten entry point: the real function a wrapper calls, and the callback id whose
// parameter struct the wrapper hands to the light tracer.
struct Target {
  void* real = nullptr;
  CUpti_CallbackId cbid = 0;
};

// Distinct addresses per shape (dlsym and cuGetProcAddress may answer differently, legacy and
// per-thread-stream versions differ): 8 each is twice what CUDA 13.0 gives.
constexpr size_t kSlotsPerShape = 8;
std::array<Target, kSlotsPerShape> g_classic, g_cooperative, g_ex, g_graph, g_instantiate_flags, g_instantiate_params,
    g_module_unload, g_library_unload, g_get_proc_address;
std::atomic<LightTracer*> g_light{nullptr};
std::atomic<uint64_t> g_module_loads{0};
decltype(&::cuCtxGetCurrent) g_ctx_get_current = nullptr;

// Counts the thread into a hooked call; the outermost one records.
class HookedCall {
 public:
  HookedCall() : thread_(ThisThreadsHookedLaunch()) {
    if (thread_.depth++ == 0) thread_.correlation = 0;
  }
  ~HookedCall() { --thread_.depth; }
  HookedCall(const HookedCall&) = delete;
  HookedCall& operator=(const HookedCall&) = delete;
  bool outermost() const { return thread_.depth == 1; }
  uint32_t correlation() const { return thread_.correlation; }

 private:
  HookedLaunchThread& thread_;
};

// The light tracer to record a successful outermost hooked call into, or null. A forked child
// records nothing (the parent's session owns the trace), as in the callbacks.
LightTracer* Recorder(CUresult result, const HookedCall& call) {
  if (result != CUDA_SUCCESS || !call.outermost() || TraceSession::InForkedChild()) return nullptr;
  LightTracer* light = g_light.load(std::memory_order_relaxed);
  return light;
}

CUcontext CurrentContext() {
  CUcontext context = nullptr;
  if (g_ctx_get_current == nullptr || g_ctx_get_current(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

template <size_t N>
CUresult CUDAAPI ClassicLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream stream, void** params, void** extra) {
  const Target& target = g_classic[N];
  HookedCall call;
  const CUresult result = reinterpret_cast<decltype(&::cuLaunchKernel)>(target.real)(
      f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
  if (LightTracer* light = Recorder(result, call)) {
    const cuLaunchKernel_params args{f, gx, gy, gz, bx, by, bz, shared, stream, params, extra};
    light->OnHookedKernelLaunch(target.cbid, &args, CurrentContext(), call.correlation());
  }
  return result;
}

template <size_t N>
CUresult CUDAAPI CooperativeLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, CUstream stream, void** params) {
  const Target& target = g_cooperative[N];
  HookedCall call;
  const CUresult result = reinterpret_cast<decltype(&::cuLaunchCooperativeKernel)>(target.real)(
      f, gx, gy, gz, bx, by, bz, shared, stream, params);
  if (LightTracer* light = Recorder(result, call)) {
    const cuLaunchCooperativeKernel_params args{f, gx, gy, gz, bx, by, bz, shared, stream, params};
    light->OnHookedKernelLaunch(target.cbid, &args, CurrentContext(), call.correlation());
  }
  return result;
}

template <size_t N>
CUresult CUDAAPI ExLaunch(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  const Target& target = g_ex[N];
  HookedCall call;
  const CUresult result = reinterpret_cast<decltype(&::cuLaunchKernelEx)>(target.real)(config, f, params, extra);
  if (LightTracer* light = Recorder(result, call)) {
    const cuLaunchKernelEx_params args{config, f, params, extra};
    light->OnHookedKernelLaunch(target.cbid, &args, CurrentContext(), call.correlation());
  }
  return result;
}

template <size_t N>
CUresult CUDAAPI GraphLaunch(CUgraphExec exec, CUstream stream) {
  const Target& target = g_graph[N];
  HookedCall call;
  const CUresult result = reinterpret_cast<decltype(&::cuGraphLaunch)>(target.real)(exec, stream);
  if (LightTracer* light = Recorder(result, call)) {
    const cuGraphLaunch_params args{exec, stream};
    light->OnHookedGraphLaunch(target.cbid, &args, CurrentContext(), call.correlation());
  }
  return result;
}

// Graph instantiation and module unload: not launches, so no HookedCall (a launch made inside
// them, if any, is the driver's own). A forked child records nothing.
LightTracer* NonLaunchRecorder(CUresult result) {
  if (result != CUDA_SUCCESS || TraceSession::InForkedChild()) return nullptr;
  return g_light.load(std::memory_order_relaxed);
}

template <size_t N>
CUresult CUDAAPI InstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  LightTracer::BeginHookedInstantiation();
  const CUresult result =
      reinterpret_cast<decltype(&::cuGraphInstantiateWithFlags)>(g_instantiate_flags[N].real)(exec, graph, flags);
  if (LightTracer* light = NonLaunchRecorder(result); light != nullptr && exec != nullptr) {
    light->OnHookedGraphInstantiated(*exec, graph);
  }
  return result;
}

template <size_t N>
CUresult CUDAAPI InstantiateWithParams(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  LightTracer::BeginHookedInstantiation();
  const CUresult result =
      reinterpret_cast<decltype(&::cuGraphInstantiateWithParams)>(g_instantiate_params[N].real)(exec, graph, params);
  if (LightTracer* light = NonLaunchRecorder(result); light != nullptr && exec != nullptr) {
    light->OnHookedGraphInstantiated(*exec, graph);
  }
  return result;
}

template <size_t N>
CUresult CUDAAPI ModuleUnload(CUmodule module) {
  const CUresult result = reinterpret_cast<decltype(&::cuModuleUnload)>(g_module_unload[N].real)(module);
  if (LightTracer* light = NonLaunchRecorder(result)) light->OnHookedModuleUnload();
  return result;
}

template <size_t N>
CUresult CUDAAPI LibraryUnload(CUlibrary library) {
  const CUresult result = reinterpret_cast<decltype(&::cuLibraryUnload)>(g_library_unload[N].real)(library);
  if (LightTracer* light = NonLaunchRecorder(result)) light->OnHookedModuleUnload();
  return result;
}

std::vector<ImportRedirect>& Redirects();

// What cuGetProcAddress answers, hooked: a launch entry point's address becomes its wrapper's,
// so that a library asking the driver for its pointers after the last scan (cuDNN does, at its
// first use: 5 % of train_small.py's launches missed the hook until a rescan, H100,
// 2026-11-25) stores the wrapper. Redirects() is complete before any wrapper runs and never
// changes after.
template <size_t N>
CUresult CUDAAPI GetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult* status) {
  using Real = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  const CUresult result = reinterpret_cast<Real>(g_get_proc_address[N].real)(symbol, pfn, version, flags, status);
  if (result != CUDA_SUCCESS || pfn == nullptr || *pfn == nullptr) return result;
  for (const ImportRedirect& redirect : Redirects()) {
    if (redirect.original == *pfn) {
      *pfn = redirect.replacement;
      break;
    }
  }
  return result;
}

template <size_t... I>
std::array<void*, kSlotsPerShape> Wrappers(Shape shape, std::index_sequence<I...>) {
  switch (shape) {
    case Shape::kClassic: return {reinterpret_cast<void*>(&ClassicLaunch<I>)...};
    case Shape::kCooperative: return {reinterpret_cast<void*>(&CooperativeLaunch<I>)...};
    case Shape::kEx: return {reinterpret_cast<void*>(&ExLaunch<I>)...};
    case Shape::kGraph: return {reinterpret_cast<void*>(&GraphLaunch<I>)...};
    case Shape::kInstantiateWithFlags: return {reinterpret_cast<void*>(&InstantiateWithFlags<I>)...};
    case Shape::kInstantiateWithParams: return {reinterpret_cast<void*>(&InstantiateWithParams<I>)...};
    case Shape::kModuleUnload: return {reinterpret_cast<void*>(&ModuleUnload<I>)...};
    case Shape::kLibraryUnload: return {reinterpret_cast<void*>(&LibraryUnload<I>)...};
    case Shape::kGetProcAddress: return {reinterpret_cast<void*>(&GetProcAddress<I>)...};
  }
  return {};
}

std::array<Target, kSlotsPerShape>& TargetsOf(Shape shape) {
  switch (shape) {
    case Shape::kClassic: return g_classic;
    case Shape::kCooperative: return g_cooperative;
    case Shape::kEx: return g_ex;
    case Shape::kGraph: return g_graph;
    case Shape::kInstantiateWithFlags: return g_instantiate_flags;
    case Shape::kInstantiateWithParams: return g_instantiate_params;
    case Shape::kModuleUnload: return g_module_unload;
    case Shape::kLibraryUnload: return g_library_unload;
    case Shape::kGetProcAddress: return g_get_proc_address;
  }
  return g_classic;
}

struct EntryPoint {
  const char* name;
  CUpti_CallbackId legacy;
  CUpti_CallbackId per_thread;
  Shape shape;
};
constexpr EntryPoint kEntryPoints[] = {
    {"cuLaunchKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, Shape::kClassic},
    {"cuLaunchCooperativeKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
     CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, Shape::kCooperative},
    {"cuLaunchKernelEx", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, Shape::kEx},
    {"cuGraphLaunch", CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, Shape::kGraph},
};
// CUPTI detached between windows only. Entry points without a per-thread-stream version name
// the same callback id twice, so that cuGetProcAddress's answers for both flags agree.
constexpr EntryPoint kDetachedEntryPoints[] = {
    {"cuGraphInstantiateWithFlags", CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, Shape::kInstantiateWithFlags},
    {"cuGraphInstantiateWithParams", CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz, Shape::kInstantiateWithParams},
    {"cuModuleUnload", CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, Shape::kModuleUnload},
    {"cuLibraryUnload", CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload, CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload,
     Shape::kLibraryUnload},
    // By its versioned name only: plain "cuGetProcAddress" is the older ABI without `status`.
    {"cuGetProcAddress_v2", CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
     Shape::kGetProcAddress},
};

struct Found {
  CUpti_CallbackId cbid;
  Shape shape;
  const char* name;
  bool ambiguous;
};

// Every address by which a program can reach a launch entry point, with what it is.
std::map<void*, Found> FindEntryPoints(void* driver) {
  std::map<void*, Found> found;
  auto add = [&](void* address, CUpti_CallbackId cbid, Shape shape, const char* name) {
    if (address == nullptr) return;
    auto [it, inserted] = found.emplace(address, Found{cbid, shape, name, false});
    // One address answering for two callback ids would record the wrong stream semantics.
    if (!inserted && it->second.cbid != cbid) it->second.ambiguous = true;
  };
  using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc_address = reinterpret_cast<GetProcAddress>(dlsym(driver, "cuGetProcAddress_v2"));
  // With CUPTI detached (both roles detach it) its graph-instantiation and module-unload
  // callbacks are gone too: those entry points are wrapped as well.
  std::vector<EntryPoint> entries(std::begin(kEntryPoints), std::end(kEntryPoints));
  entries.insert(entries.end(), std::begin(kDetachedEntryPoints), std::end(kDetachedEntryPoints));
  for (const EntryPoint& entry : entries) {
    add(dlsym(driver, entry.name), entry.legacy, entry.shape, entry.name);
    const std::string per_thread_name = std::string(entry.name) + "_ptsz";
    add(dlsym(driver, per_thread_name.c_str()), entry.per_thread, entry.shape, entry.name);
    if (get_proc_address == nullptr) continue;
    for (int version : {CUDA_VERSION, 12000}) {
      for (cuuint64_t flags : {CU_GET_PROC_ADDRESS_LEGACY_STREAM, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM}) {
        void* address = nullptr;
        CUdriverProcAddressQueryResult status{};
        if (get_proc_address(entry.name, &address, version, flags, &status) != CUDA_SUCCESS ||
            status != CU_GET_PROC_ADDRESS_SUCCESS) {
          continue;
        }
        add(address, flags == CU_GET_PROC_ADDRESS_LEGACY_STREAM ? entry.legacy : entry.per_thread, entry.shape, entry.name);
      }
    }
  }
  return found;
}

std::vector<ImportRedirect>& Redirects() {
  // Filled once by Install, before any wrapper can run; read-only after.
  static auto* redirects = new std::vector<ImportRedirect>;  // leaked: wrappers outlive exit
  return *redirects;
}

// Load address of the object holding this code: libocctrace.so, or the program that links
// the injector statically (the tests).
uintptr_t OwnObjectBase() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&OwnObjectBase), &info) == 0) return 0;
  return reinterpret_cast<uintptr_t>(info.dli_fbase);
}

// The driver's, CUPTI's and occtrace's own pointers stay: occtrace's are the wrappers' targets
// (rewritten, a wrapper would call itself), the driver and CUPTI keep their own tables. Our
// own object is recognized by its load address, whatever its name.
bool Hookable(const std::string& path, uintptr_t base) {
  static const uintptr_t own_base = OwnObjectBase();
  if (base == own_base) return false;
  const std::string_view name = std::string_view(path).substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  for (std::string_view skip : {"libcuda.so", "libcupti.so", "libnvidia-", "libocctrace", "linux-vdso", "ld-linux"}) {
    if (name.starts_with(skip)) return false;
  }
  return true;
}

uint64_t ObjectsAddedSoFar() {
  uint64_t adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* data) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) *static_cast<uint64_t*>(data) = info->dlpi_adds;
        return 1;
      },
      &adds);
  return adds;
}

}  // namespace

LaunchHook::LaunchHook(LightTracer* light, CuptiController* controller, int64_t now_ns)
    : light_(light), controller_(controller), policy_(HookWatchPolicy::Settings{}, now_ns), last_new_code_ns_(now_ns) {}

LaunchHook* LaunchHook::Install(LightTracer* light, CuptiController* controller, int64_t now_ns) {
  static LaunchHook* installed = nullptr;
  if (installed != nullptr) return nullptr;
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  g_ctx_get_current = reinterpret_cast<decltype(&::cuCtxGetCurrent)>(dlsym(driver, "cuCtxGetCurrent"));
  if (g_ctx_get_current == nullptr) return nullptr;
  std::map<Shape, size_t> used;
  std::vector<ImportRedirect>& redirects = Redirects();
  for (const auto& [address, found] : FindEntryPoints(driver)) {
    if (found.ambiguous) continue;
    size_t& next = used[found.shape];
    if (next >= kSlotsPerShape) continue;
    TargetsOf(found.shape)[next] = Target{address, found.cbid};
    const std::array<void*, kSlotsPerShape> wrappers = Wrappers(found.shape, std::make_index_sequence<kSlotsPerShape>{});
    redirects.push_back(ImportRedirect{found.name, wrappers[next], address});
    ++next;
  }
  if (redirects.empty()) return nullptr;
  g_light.store(light, std::memory_order_release);
  auto* hook = new LaunchHook(light, controller, now_ns);  // leaked: wrappers run until exit
  hook->installed_ns_ = now_ns;
  hook->entry_points_ = static_cast<int>(redirects.size());
  light->SetHookInstalled();
  hook->objects_added_seen_ = ObjectsAddedSoFar();
  hook->objects_added_at_last_scan_ = hook->objects_added_seen_;
  hook->Rescan();
  installed = hook;
  return hook;
}

int LaunchHook::Rescan() {
  const int64_t began = SteadyNs();
  const RedirectReport report = RedirectStoredPointers(Redirects(), Hookable);
  const int64_t took = SteadyNs() - began;
  scan_ns_total_ += took;
  scan_ns_max_ = std::max(scan_ns_max_, took);
  ++rescans_;
  rewritten_total_ += report.rewritten;
  for (const std::string& object : report.objects) {
    if (std::find(hooked_objects_.begin(), hooked_objects_.end(), object) == hooked_objects_.end()) {
      hooked_objects_.push_back(object);
    }
  }
  return report.rewritten;
}

void LaunchHook::NoteModuleLoaded() { g_module_loads.fetch_add(1, std::memory_order_relaxed); }

void LaunchHook::Tick(int64_t now_ns, bool records_on) {
  const uint64_t adds = ObjectsAddedSoFar();
  const uint64_t modules = g_module_loads.load(std::memory_order_relaxed);
  const uint64_t misses = light_->launches_outside_hook();
  const HookWatchPolicy::Decision decision =
      policy_.Tick(now_ns, adds != objects_added_seen_, modules != modules_seen_, misses != misses_seen_, records_on);
  const uint64_t new_functions = light_->new_functions();
  if (adds != objects_added_seen_ || modules != modules_seen_ || new_functions != new_functions_seen_) {
    last_new_code_ns_ = now_ns;
  }
  new_functions_seen_ = new_functions;
  objects_added_seen_ = adds;
  modules_seen_ = modules;
  misses_seen_ = misses;
  // CUPTI detached between windows: nothing catches a missed launch until the next window, so
  // a library loaded since the last tick is scanned at once, not after rescan_interval_ns.
  const bool scan_now = decision.rescan || adds != objects_added_at_last_scan_;
  if (scan_now) {
    objects_added_at_last_scan_ = adds;
    if (rescan_at_s_.size() < kMaxRescanTimes) rescan_at_s_.push_back(static_cast<double>(now_ns - installed_ns_) / 1e9);
    policy_.Rescanned(now_ns, Rescan());
  }
  // CUPTI detached between windows: the callbacks are on for every whole window (they watch the
  // hook and teach the id translation, light_tracer.h), and, while CUPTI stays attached
  // between windows, whenever the policy wants them (detached, switching them is a no-op). The
  // first GPU run left them off between windows while CUPTI stayed attached after CUDA graphs
  // appeared, and one cuBLAS launch the hook missed was lost.
  const bool callbacks = decision.callbacks || records_on;
  std::string error;
  if (!controller_->SetLaunchCallbacks(callbacks, &error) && !error.empty() && switch_error_.empty()) {
    switch_error_ = error;
    LogLine("light tracing: switching the launch callbacks failed (%s)", error.c_str());
  }
}

bool LaunchHook::ReadyToDetach(int64_t now_ns) {
  const uint64_t misses = light_->launches_outside_hook();
  const bool quiet = misses == misses_at_last_detach_check_ && !policy_.fell_back() && !policy_.rescan_pending() &&
                     now_ns - last_new_code_ns_ >= kQuietBeforeDetachNs;
  misses_at_last_detach_check_ = misses;
  return quiet;
}

std::vector<std::pair<std::string, std::string>> LaunchHook::Meta() const {
  std::string objects;
  for (const std::string& object : hooked_objects_) {
    if (!objects.empty()) objects += ",";
    objects += object.substr(object.rfind('/') == std::string::npos ? 0 : object.rfind('/') + 1);
  }
  std::string rescans_at;
  for (double at : rescan_at_s_) {
    char text[32];
    std::snprintf(text, sizeof(text), "%s%.1f", rescans_at.empty() ? "" : ",", at);
    rescans_at += text;
  }
  char callbacks_on_ms[32];
  std::snprintf(callbacks_on_ms, sizeof(callbacks_on_ms), "%.1f", controller_->callbacks_on_ms());
  return {
      {"light_hook_entry_points", std::to_string(entry_points_)},
      {"light_hook_pointers_rewritten", std::to_string(rewritten_total_)},
      {"light_hook_rescans", std::to_string(rescans_)},
      {"light_hook_scan_ms_total", std::to_string(static_cast<double>(scan_ns_total_) / 1e6)},
      {"light_hook_scan_ms_max", std::to_string(static_cast<double>(scan_ns_max_) / 1e6)},
      {"light_hook_objects", objects},
      {"light_hook_launches", std::to_string(light_->hooked_launches())},
      {"light_hook_launches_outside", std::to_string(light_->launches_outside_hook())},
      {"light_hook_fallback", policy_.fell_back() ? "1" : "0"},
      {"light_hook_callback_switches", std::to_string(controller_->figures().callback_switches)},
      {"light_hook_callbacks_on_ms", callbacks_on_ms},
      {"light_hook_rescans_at_s", rescans_at.empty() ? "none" : rescans_at},
  };
}

}  // namespace occ::inj
