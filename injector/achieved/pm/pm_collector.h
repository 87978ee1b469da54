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
//    - CONTEXT_CREATED, for a device's first context: sets PM sampling up on that thread, starts
//      it and decodes once (NoteContext). This is the one callback here that does real work, once
//      per device, and on purpose: CUPTI loads libnvperf_host/libnvperf_target and creates its
//      profiler state lazily, during these calls, and what a library creates registers its
//      teardown with atexit after ours, so it is torn down *before* our exit handler runs
//      (LIFO). Set up on a background thread, a program that ended during the set-up (short CUDA
//      C++ programs: 0.5-0.8 s) had that state destroyed under the thread still using it:
//      segfaults and heap corruption at exit (H100, 2026-11-27, bench/results/2026-11-27-h100-pm-
//      exit). Set up here, the program cannot reach exit mid-set-up, and `on_sampling` (the
//      tracer re-registering its exit handler) then puts our exit work ahead of that teardown.
//    - CONTEXT_DESTROY_STARTING of a device's last context (cudaDeviceReset, cuCtxDestroy):
//      decodes what the device holds, stops and disables it while the context still exists
//      (NoteContextDestroyed). A later context sets the device up again.
//  - The decode thread ("occtrace-pm"): every decode_period decodes each sampling device's
//    hardware buffer into a counter-data image, reads the sample spans and hands the image to
//    the sink (TraceSession::SubmitPmImage: a queue push). It never evaluates:
//    cuptiProfilerHostEvaluateToGpuValues and SQLite run on the writer thread
//    (TraceWriter::AddPmImage), so decoding keeps up with the hardware. While no device samples
//    (all paused, or none set up) it sleeps until the budget fits a window, or until a set-up
//    wakes it, for at most kIdleWaitMax: waking every decode_period while paused cost 0.5 ms of
//    CPU per ResNet-50 step (H200, 2026-11-28, bench/results/2026-11-28-six-variants).
//  - The CPU bound (time_budget.h): CUPTI decodes each sample for 12-16 us whether the GPU is
//    busy or not, so at 20 us a collector that never rests uses most of a core. Sampling is on
//    for at most free_ns + budget_fraction x the time since the first set-up (OCCTRACE_SAMPLE_
//    BUDGET, 5 %), in windows of at least window_ns: after a decode pass that spends the budget,
//    every sampling device is stopped (kPaused), and started again once a window fits. A short
//    program (under free_ns of sampling) is sampled whole; a long one 0.5 s in every 10.
//    Paused by Stop, not Disable: a stopped sampler costs the program nothing per launch
//    (0.986 x `off` on empty launches, H200, 2026-11-28, bench/results/2026-11-28-pm-pause),
//    and Start resumes without setting the device up again.
//  - Shutdown (the tracer's exit handler via the session's before_final_flush, or the writer
//    thread on SIGTERM): asks the decode thread to stop; it exits without another CUPTI call,
//    leaving sampling enabled for the process's end (pm_collector.cc says why). Shutdown waits
//    for it at most shutdown_wait_ms. The images reach the writer before its final drain.
//  - fork: the child has no decode thread and the core ignores its callbacks (TraceSession::
//    InForkedChild); no collector is inherited, and the child's exit touches nothing.
//
// Images: at most max_images exist (in the pool or in flight to the writer). When the writer
// falls behind and none is free, a decode goes into a spare image whose samples are dropped
// (pm_samples_lost): the hardware buffer is drained whatever the writer does.
//
// Per-device state table (DeviceState::phase; a device has no entry before its first context):
//   | phase     | meaning                                              | next                          |
//   | kSampling | set up, started; decoded every decode_period         | kPaused, kRetired, kStopped,  |
//   |           |                                                      | kFailed                       |
//   | kPaused   | the budget is spent: decoded, then stopped; started  | kSampling (a window fits),    |
//   |           | again when a window fits (a restart that fails is    | kRetired, kStopped, kFailed   |
//   |           | reopened: disabled and set up again)                 |                               |
//   | kRetired  | its last context was destroyed: decoded, stopped,    | kSampling (a new context),    |
//   |           | disabled                                             | kStopped                      |
//   | kStopped  | shutdown: no CUPTI call any more                     | (end)                         |
//   | kFailed   | set-up, decode or restart failed; disabled           | (end)                         |
// A hardware-buffer overflow keeps kSampling: counted (pm_overflows), and sampling is disabled
// and set up again so that later decodes work (CUPTI keeps failing them after an overflow).
//
// Lock order: devices_mutex_ -> (the backend's CUPTI lock, the sink's queue lock, pool_mutex,
// mutex_). devices_mutex_ guards the devices and every backend call; it is held by the decode
// thread for a decode pass and by an application thread for a set-up or a retirement. mutex_
// and pool_mutex are leaves.
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
#include "injector/achieved/time_budget.h"

namespace occ::inj {

class PmCollector final : public AchievedProfiler {
 public:
  using Sink = std::function<void(PmImage&&)>;
  // Called (on the set-up's thread, no lock held) each time a device has been set up, started
  // and decoded once: by then CUPTI has created the state it tears down at exit.
  using OnSampling = std::function<void()>;
  // Starts the decode thread.
  PmCollector(Sink sink, std::unique_ptr<PmBackend> backend, PmCollectorSettings settings,
              OnSampling on_sampling = {});
  ~PmCollector() override;
  PmCollector(const PmCollector&) = delete;
  PmCollector& operator=(const PmCollector&) = delete;

  // The core enables CONTEXT_CREATED and CONTEXT_DESTROY_STARTING itself (cupti_tracer.cc).
  void EnableCallbacks(CUpti_SubscriberHandle /*subscriber*/) override {}
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) override;
  void Shutdown() override;
  std::vector<std::pair<std::string, std::string>> SessionMeta() const override;

  // What OnCallback does for CONTEXT_CREATED and CONTEXT_DESTROY_STARTING (tests call them
  // directly).
  void NoteContext(void* context);
  void NoteContextDestroyed(void* context);

  // Counters (any thread).
  uint64_t overflows() const { return overflows_.load(); }
  uint64_t decodes() const { return decodes_.load(); }
  uint64_t pauses() const { return pauses_.load(); }
  uint64_t resumes() const { return resumes_.load(); }
  uint64_t wakeups() const { return wakeups_.load(); }  // the decode thread's passes
  std::string status() const;

 private:
  enum class Phase { kSampling, kPaused, kRetired, kStopped, kFailed };
  struct DeviceState {
    Phase phase = Phase::kSampling;
    std::unique_ptr<PmDeviceSampler> sampler;
    std::vector<void*> contexts;  // live contexts on the device
  };

  bool ShutdownRequested() const;
  void DecodeLoop();
  // devices_mutex_ held (so are the four below). Sets a device up, starts it and decodes once.
  void SetUp(uint32_t device_id, DeviceState* device);
  // Drains one device's hardware buffer into images for the sink; false when the device failed
  // (then disabled).
  bool DrainDevice(uint32_t device_id, DeviceState* device);
  // After an overflow: disabled and set up again; false when that failed.
  bool Reopen(uint32_t device_id, DeviceState* device);
  // Also keeps the sampling clock: sampling is on while any device is kSampling.
  void SetPhase(uint32_t device_id, DeviceState* device, Phase phase);
  // After a decode pass: pauses every sampling device when the budget is spent, restarts the
  // paused ones when a window fits.
  void KeepToBudget(int64_t now_ns);
  // How long the decode thread may sleep after a pass: decode_period while a device samples,
  // else until the budget fits a window (kIdleWaitMax at most).
  std::chrono::nanoseconds NextWait(int64_t now_ns) const;
  int64_t SampledNs(int64_t now_ns) const;
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

  std::mutex devices_mutex_;                 // guards the three below and every backend call
  std::map<uint32_t, DeviceState> devices_;
  bool backend_initialized_ = false;
  std::vector<uint8_t> spare_image_;  // for decodes while the pool is empty
  WallTimeBudget budget_;

  mutable std::mutex mutex_;  // guards the seven below
  std::condition_variable wake_;
  bool stop_requested_ = false;
  bool sampling_started_ = false;  // a set-up started a device: the decode thread wakes
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
  std::atomic<uint64_t> decode_ns_{0};
  std::atomic<int64_t> max_decode_ns_{0};
  std::atomic<uint64_t> image_bytes_{0};
  std::atomic<uint64_t> setup_ns_{0};  // on the programs' threads, in CONTEXT_CREATED
  std::atomic<uint64_t> retirements_{0};
  std::atomic<bool> shut_down_{false};
  // The sampling clock: written under devices_mutex_, atomic for SessionMeta. 0 = not yet / off.
  std::atomic<int64_t> budget_start_ns_{0};     // the first set-up
  std::atomic<int64_t> sampling_since_ns_{0};   // when sampling last turned on, while it is on
  std::atomic<int64_t> sampled_closed_ns_{0};   // sampling time before that
  std::atomic<uint64_t> pauses_{0};
  std::atomic<uint64_t> resumes_{0};
  std::atomic<uint64_t> wakeups_{0};
  // The CUPTI call the collector is in (a string literal), for the status line when the
  // decode thread does not stop in time at exit.
  std::atomic<const char*> in_call_{nullptr};
  std::thread thread_;
};

// The CUPTI collector.
std::unique_ptr<AchievedProfiler> CreatePmCollector(const PmCollectorSettings& settings, PmCollector::Sink sink,
                                                    PmCollector::OnSampling on_sampling);

}  // namespace occ::inj
