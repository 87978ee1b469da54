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

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The longest the decode thread sleeps while no device samples: a bound, should a wake-up ever
// be missed; new code, a writer report and a set-up wake it before.
constexpr std::chrono::nanoseconds kIdleWaitMax = std::chrono::seconds(1);
// Free images per device below which sampling stops until half the pool is back (the header's
// "Images").
constexpr size_t kThrottleLowImages = 2;
// Samples spot-checked per decode (SpotCheck): at 50 us and a 5 ms period, 8 of 100, about
// 8 x 3 us of evaluation per pass when the GPU idles, less when it works (the first active
// one ends the check).
constexpr size_t kSpotCheckSamples = 8;

}  // namespace

PmCollector::PmCollector(Sink sink, std::unique_ptr<PmBackend> backend, PmCollectorSettings settings,
                         OnSampling on_sampling, Clock clock)
    : sink_(std::move(sink)),
      backend_(std::move(backend)),
      settings_(settings),
      on_sampling_(std::move(on_sampling)),
      clock_(clock ? std::move(clock) : Clock(SteadyNs)),
      policy_(settings.policy) {
  thread_ = std::thread([this] { DecodeLoop(); });
}

PmCollector::~PmCollector() { Shutdown(); }

void PmCollector::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbdata == nullptr) return;
  void* context = static_cast<const CUpti_ResourceData*>(cbdata)->context;
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) NoteContext(context);
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) NoteContextDestroyed(context);
  if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) NoteNewCode();
}

void PmCollector::Kick() {
  {
    std::lock_guard lock(mutex_);
    kicked_ = true;
  }
  wake_.notify_all();
}

void PmCollector::NoteNewCode() {
  const int64_t now = clock_();
  {
    std::lock_guard lock(mutex_);
    if (stop_requested_) return;
    signals_.new_code_ns = std::max(signals_.new_code_ns, now);
    kicked_ = true;
  }
  new_code_signals_.fetch_add(1, std::memory_order_relaxed);
  wake_.notify_all();
}

void PmCollector::NoteWork(const PmWorkReport& report) {
  bool wanted_anywhere = false;
  for (const PmWorkReport::Device& device : report.devices) wanted_anywhere |= device.wanting > 0;
  bool kick = false;
  {
    std::lock_guard lock(mutex_);
    if (stop_requested_) return;
    signals_.report = report;
    signals_.has_report = true;
    // A pass only when the answer may change: wanting configurations appeared or went, or a
    // paused device may now fit a window (GPU-busy time grew). Reports come at every writer
    // pass that saw new records; most change nothing.
    kick = wanted_anywhere != wanted_anywhere_ || paused_devices_.load() > 0;
    wanted_anywhere_ = wanted_anywhere;
    kicked_ = kicked_ || kick;
  }
  reports_.fetch_add(1, std::memory_order_relaxed);
  if (kick) wake_.notify_all();
}

void PmCollector::FeedPolicy() {
  Signals signals;
  {
    std::lock_guard lock(mutex_);
    signals = std::move(signals_);
    signals_ = Signals{};
  }
  if (signals.new_code_ns != INT64_MIN) policy_.NoteNewCode(signals.new_code_ns);
  if (signals.has_report) {
    policy_.NoteWork(signals.report);
    busy_ns_.store(policy_.busy_ns(), std::memory_order_relaxed);
  }
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
    const int64_t began = SteadyNs();
    SetUp(device_id, &device);
    setup_ns_.fetch_add(static_cast<uint64_t>(SteadyNs() - began), std::memory_order_relaxed);
    sampling = device.phase != Phase::kFailed;
  }
  if (!sampling) return;
  Kick();  // the decode thread may be asleep with nothing sampling
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
    if (device.phase == Phase::kPaused || device.phase == Phase::kArmed) {  // drained when it stopped
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
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, wait, [this] { return stop_requested_ || kicked_; });
      if (stop_requested_) break;
      kicked_ = false;
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard devices(devices_mutex_);
    FeedPolicy();
    DrainDue();
    FollowPolicy(clock_());
    wait = NextWait();
  }
  // The process is ending: no CUPTI call at all from here on. The samples since the last
  // periodic decode (at most one decode period) are not recorded (pm_samples_undecoded), and
  // the driver releases the PM hardware with the process. On an H100 (CUDA 13.0, driver
  // 580.159.04, 2026-11-27) every exit that called CUPTI here failed: with a last decode, with
  // Stop and Disable, or with both, 0 of 10 short runs exited cleanly (hung inside CUPTI,
  // aborted on a corrupted heap or crashed); without, every Python run at 50 us did
  // (bench/results/2026-11-27-h100-pm-exit). Those runs set up on this thread and registered no
  // exit handler after CUPTI's teardown (see the header), which may have been the cause; a last
  // decode would add at most one decode period of samples, not worth that risk.
  {
    std::lock_guard devices(devices_mutex_);
    for (auto& [id, device] : devices_) {
      if (device.phase != Phase::kFailed && device.phase != Phase::kStopped) SetPhase(id, &device, Phase::kStopped);
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
  const Phase before = device->phase;
  device->phase = phase;
  {
    std::lock_guard lock(mutex_);
    phases_[device_id] = phase;
  }
  if (before != phase && (before == Phase::kPaused || phase == Phase::kPaused)) {
    paused_devices_.fetch_add(phase == Phase::kPaused ? 1 : -1);
  }
  if ((before == Phase::kSampling) == (phase == Phase::kSampling)) return;
  const int64_t now = clock_();
  if (phase == Phase::kSampling) {
    if (first_setup_ns_.load() == 0) first_setup_ns_.store(now);
    device->sampling_since_ns = now;
    since_sum_ns_.fetch_add(now);
    sampling_devices_.fetch_add(1);
  } else {
    sampled_closed_ns_.fetch_add(now - device->sampling_since_ns);
    since_sum_ns_.fetch_sub(device->sampling_since_ns);
    sampling_devices_.fetch_sub(1);
  }
}

int64_t PmCollector::SampledNs(int64_t now_ns) const {
  return sampled_closed_ns_.load() + std::max<int64_t>(0, sampling_devices_.load() * now_ns - since_sum_ns_.load());
}

void PmCollector::DrainDue() {
  const int64_t now = SteadyNs();
  // A little early counts as due: a timed wait of one period wakes within it.
  const int64_t due = settings_.decode_period_ns - settings_.decode_period_ns / 8;
  for (auto& [id, device] : devices_) {
    if (device.phase == Phase::kSampling && now - device.last_drain_steady_ns >= due) DrainDevice(id, &device);
  }
}

void PmCollector::FollowPolicy(int64_t now_ns) {
  std::map<uint32_t, PmTarget> targets;
  for (const auto& [id, device] : devices_) {
    if (device.phase == Phase::kArmed || device.phase == Phase::kSampling || device.phase == Phase::kPaused) {
      targets[id] = PmTarget::kArmed;
    }
  }
  if (targets.empty()) return;
  policy_.Decide(now_ns, SampledNs(now_ns), &targets);
  const bool room = PoolHasRoom();
  for (const auto& [id, target] : targets) {
    // Wanted, but the writer holds the pool: stopped and drained until half of it is back.
    const bool throttle = target == PmTarget::kSampling && !room;
    Apply(id, &devices_.at(id), throttle ? PmTarget::kArmed : target, throttle);
  }
}

size_t PmCollector::FreeImages() const {
  std::lock_guard lock(pool_->pool_mutex);
  return pool_->free.size() + (settings_.max_images - std::min(settings_.max_images, pool_->allocated));
}

bool PmCollector::PoolHasRoom() {
  size_t devices = 0;
  for (const auto& [id, device] : devices_) {
    if (device.phase == Phase::kArmed || device.phase == Phase::kSampling || device.phase == Phase::kPaused) ++devices;
  }
  // A drain after a stop takes at most one image per device (a decode period holds less), so
  // kThrottleLowImages per device leaves room for it and one more period.
  const size_t low = kThrottleLowImages * std::max<size_t>(1, devices);
  const size_t free = FreeImages();
  if (throttled_) {
    throttled_ = free < std::max(low, settings_.max_images / 2);
  } else {
    throttled_ = free < low;
  }
  return !throttled_;
}

void PmCollector::Apply(uint32_t device_id, DeviceState* device, PmTarget target, bool throttle) {
  const Phase wanted = target == PmTarget::kSampling ? Phase::kSampling
                       : target == PmTarget::kPaused ? Phase::kPaused
                                                     : Phase::kArmed;
  if (device->phase == wanted) return;
  ProfilerError error;
  if (device->phase != Phase::kSampling && wanted != Phase::kSampling) {  // kArmed <-> kPaused
    SetPhase(device_id, device, wanted);
    return;
  }
  if (wanted == Phase::kSampling) {
    // A sampler that does not start again is set up afresh, as after an overflow.
    if (!InCupti("cuptiPmSamplingStart", [&] { return device->sampler->Start(&error); }) &&
        !Reopen(device_id, device, /*start=*/true)) {
      return;  // failed: disabled
    }
    (device->phase == Phase::kPaused ? resumes_ : starts_).fetch_add(1);
    SetPhase(device_id, device, Phase::kSampling);
    device->last_drain_steady_ns = SteadyNs();  // the first drain is one period on
    return;
  }
  if (!InCupti("cuptiPmSamplingStop", [&] { return device->sampler->Stop(&error); })) {
    FailDevice(device_id, device, error);
    return;
  }
  (wanted == Phase::kPaused ? pauses_ : throttle ? throttles_ : stops_).fetch_add(1);
  if (wanted == Phase::kArmed && !throttle && policy_.StoppedForIdleness(device_id, clock_())) idle_stops_.fetch_add(1);
  SetPhase(device_id, device, wanted);
  // What it sampled up to the stop leaves the hardware buffer now, not at a restart that may
  // never come (a paused device was never drained before: its last samples were lost).
  DrainDevice(device_id, device);
}

std::chrono::nanoseconds PmCollector::NextWait() const {
  const std::chrono::nanoseconds period(settings_.decode_period_ns);
  if (throttled_) return period;  // the pool comes back without a signal: look each period
  // A device stopped for idleness is looked at again without a signal; that lasts about a
  // second after each signal at most.
  if (policy_.ProbePending(clock_())) return period;
  for (const auto& [id, device] : devices_) {
    if (device.phase == Phase::kSampling) return period;
  }
  return std::max(period, kIdleWaitMax);  // stopped or nothing set up: a signal wakes it
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
  if (!DrainDevice(device_id, device)) return;
  // Then what the policy says: armed (stopped and drained) until GPU work wants samples.
  FeedPolicy();
  FollowPolicy(clock_());
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
  device->last_drain_steady_ns = SteadyNs();
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
    const int64_t began = SteadyNs();
    const bool decoded =
        InCupti("cuptiPmSamplingDecodeData", [&] { return sampler->Decode(target, &spans, &result, &error); });
    spans_ns_.fetch_add(static_cast<uint64_t>(result.sample_info_ns), std::memory_order_relaxed);
    const int64_t took = SteadyNs() - began;
    decode_ns_.fetch_add(static_cast<uint64_t>(took), std::memory_order_relaxed);
    if (took > max_decode_ns_.load(std::memory_order_relaxed)) max_decode_ns_.store(took, std::memory_order_relaxed);
    decodes_.fetch_add(1, std::memory_order_relaxed);
    if (!decoded) {
      decode_errors_.fetch_add(1);
      if (pooled) GiveBack(std::move(image));
      FailDevice(device_id, device, error);
      return false;
    }
    if (pooled && device->phase == Phase::kSampling && !spans.empty()) SpotCheck(device_id, sampler, image, spans.size());
    HandOver(device_id, sampler, pooled ? &image : nullptr, std::move(spans));
    if (result.overflow) {
      // Samples were lost. CUPTI fails every later decode after an overflow, so sampling starts
      // afresh with an empty hardware buffer (and stays stopped if it was).
      overflows_.fetch_add(1);
      return Reopen(device_id, device, /*start=*/device->phase == Phase::kSampling);
    }
    if (!result.image_full) return true;
  }
  return true;
}

void PmCollector::SpotCheck(uint32_t device_id, PmDeviceSampler* sampler, const std::vector<uint8_t>& image,
                            size_t samples) {
  // Evenly spread over the decode: a training loop's kernels come in bursts within a pass.
  std::vector<uint32_t> picked;
  const size_t count = std::min(samples, kSpotCheckSamples);
  for (size_t k = 0; k < count; ++k) picked.push_back(static_cast<uint32_t>((2 * k + 1) * samples / (2 * count)));
  bool active = false;
  if (!InCupti("cuptiProfilerHostEvaluateToGpuValues", [&] { return sampler->evaluator()->AnyActive(image, picked, &active); })) {
    spot_checks_untold_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  spot_checks_.fetch_add(1, std::memory_order_relaxed);
  policy_.NoteSpotCheck(device_id, clock_(), static_cast<int64_t>(samples * settings_.device.interval_ns), active);
  idle_sampled_ns_.store(policy_.idle_sampled_ns(), std::memory_order_relaxed);
}

void PmCollector::HandOver(uint32_t device_id, PmDeviceSampler* sampler, std::vector<uint8_t>* image,
                           std::vector<PmImage::Span>&& spans) {
  samples_decoded_.fetch_add(spans.size(), std::memory_order_relaxed);
  if (image != nullptr && spans.empty()) {
    GiveBack(std::move(*image));
    return;
  }
  if (spans.empty()) return;
  PmImage out;
  out.device_id = device_id;
  out.interval_ns = settings_.device.interval_ns;
  out.spans = std::move(spans);
  if (image == nullptr) {
    // Decoded into the spare: the samples are lost, but their spans tell the writer whether
    // they were idle or busy (pm_samples_lost_idle / _busy).
    samples_lost_.fetch_add(out.spans.size(), std::memory_order_relaxed);
    out.dropped = true;
  } else {
    out.counter_data = std::move(*image);
    out.evaluator = sampler->evaluator();
    out.recycle = [pool = pool_](std::vector<uint8_t>&& done) {
      std::lock_guard lock(pool->pool_mutex);
      pool->free.push_back(std::move(done));
    };
  }
  sink_(std::move(out));
}

bool PmCollector::Reopen(uint32_t device_id, DeviceState* device, bool start) {
  // Stop and Start alone did not recover: after an overflow cuptiPmSamplingStart failed with
  // CUPTI_ERROR_UNKNOWN (H100, CUDA 13.0, 2026-11-27). Disabling and enabling again does.
  ProfilerError error;
  device->sampler->Stop(&error);
  device->sampler->Disable();
  error = ProfilerError{};
  device->sampler = backend_->Open(device_id, settings_.device, &error);
  if (!device->sampler || (start && !device->sampler->Start(&error))) {
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
  auto milliseconds = [](uint64_t ns) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(ns) / 1e6);
    return std::string(text);
  };
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
  meta.emplace_back("pm_decode_ms", milliseconds(decode_ns_.load()));
  meta.emplace_back("pm_sample_info_ms", milliseconds(spans_ns_.load()));
  meta.emplace_back("pm_setup_ms", std::to_string(setup_ns_.load() / 1'000'000));
  meta.emplace_back("pm_retirements", std::to_string(retirements_.load()));
  meta.emplace_back("pm_decode_period_ms", std::to_string(settings_.decode_period_ns / 1'000'000));
  meta.emplace_back("pm_wakeups", std::to_string(wakeups_.load()));
  meta.emplace_back("pm_decode_max_us", std::to_string(max_decode_ns_.load() / 1000));
  meta.emplace_back("pm_hardware_buffer_bytes", std::to_string(settings_.device.hardware_buffer_bytes));
  meta.emplace_back("pm_image_bytes", std::to_string(image_bytes_.load()));
  meta.emplace_back("pm_image_samples", std::to_string(settings_.device.max_samples_per_image));
  AddSamplingMeta(&meta);
  return meta;
}

void PmCollector::AddSamplingMeta(std::vector<std::pair<std::string, std::string>>* meta) const {
  // When sampling was on and why (pm_sampling_policy.h), and the CPU bound: how long devices
  // sampled, against how much GPU-busy time.
  char fraction[32];
  std::snprintf(fraction, sizeof(fraction), "%g", settings_.policy.budget_fraction);
  meta->emplace_back("pm_budget", fraction);
  const int64_t now = clock_(), first = first_setup_ns_.load();
  const int64_t sampled_ns = SampledNs(now);
  meta->emplace_back("pm_sampling_ms", std::to_string(sampled_ns / 1'000'000));
  meta->emplace_back("pm_run_ms", std::to_string(first != 0 ? (now - first) / 1'000'000 : 0));
  meta->emplace_back("pm_gpu_busy_ms", std::to_string(busy_ns_.load() / 1'000'000));
  meta->emplace_back("pm_starts", std::to_string(starts_.load()));
  meta->emplace_back("pm_throttles", std::to_string(throttles_.load()));
  meta->emplace_back("pm_stops", std::to_string(stops_.load()));
  meta->emplace_back("pm_pauses", std::to_string(pauses_.load()));
  meta->emplace_back("pm_resumes", std::to_string(resumes_.load()));
  meta->emplace_back("pm_new_code_signals", std::to_string(new_code_signals_.load()));
  meta->emplace_back("pm_spot_checks", std::to_string(spot_checks_.load()));
  meta->emplace_back("pm_spot_checks_untold", std::to_string(spot_checks_untold_.load()));
  meta->emplace_back("pm_idle_sampling_ms", std::to_string(idle_sampled_ns_.load() / 1'000'000));
  meta->emplace_back("pm_idle_stops", std::to_string(idle_stops_.load()));
  meta->emplace_back("pm_work_reports", std::to_string(reports_.load()));
  // decoded + undecoded = expected (the header says to what precision).
  const uint64_t interval = std::max<uint64_t>(1, settings_.device.interval_ns);
  const uint64_t expected = static_cast<uint64_t>(sampled_ns) / interval;
  const uint64_t decoded = samples_decoded_.load();
  meta->emplace_back("pm_samples_expected", std::to_string(expected));
  meta->emplace_back("pm_samples_decoded", std::to_string(decoded));
  meta->emplace_back("pm_samples_undecoded", std::to_string(expected > decoded ? expected - decoded : 0));
  meta->emplace_back("pm_samples_lost", std::to_string(samples_lost_.load()));
}

std::unique_ptr<PmCollector> CreatePmCollector(const PmCollectorSettings& settings, PmCollector::Sink sink,
                                               PmCollector::OnSampling on_sampling) {
  return std::make_unique<PmCollector>(std::move(sink), CreateCuptiPmBackend(), settings, std::move(on_sampling));
}

}  // namespace occ::inj
