#include "bench/injector/bare_cupti_phases.h"

#include <cupti.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "injector/achieved/achieved_launch.h"  // the launch callback ids the achieved profiler enables

namespace bare_cupti {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

enum class Mode { kCallbacksOff, kRecordsOff, kRecordsDetach, kWindowsKeep, kWindowsDetach, kIds };

struct Phases {
  Mode mode = Mode::kRecordsOff;
  milliseconds on{3000};
  milliseconds window{200};
  milliseconds period{5000};
};

// What the run's phases cost, printed at exit.
struct Figures {
  std::vector<double> attach_us;
  std::vector<double> finalize_us;
  std::vector<double> detach_wait_ms;
  std::vector<double> switch_on_us;
  std::vector<double> switch_off_us;
  std::vector<double> records_per_window;
  int errors = 0;
  std::string first_error;
};

constexpr size_t kBufferBytes = 8u << 20;

std::mutex g_mutex;  // guards what follows, up to the atomics
std::condition_variable g_changed;
Figures g_figures;
std::string g_mode_name;
CUpti_SubscriberHandle g_subscriber = nullptr;
bool g_detached = false;
bool g_stopping = false;
std::atomic<bool> g_detach_requested{false};
std::atomic<uint64_t> g_kernel_records{0};
bool g_ids_mode = false;  // set before the first attach
std::atomic<uint64_t> g_ids_seen{0};
constexpr uint64_t kIdsEvery = 16;

double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Never called with g_mutex held.
bool Check(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown error";
  std::lock_guard lock(g_mutex);
  if (g_figures.errors++ == 0) g_figures.first_error = std::string(call) + ": " + text;
  return false;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  *max_num_records = 0;
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
}

// Counts kernel records: a window that comes back empty after re-attaching shows that records
// did not flow again.
void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  uint64_t kernels = 0;
  CUpti_Activity* record = nullptr;
  while (valid_size > 0 && cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
  }
  g_kernel_records.fetch_add(kernels, std::memory_order_relaxed);
  std::free(buffer);
}

// CUPTI wants cuptiFinalize called at an API exit, so that no program thread is inside CUPTI
// for that API: the first exit after a detach was requested does it, on the program's thread.
void CheckIds(CUpti_CallbackId cbid, const CUpti_CallbackData* data);

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (g_ids_mode && domain == CUPTI_CB_DOMAIN_DRIVER_API && info->callbackSite == CUPTI_API_ENTER &&
      g_ids_seen.fetch_add(1, std::memory_order_relaxed) % kIdsEvery == 0) {
    CheckIds(cbid, info);
  }
  if (info->callbackSite != CUPTI_API_EXIT) return;
  // A plain load first: in callbacks-off mode every launch passes here.
  if (!g_detach_requested.load(std::memory_order_relaxed) ||
      !g_detach_requested.exchange(false, std::memory_order_acq_rel)) {
    return;
  }
  const Clock::time_point start = Clock::now();
  const CUptiResult result = cuptiFinalize();
  const double us = MicrosSince(start);
  Check(result, "cuptiFinalize");
  std::lock_guard lock(g_mutex);
  g_figures.finalize_us.push_back(us);
  g_detached = true;
  g_changed.notify_all();
}

// `ids` mode: whether what the driver and the C library say without CUPTI matches what CUPTI
// says, for launches seen by the driver launch callbacks (1 in kIdsEvery). A light trace that
// records launches with CUPTI detached must name contexts and streams, and stamp times, the way
// CUPTI's records (taken while attached) do.
struct IdChecks {
  uint64_t compared = 0;
  uint64_t context_equal = 0;
  uint64_t stream_compared = 0;
  uint64_t stream_equal = 0;
  std::string first_context_pair;  // "CUPTI id / driver id" of the first launch compared
  std::string first_stream_pair;
  std::vector<double> realtime_minus_cupti_ns;
  std::vector<double> monotonic_minus_cupti_ns;
} g_ids;  // under g_mutex
using CtxGetId = CUresult (*)(CUcontext, unsigned long long*);
using StreamGetId = CUresult (*)(CUstream, unsigned long long*);
CtxGetId g_ctx_get_id = nullptr;
StreamGetId g_stream_get_id = nullptr;

int64_t ClockNs(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

void CheckIds(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  CUstream stream = nullptr;
  bool per_thread = false;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      stream = static_cast<const cuLaunchKernel_params*>(data->functionParams)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      stream = static_cast<const cuLaunchKernel_ptsz_params*>(data->functionParams)->hStream;
      per_thread = stream == nullptr;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      stream = static_cast<const cuLaunchKernelEx_params*>(data->functionParams)->config->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      stream = static_cast<const cuLaunchKernelEx_ptsz_params*>(data->functionParams)->config->hStream;
      per_thread = stream == nullptr;
      break;
    default:
      return;
  }
  uint64_t cupti_ns = 0;
  const int64_t realtime_before = ClockNs(CLOCK_REALTIME);
  const int64_t monotonic_before = ClockNs(CLOCK_MONOTONIC);
  cuptiGetTimestamp(&cupti_ns);
  uint32_t cupti_context = 0;
  uint32_t cupti_stream = 0;
  unsigned long long driver_context = 0;
  unsigned long long driver_stream = 0;
  const bool contexts = cuptiGetContextId(data->context, &cupti_context) == CUPTI_SUCCESS &&
                        g_ctx_get_id != nullptr && g_ctx_get_id(data->context, &driver_context) == CUDA_SUCCESS;
  const bool streams =
      cuptiGetStreamIdEx(data->context, per_thread ? nullptr : stream, per_thread ? 1 : 0, &cupti_stream) == CUPTI_SUCCESS &&
      g_stream_get_id != nullptr && g_stream_get_id(per_thread ? CU_STREAM_PER_THREAD : stream, &driver_stream) == CUDA_SUCCESS;
  std::lock_guard lock(g_mutex);
  IdChecks& ids = g_ids;
  ++ids.compared;
  ids.realtime_minus_cupti_ns.push_back(static_cast<double>(realtime_before - static_cast<int64_t>(cupti_ns)));
  ids.monotonic_minus_cupti_ns.push_back(static_cast<double>(monotonic_before - static_cast<int64_t>(cupti_ns)));
  if (contexts) {
    ids.context_equal += cupti_context == driver_context ? 1 : 0;
    if (ids.first_context_pair.empty()) ids.first_context_pair = std::to_string(cupti_context) + " / " + std::to_string(driver_context);
  }
  if (streams) {
    ++ids.stream_compared;
    ids.stream_equal += cupti_stream == driver_stream ? 1 : 0;
    if (ids.first_stream_pair.empty()) ids.first_stream_pair = std::to_string(cupti_stream) + " / " + std::to_string(driver_stream);
  }
}

bool Attach(bool records) {
  const Clock::time_point start = Clock::now();
  CUpti_SubscriberHandle subscriber = nullptr;
  if (!Check(cuptiSubscribe(&subscriber, OnCallback, nullptr), "cuptiSubscribe")) return false;
  // cuptiFinalize forgets the buffer callbacks: registered again at every attach.
  const bool ok = !records ||
                  (Check(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted), "cuptiActivityRegisterCallbacks") &&
                   Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable"));
  const double us = MicrosSince(start);
  std::lock_guard lock(g_mutex);
  g_subscriber = subscriber;
  g_detached = false;
  g_figures.attach_us.push_back(us);
  return ok;
}

CUpti_SubscriberHandle Subscriber() {
  std::lock_guard lock(g_mutex);
  return g_subscriber;
}

void SwitchLaunchCallbacks(bool on) {
  const CUpti_SubscriberHandle subscriber = Subscriber();
  for (CUpti_CallbackId cbid : occ::inj::kDriverLaunchCbids) {
    Check(cuptiEnableCallback(on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid), "cuptiEnableCallback(driver)");
  }
  for (CUpti_CallbackId cbid : occ::inj::kRuntimeLaunchCbids) {
    Check(cuptiEnableCallback(on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid), "cuptiEnableCallback(runtime)");
  }
}

void SwitchRecords(bool on) {
  const Clock::time_point start = Clock::now();
  if (on) {
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
  } else {
    Check(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityDisable");
  }
  const double us = MicrosSince(start);
  std::lock_guard lock(g_mutex);
  (on ? g_figures.switch_on_us : g_figures.switch_off_us).push_back(us);
}

void DetachAndWait() {
  const CUpti_SubscriberHandle subscriber = Subscriber();
  // Both domains on before asking: once asked, the next API exit may finalize CUPTI, and a
  // cuptiEnableDomain after that fails (CUPTI_ERROR_NOT_INITIALIZED, seen on an H100).
  Check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain(runtime)");
  Check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(driver)");
  g_detach_requested.store(true, std::memory_order_release);
  const Clock::time_point start = Clock::now();
  std::unique_lock lock(g_mutex);
  g_changed.wait(lock, [] { return g_detached || g_stopping; });
  g_figures.detach_wait_ms.push_back(MicrosSince(start) / 1000.0);
  g_subscriber = nullptr;
}

// Records off, every record delivered (counted), then detached when `detach`.
void EndWindow(bool detach, uint64_t* records_before) {
  SwitchRecords(false);
  Check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  const uint64_t records = g_kernel_records.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(g_mutex);
    g_figures.records_per_window.push_back(static_cast<double>(records - *records_before));
  }
  *records_before = records;
  if (detach) DetachAndWait();
}

// False when the program is exiting.
bool SleepFor(milliseconds duration) {
  std::unique_lock lock(g_mutex);
  return !g_changed.wait_for(lock, duration, [] { return g_stopping; });
}

void RunPhases(Phases phases) {
  uint64_t records = 0;
  if (!SleepFor(phases.on)) return;
  switch (phases.mode) {
    case Mode::kCallbacksOff:
      SwitchLaunchCallbacks(false);
      return;
    case Mode::kIds:
      return;  // the launch callbacks stay on: every launch is a candidate for a check
    case Mode::kRecordsOff:
    case Mode::kRecordsDetach:
      EndWindow(phases.mode == Mode::kRecordsDetach, &records);
      return;
    case Mode::kWindowsKeep:
    case Mode::kWindowsDetach: {
      const bool detach = phases.mode == Mode::kWindowsDetach;
      EndWindow(detach, &records);
      while (SleepFor(std::max(phases.period - phases.window, milliseconds(0)))) {
        if (detach) {
          if (!Attach(/*records=*/true)) return;
        } else {
          SwitchRecords(true);
        }
        if (!SleepFor(phases.window)) return;
        EndWindow(detach, &records);
      }
      return;
    }
  }
}

template <typename T>
std::string Spread(std::vector<T> values, const char* unit) {
  if (values.empty()) return "none";
  std::sort(values.begin(), values.end());
  char text[128];
  std::snprintf(text, sizeof(text), "%zu, median %.0f, min %.0f, max %.0f %s", values.size(),
                static_cast<double>(values[values.size() / 2]), static_cast<double>(values.front()),
                static_cast<double>(values.back()), unit);
  return text;
}

// The first windows' counts in order: whether records came back after each re-attach.
std::string FirstCounts(const std::vector<double>& counts) {
  std::string text;
  for (size_t i = 0; i < counts.size() && i < 40; ++i) {
    text += (i ? " " : "") + std::to_string(static_cast<uint64_t>(counts[i]));
  }
  return counts.size() > 40 ? text + " ..." : text;
}

void ReportIds() {
  const IdChecks& ids = g_ids;
  std::fprintf(stderr,
               "bare_cupti: ids: %llu launches compared (1 in %llu); context ids equal %llu/%llu (first CUPTI / driver: "
               "%s); stream ids equal %llu/%llu (first: %s); CLOCK_REALTIME - cuptiGetTimestamp %s; "
               "CLOCK_MONOTONIC - cuptiGetTimestamp %s\n",
               static_cast<unsigned long long>(ids.compared), static_cast<unsigned long long>(kIdsEvery),
               static_cast<unsigned long long>(ids.context_equal), static_cast<unsigned long long>(ids.compared),
               ids.first_context_pair.c_str(), static_cast<unsigned long long>(ids.stream_equal),
               static_cast<unsigned long long>(ids.stream_compared), ids.first_stream_pair.c_str(),
               Spread(ids.realtime_minus_cupti_ns, "ns").c_str(), Spread(ids.monotonic_minus_cupti_ns, "ns").c_str());
}

void Report() {
  std::lock_guard lock(g_mutex);
  g_stopping = true;
  g_changed.notify_all();
  if (g_ids_mode) ReportIds();
  const Figures& f = g_figures;
  std::fprintf(stderr,
               "bare_cupti: mode %s; attaches %s; finalizes (on a program thread) %s; detach waits %s; "
               "records switched on %s, off %s; kernel records per window %s (in order: %s); CUPTI errors %d%s%s\n",
               g_mode_name.c_str(), Spread(f.attach_us, "us").c_str(), Spread(f.finalize_us, "us").c_str(),
               Spread(f.detach_wait_ms, "ms").c_str(), Spread(f.switch_on_us, "us").c_str(),
               Spread(f.switch_off_us, "us").c_str(), Spread(f.records_per_window, "").c_str(),
               FirstCounts(f.records_per_window).c_str(), f.errors,
               f.errors > 0 ? ", first: " : "", f.first_error.c_str());
}

milliseconds EnvMillis(const char* name, milliseconds fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 ? milliseconds(value) : fallback;
}


constexpr struct {
  const char* name;
  Mode mode;
} kModes[] = {{"callbacks-off", Mode::kCallbacksOff}, {"records-off", Mode::kRecordsOff},
              {"records-detach", Mode::kRecordsDetach}, {"windows-keep", Mode::kWindowsKeep},
              {"windows-detach", Mode::kWindowsDetach}, {"ids", Mode::kIds}};

}  // namespace

bool IsPhaseMode(const char* mode) {
  return mode != nullptr &&
         std::any_of(std::begin(kModes), std::end(kModes), [mode](const auto& entry) { return std::strcmp(mode, entry.name) == 0; });
}

bool StartPhases(const char* mode) {
  Phases phases;
  for (const auto& entry : kModes) {
    if (mode != nullptr && std::strcmp(mode, entry.name) == 0) phases.mode = entry.mode;
  }
  if (!IsPhaseMode(mode)) return false;
  g_mode_name = mode;
  phases.on = EnvMillis("BARE_CUPTI_ON_MS", phases.on);
  phases.window = EnvMillis("BARE_CUPTI_WINDOW_MS", phases.window);
  phases.period = EnvMillis("BARE_CUPTI_PERIOD_MS", phases.period);
  g_ids_mode = phases.mode == Mode::kIds;
  if (g_ids_mode) {
    // From the driver the program loaded: PyTorch's runtime dlopens it privately, so
    // RTLD_DEFAULT finds nothing there (the first GPU run compared no ids).
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    g_ctx_get_id = reinterpret_cast<CtxGetId>(dlsym(driver != nullptr ? driver : RTLD_DEFAULT, "cuCtxGetId"));
    g_stream_get_id = reinterpret_cast<StreamGetId>(dlsym(driver != nullptr ? driver : RTLD_DEFAULT, "cuStreamGetId"));
  }
  const bool callbacks = phases.mode == Mode::kCallbacksOff || g_ids_mode;
  std::atexit(Report);
  if (!Attach(/*records=*/!callbacks)) {
    std::fprintf(stderr, "bare_cupti: the first attach failed\n");
    return false;
  }
  if (callbacks) SwitchLaunchCallbacks(true);
  std::thread(RunPhases, phases).detach();
  return true;
}

}  // namespace bare_cupti
