// The one owner of CUPTI's profiler-host calls, shared by both ways of measuring achieved
// occupancy: PM sampling (pm/pm_device.cc) and the range profiler (replay/range_profiler.cc).
// Neither reaches the other's folder; what they have in common is here:
//  - why a call failed (ProfilerError, CheckCupti: the one place where the achieved-occupancy
//    code checks a CUPTI result);
//  - the profiler's process-wide initialization (cuptiProfilerInitialize, reference-counted,
//    since both methods' backends initialize and deinitialize it around their lives);
//  - whether a device runs a profiler API, and its chip name;
//  - one host object (cuptiProfilerHost*): the metrics' configuration image and its number of
//    passes, and the evaluation of decoded counter data into metric values.
//
// Threads: InitializeProfiler/DeinitializeProfiler serialize themselves (a leaf mutex). A
// ProfilerHost is not thread-safe: its owner serializes its calls (PM sampling: its CUPTI lock;
// the range profiler: one context's callbacks).
#pragma once

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>

#include <cstdint>
#include <memory>
#include <span>
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

// The DRAM metric both methods configure, so that their DRAM figures are one measure.
inline constexpr const char* kDramThroughputMetric = "dram__throughput.avg.pct_of_peak_sustained_elapsed";

class ProfilerHost {
 public:
  // cuptiProfilerInitialize / cuptiProfilerDeInitialize, once per process: the first
  // InitializeProfiler initializes, each success is undone by one DeinitializeProfiler, and the
  // last one deinitializes.
  static bool InitializeProfiler(ProfilerError* error);
  static void DeinitializeProfiler();

  // Whether `api` runs on the device (false with the support levels in the error's detail).
  static bool DeviceSupported(uint32_t device_index, CUpti_Profiler_API api, ProfilerError* error);
  // The device's chip name (cuptiDeviceGetChipName), e.g. "GH100".
  static bool ChipName(uint32_t device_index, std::string* chip_name, ProfilerError* error);

  // A host object for `type` on `chip_name`, given the device's counter-availability image.
  // nullptr on failure, with *error naming cuptiProfilerHostInitialize.
  static std::unique_ptr<ProfilerHost> Create(CUpti_ProfilerType type, const std::string& chip_name,
                                              const std::vector<uint8_t>& counter_availability,
                                              ProfilerError* error);
  ~ProfilerHost();  // cuptiProfilerHostDeinitialize
  ProfilerHost(const ProfilerHost&) = delete;
  ProfilerHost& operator=(const ProfilerHost&) = delete;

  // Adds `metrics` to the configuration and sizes its image: the step that fails when the chip
  // lacks one of them (cuptiProfilerHostConfigAddMetrics, cuptiProfilerHostGetConfigImageSize).
  bool AddMetrics(std::vector<const char*> metrics, ProfilerError* error);
  // After AddMetrics: the configuration image, into *image (resized), and how many passes it
  // needs (cuptiProfilerHostGetConfigImage, cuptiProfilerHostGetNumOfPasses).
  bool ConfigImage(std::vector<uint8_t>* image, size_t* passes, ProfilerError* error);
  // The values of `metrics` (configured ones) in range or sample `range_index` of a decoded
  // counter-data image: values[i] for metrics[i]; `values` holds at least one per metric.
  bool Evaluate(const std::vector<uint8_t>& counter_data, size_t range_index, std::span<const char*> metrics,
                std::span<double> values, ProfilerError* error);

 private:
  explicit ProfilerHost(CUpti_Profiler_Host_Object* host) : host_(host) {}

  CUpti_Profiler_Host_Object* host_;
  size_t config_image_bytes_ = 0;  // from AddMetrics
};

}  // namespace occ::inj
