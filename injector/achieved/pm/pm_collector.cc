#include "injector/achieved/pm/pm_collector.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "injector/common/env_settings.h"
#include "injector/common/errors.h"

namespace occ::inj {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The longest the decode thread sleeps while no device samples: a bound, should a wake-up ever
// be missed; the budget's resume time and a set-up's notify wake it before.
constexpr std::chrono::nanoseconds kIdleWaitMax = std::chrono::seconds(1);

}  // namespace

PmCollector::PmCollector(Sink sink, std::unique_ptr<PmBackend> backend, PmCollectorSettings settings,
                         OnSampling on_sampling)
    : sink_(std::move(sink)),
      backend_(std::move(backend)),
      settings_(settings),
      on_sampling_(std::move(on_sampling)),
      budget_(settings.budget_fraction, settings.window_ns, settings.free_ns) {
  thread_ = std::thread([this] { DecodeLoop(); });
}

PmCollector::~PmCollector() { Shutdown(); }

void PmCollector::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbdata == nullptr) return;
  void* context = static_cast<const CUpti_ResourceData*>(cbdata)->context;
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) NoteContext(context);
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) NoteContextDestroyed(context);
}

bool PmCollector::ShutdownRequested() const {
  std::lock_guard lock(mutex_);
  return stop_requested_;
}

void PmCollector::NoteContext(void* context) {
  if (ShutdownRequested()) return;
  bool sampling = false;
  {
    uint32_t device_id = 0;
    std::lock_guard devices(devices_mutex_);
    if (!backend_->DeviceOf(context, &device_id)) return;
    auto [it, first] = devices_.try_emplace(device_id);
    DeviceState& device = it->second;
    device.contexts.push_back(context);
    if (!first && device.phase != Phase::kRetired) return;
    const int64_t began = NowNs();
    SetUp(device_id, &device);
    setup_ns_.fetch_add(static_cast<uint64_t>(NowNs() - began), std::memory_order_relaxed);
    sampling = device.phase == Phase::kSampling;
  }
  if (!sampling) return;
  {
    std::lock_guard lock(mutex_);
    sampling_started_ = true;  // the decode thread may be asleep with nothing sampling
  }
  wake_.notify_all();
  if (on_sampling_) on_sampling_();
}

void PmCollector::NoteContextDestroyed(void* context) {
  if (ShutdownRequested()) return;  // the process is ending: no CUPTI call (pm_collector.cc)
  std::lock_guard devices(devices_mutex_);
  for (auto& [id, device] : devices_) {
    auto found = std::find(device.contexts.begin(), device.contexts.end(), context);
    if (found == device.contexts.end()) continue;
    device.contexts.erase(found);
    if (!device.contexts.empty()) return;
    if (device.phase == Phase::kPaused) {  // drained when it paused
      device.sampler->Disable();
      device.sampler.reset();
      retirements_.fetch_add(1);
      SetPhase(id, &device, Phase::kRetired);
      return;
    }
    if (device.phase != Phase::kSampling) return;
    // The device's last context: what it sampled so far leaves CUPTI while the context exists.
    if (!DrainDevice(id, &device)) return;  // failed: disabled
    InCupti("cuptiPmSamplingStop", [&] {
      ProfilerError error;
      device.sampler->Stop(&error);
      device.sampler->Disable();
      return true;
    });
    device.sampler.reset();
    retirements_.fetch_add(1);
    SetPhase(id, &device, Phase::kRetired);
    return;
  }
}

void PmCollector::Shutdown() {
  if (shut_down_.exchange(true)) return;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (!thread_.joinable() || thread_.get_id() == std::this_thread::get_id()) return;
  // Bounded: the traced program must never hang at exit because of us. A decode thread still
  // inside CUPTI after this long is left behind (its last samples are lost, and said so).
  std::unique_lock lock(mutex_);
  if (wake_.wait_for(lock, std::chrono::milliseconds(settings_.shutdown_wait_ms), [this] { return thread_done_; })) {
    lock.unlock();
    thread_.join();
  } else {
    lock.unlock();
    thread_.detach();
    const char* call = in_call_.load();
    SetFailure("error: the decode thread did not stop within " + std::to_string(settings_.shutdown_wait_ms) +
                   " ms (inside " + (call != nullptr ? call : "no CUPTI call") + ")",
               "PM sampling: the decode thread did not stop in time at exit; its last samples are not in the trace");
  }
}

std::string PmCollector::status() const {
  std::lock_guard lock(mutex_);
  return failure_.empty() ? "on" : failure_;
}

void PmCollector::DecodeLoop() {
  pthread_setname_np(pthread_self(), "occtrace-pm");
  std::chrono::nanoseconds wait(settings_.decode_period_ns);
  while (true) {
    bool woken_by_setup = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, wait, [this] { return stop_requested_ || sampling_started_; });
      if (stop_requested_) break;
      woken_by_setup = std::exchange(sampling_started_, false);
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard devices(devices_mutex_);
    if (!woken_by_setup) {  // the set-up drained its device just now: only the wait changes
      for (auto& [id, device] : devices_) {
        if (device.phase == Phase::kSampling) DrainDevice(id, &device);
      }
      KeepToBudget(NowNs());
    }
    wait = NextWait(NowNs());
  }
  // The process is ending: no CUPTI call at all from here on. The samples since the last
  // periodic decode (at most one decode period) are not recorded, and the driver releases the
  // PM hardware with the process. On an H100 (CUDA 13.0, driver 580.159.04, 2026-11-27) every
  // exit that called CUPTI here failed: with a last decode, with Stop and Disable, or with
  // both, 0 of 10 short runs exited cleanly (hung inside CUPTI, aborted on a corrupted heap or
  // crashed); without, every Python run at 50 us did (bench/results/2026-11-27-h100-pm-exit).
  // Those runs set up on this thread and registered no exit handler after CUPTI's teardown
  // (see the header), which may have been the cause; a last decode would add at most one
  // decode period of samples, not worth that risk.
  {
    std::lock_guard devices(devices_mutex_);
    for (auto& [id, device] : devices_) {
      if (device.phase == Phase::kSampling || device.phase == Phase::kPaused || device.phase == Phase::kRetired) {
        SetPhase(id, &device, Phase::kStopped);
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    thread_done_ = true;
  }
  wake_.notify_all();
  // cuptiProfilerInitialize is not undone, and no host object is released: the writer
  // evaluates the last images after this thread ends (TraceSession drains its queue after the
  // final flush), and CUPTI's host objects must outlive them. The process is ending anyway.
}

void PmCollector::SetPhase(uint32_t device_id, DeviceState* device, Phase phase) {
  device->phase = phase;
  {
    std::lock_guard lock(mutex_);
    phases_[device_id] = phase;
  }
  const bool sampling = std::any_of(devices_.begin(), devices_.end(),
                                    [](const auto& entry) { return entry.second.phase == Phase::kSampling; });
  const int64_t now = NowNs();
  const int64_t since = sampling_since_ns_.load();
  if (sampling && since == 0) {
    if (budget_start_ns_.load() == 0) budget_start_ns_.store(now);
    sampling_since_ns_.store(now);
  } else if (!sampling && since != 0) {
    sampled_closed_ns_.fetch_add(now - since);
    sampling_since_ns_.store(0);
  }
}

int64_t PmCollector::SampledNs(int64_t now_ns) const {
  const int64_t since = sampling_since_ns_.load();
  return sampled_closed_ns_.load() + (since != 0 ? std::max<int64_t>(0, now_ns - since) : 0);
}

void PmCollector::KeepToBudget(int64_t now_ns) {
  bool sampling = false, paused = false;
  for (const auto& [id, device] : devices_) {
    sampling |= device.phase == Phase::kSampling;
    paused |= device.phase == Phase::kPaused;
  }
  if (!sampling && !paused) return;  // nothing set up, or nothing left to sample
  const bool allows = budget_.Allows(SampledNs(now_ns), now_ns - budget_start_ns_.load());
  if (!allows && sampling) {
    // Every sampling device was drained by the pass that spent the budget, just now.
    for (auto& [id, device] : devices_) {
      if (device.phase != Phase::kSampling) continue;
      ProfilerError error;
      if (InCupti("cuptiPmSamplingStop", [&] { return device.sampler->Stop(&error); })) {
        SetPhase(id, &device, Phase::kPaused);
      } else {
        FailDevice(id, &device, error);
      }
    }
    pauses_.fetch_add(1);
  } else if (allows && paused) {
    for (auto& [id, device] : devices_) {
      if (device.phase != Phase::kPaused) continue;
      ProfilerError error;
      // A sampler that does not start again is set up afresh, as after an overflow.
      if (InCupti("cuptiPmSamplingStart", [&] { return device.sampler->Start(&error); }) || Reopen(id, &device)) {
        SetPhase(id, &device, Phase::kSampling);
      }
    }
    resumes_.fetch_add(1);
  }
}

std::chrono::nanoseconds PmCollector::NextWait(int64_t now_ns) const {
  const std::chrono::nanoseconds period(settings_.decode_period_ns);
  bool paused = false;
  for (const auto& [id, device] : devices_) {
    if (device.phase == Phase::kSampling) return period;
    paused |= device.phase == Phase::kPaused;
  }
  const std::chrono::nanoseconds longest = std::max(period, kIdleWaitMax);
  if (!paused) return longest;  // nothing set up or all retired: a set-up wakes it
  // Both in the budget's elapsed time (since the first set-up), so nothing overflows.
  const int64_t resumes_after = budget_.ResumesAtNs(SampledNs(now_ns));
  const int64_t elapsed = now_ns - budget_start_ns_.load();
  return std::clamp(std::chrono::nanoseconds(resumes_after > elapsed ? resumes_after - elapsed : 0), period, longest);
}

void PmCollector::SetUp(uint32_t device_id, DeviceState* device) {
  ProfilerError error;
  if (!backend_initialized_) {
    if (!backend_->Initialize(&error)) return FailDevice(device_id, device, error);
    backend_initialized_ = true;
  }
  device->sampler = InCupti("PM sampling set-up", [&] { return backend_->Open(device_id, settings_.device, &error); });
  if (!device->sampler) return FailDevice(device_id, device, error);
  if (!device->sampler->Start(&error)) return FailDevice(device_id, device, error);
  SetPhase(device_id, device, Phase::kSampling);
  {
    std::string metrics;
    for (const char* metric : device->sampler->metrics()) metrics += (metrics.empty() ? "" : ",") + std::string(metric);
    std::lock_guard lock(mutex_);
    metrics_ = metrics;
    chip_ = device->sampler->chip_name();
  }
  // Once now, so that CUPTI's decoding state exists before on_sampling (see the header).
  DrainDevice(device_id, device);
}

bool PmCollector::TakeImage(PmDeviceSampler* sampler, std::vector<uint8_t>* image, ProfilerError* error) {
  {
    std::lock_guard lock(pool_->pool_mutex);
    if (!pool_->free.empty()) {
      *image = std::move(pool_->free.back());
      pool_->free.pop_back();
    } else if (pool_->allocated < settings_.max_images) {
      ++pool_->allocated;
    } else {
      return false;
    }
  }
  if (sampler->NewImage(image, error)) {
    image_bytes_.store(image->size(), std::memory_order_relaxed);
    return true;
  }
  GiveBack(std::move(*image));
  return false;
}

void PmCollector::GiveBack(std::vector<uint8_t>&& image) {
  std::lock_guard lock(pool_->pool_mutex);
  if (image.empty()) {
    --pool_->allocated;  // never filled: the slot is free again
  } else {
    pool_->free.push_back(std::move(image));
  }
}

bool PmCollector::DrainDevice(uint32_t device_id, DeviceState* device) {
  PmDeviceSampler* sampler = device->sampler.get();
  // Bounded: a hardware buffer holds far fewer images' worth than this between two periods.
  for (int round = 0; round < 64; ++round) {
    ProfilerError error;
    std::vector<uint8_t> image;
    const bool pooled = TakeImage(sampler, &image, &error);
    if (!error.ok()) {
      FailDevice(device_id, device, error);
      return false;
    }
    std::vector<uint8_t>* target = &image;
    if (!pooled) {  // the writer is behind: drain into the spare, drop its samples
      if (!sampler->NewImage(&spare_image_, &error)) {
        FailDevice(device_id, device, error);
        return false;
      }
      target = &spare_image_;
    }
    std::vector<PmImage::Span> spans;
    PmDecodeResult result;
    const int64_t began = NowNs();
    const bool decoded =
        InCupti("cuptiPmSamplingDecodeData", [&] { return sampler->Decode(target, &spans, &result, &error); });
    spans_ns_.fetch_add(static_cast<uint64_t>(result.sample_info_ns), std::memory_order_relaxed);
    const int64_t took = NowNs() - began;
    decode_ns_.fetch_add(static_cast<uint64_t>(took), std::memory_order_relaxed);
    if (took > max_decode_ns_.load(std::memory_order_relaxed)) max_decode_ns_.store(took, std::memory_order_relaxed);
    decodes_.fetch_add(1, std::memory_order_relaxed);
    if (!decoded) {
      decode_errors_.fetch_add(1);
      if (pooled) GiveBack(std::move(image));
      FailDevice(device_id, device, error);
      return false;
    }
    samples_decoded_.fetch_add(spans.size(), std::memory_order_relaxed);
    if (!pooled) {
      samples_lost_.fetch_add(spans.size(), std::memory_order_relaxed);
    } else if (spans.empty()) {
      GiveBack(std::move(image));
    } else {
      PmImage out;
      out.device_id = device_id;
      out.counter_data = std::move(image);
      out.spans = std::move(spans);
      out.evaluator = sampler->evaluator();
      out.recycle = [pool = pool_](std::vector<uint8_t>&& done) {
        std::lock_guard lock(pool->pool_mutex);
        pool->free.push_back(std::move(done));
      };
      sink_(std::move(out));
    }
    if (result.overflow) {
      // Samples were lost. CUPTI fails every later decode after an overflow, so sampling starts
      // afresh with an empty hardware buffer.
      overflows_.fetch_add(1);
      return Reopen(device_id, device);
    }
    if (!result.image_full) return true;
  }
  return true;
}

bool PmCollector::Reopen(uint32_t device_id, DeviceState* device) {
  // Stop and Start alone did not recover: after an overflow cuptiPmSamplingStart failed with
  // CUPTI_ERROR_UNKNOWN (H100, CUDA 13.0, 2026-11-27). Disabling and enabling again does.
  ProfilerError error;
  device->sampler->Stop(&error);
  device->sampler->Disable();
  error = ProfilerError{};
  device->sampler = backend_->Open(device_id, settings_.device, &error);
  if (!device->sampler || !device->sampler->Start(&error)) {
    FailDevice(device_id, device, error);
    return false;
  }
  reopens_.fetch_add(1);
  return true;
}

void PmCollector::FailDevice(uint32_t device_id, DeviceState* device, const ProfilerError& error) {
  if (device->sampler) device->sampler->Disable();
  SetPhase(device_id, device, Phase::kFailed);
  if (error.insufficient_privileges()) {
    SetFailure("no-permission",
               "PM sampling (OCCTRACE_ACHIEVED=pm) off: no permission to read GPU performance counters "
               "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); tracing continues. To enable: run as root or with "
               "CAP_PERFMON / CAP_SYS_ADMIN, or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 "
               "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
  } else if (error.result == CUPTI_ERROR_NOT_SUPPORTED || error.result == CUPTI_ERROR_NOT_COMPATIBLE) {
    SetFailure("unsupported",
               "PM sampling (OCCTRACE_ACHIEVED=pm) off on device " + std::to_string(device_id) + ": " +
                   error.Message() + "; tracing continues");
  } else {
    SetFailure("error: " + error.Message(), "PM sampling (OCCTRACE_ACHIEVED=pm) stopped on device " +
                                                std::to_string(device_id) + ": " + error.Message() +
                                                "; tracing continues");
  }
}

void PmCollector::SetFailure(const std::string& status, const std::string& line) {
  {
    std::lock_guard lock(mutex_);
    if (!failure_.empty()) return;  // one line per run
    failure_ = status;
  }
  LogLine("%s", line.c_str());
}

std::vector<std::pair<std::string, std::string>> PmCollector::SessionMeta() const {
  std::vector<std::pair<std::string, std::string>> meta;
  std::string status, metrics, chip;
  size_t sampling = 0, devices = 0;
  {
    std::lock_guard lock(mutex_);
    status = failure_.empty() ? "on" : failure_;
    metrics = metrics_;
    chip = chip_;
    devices = phases_.size();
    for (const auto& [id, phase] : phases_) sampling += phase != Phase::kFailed ? 1 : 0;
  }
  char decode_ms[32];
  std::snprintf(decode_ms, sizeof(decode_ms), "%.1f", static_cast<double>(decode_ns_.load()) / 1e6);
  meta.emplace_back("achieved_mode", "pm");
  meta.emplace_back("achieved_status", status == "on" ? "ok" : status);
  meta.emplace_back("pm_status", status);
  meta.emplace_back("pm_interval_ns", std::to_string(settings_.device.interval_ns));
  meta.emplace_back("pm_metrics", metrics);
  meta.emplace_back("pm_chip", chip);
  meta.emplace_back("pm_devices", std::to_string(devices));
  meta.emplace_back("pm_devices_sampled", std::to_string(sampling));
  meta.emplace_back("pm_overflows", std::to_string(overflows_.load()));
  meta.emplace_back("pm_reopens", std::to_string(reopens_.load()));
  meta.emplace_back("pm_decode_errors", std::to_string(decode_errors_.load()));
  meta.emplace_back("pm_decodes", std::to_string(decodes_.load()));
  meta.emplace_back("pm_decode_ms", decode_ms);
  std::snprintf(decode_ms, sizeof(decode_ms), "%.1f", static_cast<double>(spans_ns_.load()) / 1e6);
  meta.emplace_back("pm_sample_info_ms", decode_ms);
  meta.emplace_back("pm_setup_ms", std::to_string(setup_ns_.load() / 1'000'000));
  meta.emplace_back("pm_retirements", std::to_string(retirements_.load()));
  // The CPU bound: how long sampling was on, of how long since the first set-up.
  char fraction[32];
  std::snprintf(fraction, sizeof(fraction), "%g", settings_.budget_fraction);
  meta.emplace_back("pm_budget", fraction);
  const int64_t now = NowNs(), start = budget_start_ns_.load();
  meta.emplace_back("pm_sampling_ms", std::to_string(SampledNs(now) / 1'000'000));
  meta.emplace_back("pm_run_ms", std::to_string(start != 0 ? (now - start) / 1'000'000 : 0));
  meta.emplace_back("pm_pauses", std::to_string(pauses_.load()));
  meta.emplace_back("pm_decode_period_ms", std::to_string(settings_.decode_period_ns / 1'000'000));
  meta.emplace_back("pm_wakeups", std::to_string(wakeups_.load()));
  meta.emplace_back("pm_decode_max_us", std::to_string(max_decode_ns_.load() / 1000));
  meta.emplace_back("pm_samples_decoded", std::to_string(samples_decoded_.load()));
  meta.emplace_back("pm_samples_lost", std::to_string(samples_lost_.load()));
  meta.emplace_back("pm_hardware_buffer_bytes", std::to_string(settings_.device.hardware_buffer_bytes));
  meta.emplace_back("pm_image_bytes", std::to_string(image_bytes_.load()));
  meta.emplace_back("pm_image_samples", std::to_string(settings_.device.max_samples_per_image));
  return meta;
}

std::unique_ptr<AchievedProfiler> CreatePmCollector(const PmCollectorSettings& settings, PmCollector::Sink sink,
                                                    PmCollector::OnSampling on_sampling) {
  return std::make_unique<PmCollector>(std::move(sink), CreateCuptiPmBackend(), settings, std::move(on_sampling));
}

}  // namespace occ::inj
