// Thin owner of one context's CUPTI range profiler (cupti_range_profiler.h), configured for
// per-launch measurement: auto range, kernel replay, a one-pass metric set, R = 2 ranges
// (decode costs ~35 us at R = 2 vs ~370 us at R = 256, cupti-notes.md §5.3).
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

namespace occ::inj {

// Why a CUPTI/CUDA call failed: the call's name and its result code.
struct ProfilerError {
  std::string call;             // e.g. "cuptiRangeProfilerEnable"
  CUptiResult result = CUPTI_SUCCESS;
  std::string detail;           // extra context (unsupported-device flags, ...)

  bool ok() const { return call.empty(); }
  bool insufficient_privileges() const { return result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; }
  // "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (...)".
  std::string Message() const;
};

// Records a failing CUPTI call into *error; returns whether it succeeded. The single place
// where the achieved-occupancy code checks CUPTI results.
bool CheckCupti(CUptiResult result, const char* call, ProfilerError* error);

// Metrics evaluated for each range, in this order (ncu's "Achieved Occupancy" first).
inline constexpr const char* kOccupancyMetric = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kWarpsPerCycleMetric = "sm__warps_active.avg.per_cycle_active";
inline constexpr const char* kCyclesActiveMetric = "sm__cycles_active.avg";
inline constexpr const char* kGpuTimeMetric = "gpu__time_duration.sum";

// cuptiProfilerInitialize / cuptiProfilerDeInitialize, once per process.
bool InitializeCuptiProfiler(ProfilerError* error);
void DeinitializeCuptiProfiler();

class ContextRangeProfiler {
 public:
  // Values of the last range of a Start/Stop pair; metric values < 0 are absent.
  struct Measurement {
    size_t num_ranges = 0;
    size_t ranges_dropped = 0;
    double occupancy_pct = -1;
    double warps_per_cycle = -1;
    double cycles_active = -1;
    double gpu_time_ns = -1;
  };

  // Checks device support, builds the one-pass configuration (all four metrics when they fit
  // in one pass, else the occupancy metric alone) and enables the range profiler on `ctx`.
  // nullptr on failure, with *error saying which call failed.
  // `occupancy_only` skips straight to the single-metric configuration.
  static std::unique_ptr<ContextRangeProfiler> Create(CUcontext ctx, bool occupancy_only,
                                                      ProfilerError* error);

  ~ContextRangeProfiler();
  ContextRangeProfiler(const ContextRangeProfiler&) = delete;
  ContextRangeProfiler& operator=(const ContextRangeProfiler&) = delete;

  bool Start(ProfilerError* error);
  // Stops, decodes, evaluates the last range and re-initializes the counter image.
  bool StopAndDecode(Measurement* out, ProfilerError* error);
  // Disables the range profiler (context must still be alive); idempotent.
  void Disable();

  const std::string& chip_name() const { return chip_name_; }
  size_t num_passes() const { return num_passes_; }
  const std::vector<const char*>& metrics() const { return metrics_; }
  bool started() const { return started_; }

 private:
  explicit ContextRangeProfiler(CUcontext ctx) : ctx_(ctx) {}
  bool Setup(bool occupancy_only, ProfilerError* error);
  bool BuildConfig(const std::vector<uint8_t>& availability, bool occupancy_only,
                   ProfilerError* error);
  bool ResetCounterData(ProfilerError* error);

  CUcontext ctx_;
  std::string chip_name_;
  std::vector<const char*> metrics_;
  size_t num_passes_ = 0;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  std::vector<uint8_t> config_image_;
  std::vector<uint8_t> counter_data_;
  bool started_ = false;
};

}  // namespace occ::inj
