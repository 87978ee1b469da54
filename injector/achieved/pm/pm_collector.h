// PmCollector: achieved occupancy from CUPTI's PM sampling (OCCTRACE_ACHIEVED=pm), the
// AchievedProfiler (achieved.h) that replaces kernel replay. It reads sm__warps_active.sum and
// sm__cycles_active.sum (and dram__throughput.avg.pct_of_peak_sustained_elapsed where it fits
// the same pass) device-wide at a fixed GPU-time interval; occ-report attributes the samples
// to the kernels running in them. No launch callback, no replay, no serialization: the
// program's threads do nothing for it beyond CONTEXT_CREATED noting the device.
//
// It never runs with the range profiler (both program the PM hardware): `pm` is its own mode,
// and this class is the only achieved profiler of such a run.
//
// Threads:
//  - Application threads, in CUPTI's resource callbacks:
//    - CONTEXT_CREATED, for a device's first context: sets PM sampling up on that thread,
//      starts it and decodes once, then leaves it armed (stopped, and drained) unless the
//      sampling policy wants samples already (NoteContext). This is the one callback here that
//      does real work, once per device, and on purpose: CUPTI loads libnvperf_host/
//      libnvperf_target and creates its profiler state lazily, during these calls, and what a
//      library creates registers its teardown with atexit after ours, so it is torn down
//      *before* our exit handler runs (LIFO). Set up on a background thread, a program that
//      ended during the set-up (short CUDA C++ programs: 0.5-0.8 s) had that state destroyed
//      under the thread still using it: segfaults and heap corruption at exit (H100,
//      2026-11-27, bench/results/2026-11-27-h100-pm-exit). Set up here, the program cannot
//      reach exit mid-set-up, and `on_sampling` (the tracer re-registering its exit handler)
//      then puts our exit work ahead of that teardown.
//    - MODULE_LOADED: new code starts running (NoteNewCode). Only notes the time and wakes the
//      decode thread (mutex_, a leaf held for a store): the loading thread is often a kernel's
//      first launch, and must not wait for a decode pass.
//    - CONTEXT_DESTROY_STARTING of a device's last context (cudaDeviceReset, cuCtxDestroy):
//      decodes what the device holds, stops and disables it while the context still exists
//      (NoteContextDestroyed). A later context sets the device up again.
//  - The writer thread: NoteWork hands over what the kernel timeline says (which devices run
//    configurations that lack samples, GPU-busy time: PmWorkReport) and wakes the decode thread
//    when that may change what it does. A copy under mutex_; no CUPTI call.
//  - The decode thread ("occtrace-pm"): every decode_period drains each sampling device's
//    hardware buffer into counter-data images, reads the sample spans and hands each image to
//    the sink (TraceSession::SubmitPmImage: a queue push). Evaluation
//    (cuptiProfilerHostEvaluateToGpuValues) and SQLite run on the writer thread (TraceWriter),
//    which evaluates only samples that overlap kernels (pm_sample_join.h); the decode thread
//    only spot-checks kSpotCheckSamples of each decode for an active SM (one metric, stopping
//    at the first active one: PmEvaluator::AnyActive), so that the policy learns within a decode
//    period whether it samples an idle GPU, where the writer's records come a second late. After each pass and
//    each signal it asks the sampling policy (pm_sampling_policy.h: follows GPU work that lacks
//    samples, within the CPU bound) what each device should do, and starts or stops devices
//    accordingly; a device it stops is drained right after the stop, so that no decoded sample
//    waits in the hardware buffer for a restart. While no device samples it sleeps until a
//    signal (new code, a writer report, a set-up) wakes it, kIdleWaitMax at most: waking every
//    decode_period while stopped cost 0.5 ms of CPU per ResNet-50 step (H200, 2026-11-28,
//    bench/results/2026-11-28-six-variants). A stopped sampler costs the program nothing per
//    launch (0.986 x `off` on empty launches, H200, 2026-11-28, bench/results/2026-11-28-pm-
//    pause), and Start resumes without setting the device up again.
//  - Shutdown (the tracer's exit handler via the session's before_final_flush, or the writer
//    thread on SIGTERM): asks the decode thread to stop; it exits without another CUPTI call,
//    leaving sampling enabled for the process's end (pm_collector.cc says why). Shutdown waits
//    for it at most shutdown_wait_ms. The images reach the writer before its final drain.
//  - fork: the child has no decode thread and the core ignores its callbacks (TraceSession::
//    InForkedChild); no collector is inherited, and the child's exit touches nothing.
//
// Images: at most max_images exist (in the pool or in flight to the writer); the writer drops
// each as soon as it has judged it, which returns its slot. The writer is the slower side
// (evaluating a sample took ~96 us of its time against ~19 us to decode it, at a 20 us
// interval: H200, 2026-11-29), so the pool is the flow control: when fewer than
// kThrottleLowImages per device are free, every sampling device is stopped and drained
// (pm_throttles), and sampling starts again, if still wanted, once half the pool is free.
// Sampling then runs in windows as long as the pool holds, and no busy sample is dropped for
// want of an image: before this, 38-65 % of a ResNet-50 run's busy samples were. Should a
// decode still find no image, it goes into a spare image whose samples are dropped
// (pm_samples_lost), and only their spans go on (PmImage::dropped), so that the writer can
// count them as idle or busy: the hardware buffer is drained whatever the writer does.
//
// Accounting (SessionMeta): every device's time sampling is summed (pm_sampling_ms), and
// pm_samples_expected = that time / the interval; pm_samples_undecoded = expected - decoded:
// samples lost to a hardware-buffer overflow, and those since the last decode at exit. The
// expectation is measured on the CPU between Start and Stop, the samples on the GPU's clock:
// it is good to about one sample per start and per stop (pm_starts).
//
// Per-device state table (DeviceState::phase; a device has no entry before its first context):
//   | phase     | meaning                                     | next                            |
//   | kArmed    | set up, stopped and drained: the policy     | kSampling (wanted, the budget   |
//   |           | wants nothing sampled on it                 | allows), kPaused (wanted, it    |
//   |           |                                             | does not), kRetired, kStopped   |
//   | kSampling | started; drained every decode_period        | kArmed (nothing wanted, or the  |
//   |           |                                             | pool is short: stopped, then    |
//   |           |                                             | drained), kPaused (likewise),   |
//   |           |                                             | kRetired, kStopped, kFailed     |
//   | kPaused   | wanted, but the budget is spent: stopped    | kSampling (a window fits; a     |
//   |           | and drained                                 | restart that fails is reopened: |
//   |           |                                             | disabled, set up again),        |
//   |           |                                             | kArmed, kRetired, kStopped,     |
//   |           |                                             | kFailed                         |
//   | kRetired  | its last context was destroyed: decoded,    | kSampling or kArmed (a new      |
//   |           | stopped, disabled                           | context), kStopped              |
//   | kStopped  | shutdown: no CUPTI call any more            | (end)                           |
//   | kFailed   | set-up, decode, start or stop failed;       | (end)                           |
//   |           | disabled                                    |                                 |
// A hardware-buffer overflow keeps the phase: counted (pm_overflows), and sampling is disabled
// and set up again (started again only if it was sampling) so that later decodes work (CUPTI
// keeps failing them after an overflow).
//
// Lock order: devices_mutex_ -> (the backend's CUPTI lock, the sink's queue lock, pool_mutex,
// mutex_). devices_mutex_ guards the devices, the policy and every backend call; it is held by
// the decode thread for a pass and by an application thread for a set-up or a retirement.
// mutex_ and pool_mutex are leaves.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/common/env_settings.h"
#include "injector/achieved/pm/pm_device.h"
#include "injector/achieved/pm/pm_settings.h"
#include "injector/achieved/pm_samples.h"
#include "injector/achieved/pm_sampling_policy.h"

namespace occ::inj {

class PmCollector final : public AchievedProfiler {
 public:
  using Sink = std::function<void(PmImage&&)>;
  // Called (on the set-up's thread, no lock held) each time a device has been set up, started
  // and decoded once: by then CUPTI has created the state it tears down at exit.
  using OnSampling = std::function<void()>;
  // The policy's and the accounting's clock (ns, steady); tests pass a stand-in. The decode
  // period is kept on the real clock either way.
  using Clock = std::function<int64_t()>;
  // Starts the decode thread.
  PmCollector(Sink sink, std::unique_ptr<PmBackend> backend, PmCollectorSettings settings,
              OnSampling on_sampling = {}, Clock clock = {});
  ~PmCollector() override;
  PmCollector(const PmCollector&) = delete;
  PmCollector& operator=(const PmCollector&) = delete;

  // The core enables CONTEXT_CREATED, CONTEXT_DESTROY_STARTING and MODULE_LOADED itself
  // (cupti_tracer.cc).
  void EnableCallbacks(CUpti_SubscriberHandle /*subscriber*/) override {}
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) override;
  void Shutdown() override;
  std::vector<std::pair<std::string, std::string>> SessionMeta() const override;

  // What OnCallback does for CONTEXT_CREATED, CONTEXT_DESTROY_STARTING and MODULE_LOADED
  // (tests call them directly).
  void NoteContext(void* context);
  void NoteContextDestroyed(void* context);
  void NoteNewCode();
  // The writer's view of GPU work (writer thread; SessionHooks::pm_work).
  void NoteWork(const PmWorkReport& report);

  // Counters (any thread).
  uint64_t overflows() const { return overflows_.load(); }
  uint64_t decodes() const { return decodes_.load(); }
  uint64_t throttles() const { return throttles_.load(); }  // stopped: the writer held the pool
  uint64_t starts() const { return starts_.load(); }  // from kArmed or kPaused
  uint64_t stops() const { return stops_.load(); }    // to kArmed: nothing wanted samples
  uint64_t pauses() const { return pauses_.load(); }  // to kPaused: the budget was spent
  uint64_t resumes() const { return resumes_.load(); }
  uint64_t wakeups() const { return wakeups_.load(); }  // the decode thread's passes
  uint64_t samples_decoded() const { return samples_decoded_.load(); }
  int64_t sampled_ns() const { return SampledNs(clock_()); }
  std::string status() const;

 private:
  enum class Phase { kArmed, kSampling, kPaused, kRetired, kStopped, kFailed };
  struct DeviceState {
    Phase phase = Phase::kArmed;
    std::unique_ptr<PmDeviceSampler> sampler;
    std::vector<void*> contexts;  // live contexts on the device
    int64_t sampling_since_ns = 0;  // while kSampling (clock_)
    int64_t last_drain_steady_ns = 0;
  };
  // What the other threads told the decode thread since its last pass (guarded by mutex_).
  struct Signals {
    int64_t new_code_ns = INT64_MIN;  // the latest module load
    bool has_report = false;
    PmWorkReport report;
  };

  bool ShutdownRequested() const;
  void DecodeLoop();
  // Wakes the decode thread for a pass.
  void Kick();
  // devices_mutex_ held (so are the ones below). Hands the signals since the last call to the
  // policy.
  void FeedPolicy();
  // Sets a device up, starts it and decodes once, then does what the policy says.
  void SetUp(uint32_t device_id, DeviceState* device);
  // Drains each sampling device whose last drain is a decode period old.
  void DrainDue();
  // Asks the policy and starts, stops or pauses the set-up devices accordingly.
  void FollowPolicy(int64_t now_ns);
  // Images the decode thread can still take (free in the pool, or not yet allocated).
  size_t FreeImages() const;
  // Whether the pool has room to sample, with hysteresis (throttled_).
  bool PoolHasRoom();
  // `throttle`: a stop for want of images (pm_throttles), not because nothing wanted samples.
  void Apply(uint32_t device_id, DeviceState* device, PmTarget target, bool throttle = false);
  // Drains one device's hardware buffer into images for the sink; false when the device failed
  // (then disabled).
  bool DrainDevice(uint32_t device_id, DeviceState* device);
  // Whether any SM was active in a few of a decode's `samples` samples, for the policy
  // (pm_sampling_policy.h).
  void SpotCheck(uint32_t device_id, PmDeviceSampler* sampler, const std::vector<uint8_t>& image, size_t samples);
  // One decode's samples to the sink: in their image, or (image null: decoded into the spare)
  // as spans only. An empty image goes back to the pool.
  void HandOver(uint32_t device_id, PmDeviceSampler* sampler, std::vector<uint8_t>* image,
                std::vector<PmImage::Span>&& spans);
  // After an overflow or a failed restart: disabled and set up again, started if `start`;
  // false when that failed.
  bool Reopen(uint32_t device_id, DeviceState* device, bool start);
  // Also keeps the sampling clock: each device's time in kSampling, summed.
  void SetPhase(uint32_t device_id, DeviceState* device, Phase phase);
  // How long the decode thread may sleep after a pass: decode_period while a device samples,
  // else kIdleWaitMax (signals wake it before).
  std::chrono::nanoseconds NextWait() const;
  int64_t SampledNs(int64_t now_ns) const;
  // SessionMeta's rows on when and how much it sampled.
  void AddSamplingMeta(std::vector<std::pair<std::string, std::string>>* meta) const;
  void FailDevice(uint32_t device_id, DeviceState* device, const ProfilerError& error);
  // A pooled image, initialized for `sampler`; false when none is free (writer behind).
  bool TakeImage(PmDeviceSampler* sampler, std::vector<uint8_t>* image, ProfilerError* error);
  void GiveBack(std::vector<uint8_t>&& image);
  // Runs `call` (a CUPTI call) with in_call_ naming it, for the exit status line.
  template <typename Call>
  auto InCupti(const char* name, Call call) {
    in_call_.store(name);
    auto result = call();
    in_call_.store(nullptr);
    return result;
  }
  // The first failure's status, and its one "occtrace:" line.
  void SetFailure(const std::string& status, const std::string& line);

  Sink sink_;
  std::unique_ptr<PmBackend> backend_;
  const PmCollectorSettings settings_;
  const OnSampling on_sampling_;
  const Clock clock_;

  std::mutex devices_mutex_;                 // guards the four below and every backend call
  std::map<uint32_t, DeviceState> devices_;
  bool backend_initialized_ = false;
  std::vector<uint8_t> spare_image_;  // for decodes while the pool is empty
  PmSamplingPolicy policy_;

  mutable std::mutex mutex_;  // guards the nine below
  std::condition_variable wake_;
  bool stop_requested_ = false;
  bool kicked_ = false;  // a signal or a set-up: the decode thread makes a pass
  Signals signals_;
  bool wanted_anywhere_ = false;  // in the last report: a device with wanting configurations
  bool thread_done_ = false;
  std::map<uint32_t, Phase> phases_;  // published copy of each device's phase, for Meta/tests
  std::string failure_;               // empty while fine
  std::string metrics_, chip_;

  // The image pool; shared with the images in flight (the writer returns them).
  struct Pool {
    std::mutex pool_mutex;
    std::vector<std::vector<uint8_t>> free;
    size_t allocated = 0;
  };
  std::shared_ptr<Pool> pool_ = std::make_shared<Pool>();

  std::atomic<uint64_t> decodes_{0};
  std::atomic<uint64_t> overflows_{0};
  std::atomic<uint64_t> reopens_{0};
  std::atomic<uint64_t> spans_ns_{0};
  std::atomic<uint64_t> decode_errors_{0};
  std::atomic<uint64_t> samples_decoded_{0};
  std::atomic<uint64_t> samples_lost_{0};  // decoded into the spare image: writer behind
  std::atomic<uint64_t> new_code_signals_{0};
  std::atomic<uint64_t> spot_checks_{0};
  std::atomic<uint64_t> spot_checks_untold_{0};  // the CUPTI lock was busy or evaluation failed
  std::atomic<uint64_t> idle_stops_{0};          // the policy's, for SessionMeta
  std::atomic<int64_t> idle_sampled_ns_{0};      // likewise
  std::atomic<uint64_t> reports_{0};
  std::atomic<uint64_t> decode_ns_{0};
  std::atomic<int64_t> max_decode_ns_{0};
  std::atomic<uint64_t> image_bytes_{0};
  std::atomic<uint64_t> setup_ns_{0};  // on the programs' threads, in CONTEXT_CREATED
  std::atomic<uint64_t> retirements_{0};
  std::atomic<bool> shut_down_{false};
  // The sampling clock (clock_): written under devices_mutex_, atomic for SessionMeta. Summed
  // over devices: sampling time = closed + sampling_devices x now - since_sum.
  std::atomic<int64_t> first_setup_ns_{0};      // 0 = none yet
  std::atomic<int64_t> sampling_devices_{0};    // devices in kSampling
  std::atomic<int64_t> since_sum_ns_{0};        // Σ their sampling_since_ns
  std::atomic<int64_t> sampled_closed_ns_{0};   // sampling time of the periods that ended
  std::atomic<int64_t> busy_ns_{0};             // the policy's GPU-busy time, for SessionMeta
  std::atomic<int> paused_devices_{0};         // in kPaused: a report may let them resume
  std::atomic<uint64_t> starts_{0};
  std::atomic<uint64_t> throttles_{0};
  // The pool is short (see "Images" above): sampling waits until half of it is free again.
  // Decode thread only (devices_mutex_ held).
  bool throttled_ = false;
  std::atomic<uint64_t> stops_{0};
  std::atomic<uint64_t> pauses_{0};
  std::atomic<uint64_t> resumes_{0};
  std::atomic<uint64_t> wakeups_{0};
  // The CUPTI call the collector is in (a string literal), for the status line when the
  // decode thread does not stop in time at exit.
  std::atomic<const char*> in_call_{nullptr};
  std::thread thread_;
};

// The CUPTI collector.
std::unique_ptr<PmCollector> CreatePmCollector(const PmCollectorSettings& settings, PmCollector::Sink sink,
                                                    PmCollector::OnSampling on_sampling);

}  // namespace occ::inj
