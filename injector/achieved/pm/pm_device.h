// The seam between the PM-sampling collector (pm_collector.h) and CUPTI's PM sampling API
// (cupti_pmsampling.h): everything the collector asks of a device, so that CPU tests substitute
// a fake (tests/achieved/fake_pm_device.h) and the collector's threads, state table, overflow
// handling and status lines always run for real.
//
// The CUPTI implementation (pm_device.cc), per device: cuptiProfilerInitialize (shared with
// the range profiler, reference-counted), chip name and counter availability, a host object
// configured with the metrics (the three below if they fit one pass, else the two occupancy
// metrics), cuptiPmSamplingEnable on the device index (device-wide: every context and process
// on it), SetConfig with a GPU-time interval and a KEEP_OLDEST hardware buffer (an overflow is
// then reported, not silently papered over), and counter-data images sized for
// max_samples_per_image samples. Called from the collector's decode thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "injector/achieved/pm/pm_settings.h"
#include "injector/achieved/pm_samples.h"
#include "injector/achieved/profiler_host.h"

namespace occ::inj {

inline constexpr const char* kPmWarpsActiveMetric = "sm__warps_active.sum";
inline constexpr const char* kPmCyclesActiveMetric = "sm__cycles_active.sum";
// The same DRAM metric the range profiler reports (profiler_host.h).
inline constexpr const char* kPmDramMetric = kDramThroughputMetric;

// What one decode found.
struct PmDecodeResult {
  size_t completed_samples = 0;  // filled into the image (its spans read)
  bool image_full = false;       // CUPTI stopped because the image was full: decode again
  bool overflow = false;         // the hardware buffer overflowed (samples were lost)
  int64_t sample_info_ns = 0;    // of the decode's time: reading the sample spans
};

// One device's PM sampler, set up and enabled. Not thread-safe (the decode thread owns it).
class PmDeviceSampler {
 public:
  virtual ~PmDeviceSampler() = default;
  virtual bool Start(ProfilerError* error) = 0;
  virtual bool Stop(ProfilerError* error) = 0;
  // A fresh counter-data image, initialized for this sampler.
  virtual bool NewImage(std::vector<uint8_t>* image, ProfilerError* error) = 0;
  // Decodes what the hardware buffer holds into `image` (a NewImage one) and reads the span of
  // each completed sample into *spans (cleared first).
  virtual bool Decode(std::vector<uint8_t>* image, std::vector<PmImage::Span>* spans,
                      PmDecodeResult* result, ProfilerError* error) = 0;
  // cuptiPmSamplingDisable; idempotent.
  virtual void Disable() = 0;
  virtual std::shared_ptr<PmEvaluator> evaluator() const = 0;
  virtual const std::vector<const char*>& metrics() const = 0;
  virtual const std::string& chip_name() const = 0;
};

class PmBackend {
 public:
  virtual ~PmBackend() = default;
  // The device index of a context (cuptiGetDeviceId); false when it cannot be told.
  virtual bool DeviceOf(void* context, uint32_t* device_index) = 0;
  // Sets PM sampling up on a device (not started). nullptr with *error naming the failing call
  // (cuptiPmSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES without counter permission).
  virtual std::unique_ptr<PmDeviceSampler> Open(uint32_t device_index, const PmSettings& settings,
                                                ProfilerError* error) = 0;
  // cuptiProfilerInitialize / DeInitialize around the collector's life.
  virtual bool Initialize(ProfilerError* error) = 0;
  virtual void Deinitialize() = 0;
};

std::unique_ptr<PmBackend> CreateCuptiPmBackend();

}  // namespace occ::inj
