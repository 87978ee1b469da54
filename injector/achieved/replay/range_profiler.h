// Thin owner of one context's CUPTI range profiler (cupti_range_profiler.h), configured for
// per-launch measurement: auto range, kernel replay, a one-pass metric set, R = 2 ranges
// (decode costs ~35 us at R = 2 vs ~370 us at R = 256, measured on an H100). The profiler's
// initialization, device support, chip name and the host object (configuration image,
// evaluation) are ProfilerHost's (profiler_host.h), shared with PM sampling.
//
// Not thread-safe: the caller serializes Start/StopAndDecode per context.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "injector/achieved/profiler_host.h"

namespace occ::inj {

// Metrics evaluated for each range, in this order (ncu's "Achieved Occupancy" first).
inline constexpr const char* kOccupancyMetric = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kWarpsPerCycleMetric = "sm__warps_active.avg.per_cycle_active";
inline constexpr const char* kCyclesActiveMetric = "sm__cycles_active.avg";
inline constexpr const char* kGpuTimeMetric = "gpu__time_duration.sum";
// How close the launch ran to the hardware's ceilings, for "would more occupancy help?". Nsight
// Compute's own SOL roll-ups (sm__throughput, gpu__compute_memory_throughput) need 8 and 5 passes
// on GH100, so these are their one-pass parts: with the four metrics above they fit in one pass
// on GA100, GA102, AD102, GH100, GB100 and GB202 (cuptiProfilerHostGetNumOfPasses, CUDA 13.0).
// kDramThroughputMetric (profiler_host.h) is the first of them.
inline constexpr const char* kL2ThroughputMetric = "lts__t_sectors.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kL1ThroughputMetric = "l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kIssueSlotsMetric = "sm__inst_issued.avg.pct_of_peak_sustained_active";
inline constexpr const char* kTensorPipeMetric = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";

// One context's range profiler as the achieved profiler drives it: Start in a chosen launch's
// ENTER callback, StopAndDecode in its EXIT. ContextRangeProfiler is the CUPTI implementation.
class ContextProfiler {
 public:
  // Values of the last range of a Start/Stop pair; metric values < 0 are absent.
  struct Measurement {
    size_t num_ranges = 0;
    size_t ranges_dropped = 0;
    double occupancy_pct = -1;
    double warps_per_cycle = -1;
    double cycles_active = -1;
    double gpu_time_ns = -1;
    double dram_throughput_pct = -1;
    double l2_throughput_pct = -1;
    double l1_throughput_pct = -1;
    double issue_slots_pct = -1;
    double tensor_pipe_pct = -1;
    // Where StopAndDecode's time went (wall ns): stop, decode, counter-data info + metric
    // evaluation, counter-image re-initialization. Summed into OCC_META.achieved_phase_ms.
    int64_t stop_ns = 0;
    int64_t decode_ns = 0;
    int64_t evaluate_ns = 0;
    int64_t reset_ns = 0;
  };

  virtual ~ContextProfiler() = default;
  virtual bool Start(ProfilerError* error) = 0;
  // Stops, decodes, evaluates the last range and re-initializes the counter image.
  virtual bool StopAndDecode(Measurement* out, ProfilerError* error) = 0;
  // Starts and stops the profiler once with no launch of ours in between: CUPTI's first Start
  // on a context takes ~0.14 s (H200), which this moves off the launch that is first measured.
  // A range that another launch slipped into is thrown away.
  virtual bool WarmUp(ProfilerError* error) = 0;
  // Disables the range profiler (context must still be alive); idempotent.
  virtual void Disable() = 0;
  virtual const std::string& chip_name() const = 0;
  virtual const std::vector<const char*>& metrics() const = 0;
};

// Everything the achieved profiler asks of the GPU: the process-wide profiler initialization,
// one range profiler per context, and the stream-capture query. This is the one seam where CPU
// tests and benchmarks substitute the device (none here); the policy, the callbacks, the
// per-context state, the error mapping and the log lines above it always run for real.
class ProfilerDevice {
 public:
  virtual ~ProfilerDevice() = default;
  // cuptiProfilerInitialize (reference-counted per process); Deinitialize undoes one success.
  virtual bool Initialize(ProfilerError* error) = 0;
  virtual void Deinitialize() = 0;
  // nullptr on failure, with *error naming the failing call (e.g. cuptiRangeProfilerEnable:
  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, or cuptiProfilerDeviceSupported: NOT_SUPPORTED).
  virtual std::unique_ptr<ContextProfiler> CreateContextProfiler(CUcontext ctx, ProfilerError* error) = 0;
  // Whether a launch into `stream` may be captured (cuStreamIsCapturing); true when that cannot
  // be told, because starting the profiler during a capture breaks the capture.
  virtual bool StreamMayBeCapturing(CUstream stream) = 0;
  // Enables the context callbacks (CONTEXT_CREATED, CONTEXT_DESTROY_STARTING) of `subscriber`.
  virtual bool EnableContextCallbacks(CUpti_SubscriberHandle subscriber, ProfilerError* error) = 0;
  // Switches the launch callbacks (kDriverLaunchCbids and kRuntimeLaunchCbids) of `subscriber`
  // on or off (cuptiEnableCallback).
  virtual bool SetLaunchCallbacks(CUpti_SubscriberHandle subscriber, bool on,
                                  ProfilerError* error) = 0;
};

// The real device: CUPTI's range profiler, the driver resolved at run time (errors.h Driver()).
// `owns_launch_callbacks` false: another part of occtrace (light tracing) keeps the driver
// launch callbacks on, and SetLaunchCallbacks leaves every launch callback alone.
// How the range profiler collects a launch's counters (CUpti_ProfilerReplayMode). Our
// configurations fit in one pass, so nothing is replayed either way; kUser tells CUPTI so, and
// kKernel (CUPTI's usual mode for per-kernel ranges) prepares kernel replay around every
// measured launch. OCCTRACE_ACHIEVED_REPLAY=kernel|user (achieved_policy.h).
enum class ProfilerReplay { kKernel, kUser };

std::unique_ptr<ProfilerDevice> CreateCuptiProfilerDevice(bool owns_launch_callbacks = true,
                                                          ProfilerReplay replay = ProfilerReplay::kKernel);

class ContextRangeProfiler final : public ContextProfiler {
 public:
  // Checks device support, builds the one-pass configuration (all four metrics when they fit
  // in one pass, else the occupancy metric alone) and enables the range profiler on `ctx`.
  // nullptr on failure, with *error saying which call failed.
  static std::unique_ptr<ContextRangeProfiler> Create(CUcontext ctx, ProfilerReplay replay, ProfilerError* error);

  ~ContextRangeProfiler() override;
  ContextRangeProfiler(const ContextRangeProfiler&) = delete;
  ContextRangeProfiler& operator=(const ContextRangeProfiler&) = delete;

  bool Start(ProfilerError* error) override;
  bool StopAndDecode(Measurement* out, ProfilerError* error) override;
  bool WarmUp(ProfilerError* error) override;
  void Disable() override;

  const std::string& chip_name() const override { return chip_name_; }
  const std::vector<const char*>& metrics() const override { return metrics_; }
  size_t num_passes() const { return num_passes_; }
  bool started() const { return started_; }

 private:
  ContextRangeProfiler(CUcontext ctx, ProfilerReplay replay) : ctx_(ctx), replay_(replay) {}
  bool Setup(ProfilerError* error);
  bool BuildConfig(const std::vector<uint8_t>& availability, ProfilerError* error);
  bool EnableAndConfigure(ProfilerError* error);
  bool ResetCounterData(ProfilerError* error);

  CUcontext ctx_;
  ProfilerReplay replay_;
  std::string chip_name_;
  std::vector<const char*> metrics_;
  size_t num_passes_ = 0;
  std::unique_ptr<ProfilerHost> host_;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  std::vector<uint8_t> config_image_;
  std::vector<uint8_t> counter_data_;
  bool started_ = false;
};

}  // namespace occ::inj
