// The PM-sampling settings, one struct for a device's sampler (pm_device.h) and one for the
// collector (pm_collector.h), apart from both so that the settings parser (tracer/settings.h:
// OCCTRACE_PM_*, OCCTRACE_SAMPLE_BUDGET) fills them without seeing the collector's threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "injector/achieved/pm_sampling_policy.h"

namespace occ::inj {

// The sampling interval unless OCCTRACE_PM_INTERVAL_US says otherwise (settings.cc reads it
// from here). With figures from mixed samples (occ-report's least squares), 50 us covers about
// as much GPU time as 20 us (9 cold programs, H200, 2026-11-29: 20 of them within 8 points, more
// in 4 and fewer in 4) at 2.5x fewer samples to decode: no sample lost or left undecoded in
// any of them, where 20 us left 4-20 % undecoded, and a third of the CPU (docs/achieved.md).
inline constexpr uint64_t kDefaultPmIntervalNs = 50'000;

struct PmSettings {
  uint64_t interval_ns = kDefaultPmIntervalNs;  // OCCTRACE_PM_INTERVAL_US
  size_t hardware_buffer_bytes = 64 << 20;
  uint32_t max_samples_per_image = 2000;
  bool occupancy_only = false;  // the two occupancy metrics only (no DRAM throughput)
};

// Filled from the OCCTRACE_PM_* settings (settings.h).
struct PmCollectorSettings {
  PmSettings device;
  int64_t decode_period_ns = 5'000'000;
  size_t max_images = 16;
  int shutdown_wait_ms = 1'000;  // longest Shutdown waits for the decode thread
  // When to sample, and the CPU bound (OCCTRACE_SAMPLE_BUDGET): pm_sampling_policy.h.
  PmPolicySettings policy;
};

}  // namespace occ::inj
