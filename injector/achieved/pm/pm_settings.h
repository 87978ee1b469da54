// The PM-sampling settings, one struct for a device's sampler (pm_device.h) and one for the
// collector (pm_collector.h), apart from both so that the settings parser (tracer/settings.h:
// OCCTRACE_PM_*, OCCTRACE_SAMPLE_BUDGET) fills them without seeing the collector's threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace occ::inj {

struct PmSettings {
  uint64_t interval_ns = 50'000;          // OCCTRACE_PM_INTERVAL_US
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
  // The CPU bound (see the header's threads): sampling is on for at most free_ns +
  // budget_fraction x the time since the first set-up; paused, it starts again only when a
  // window_ns fits. 1 = never paused.
  double budget_fraction = 0.05;  // OCCTRACE_SAMPLE_BUDGET
  int64_t window_ns = 500'000'000;
  int64_t free_ns = 5'000'000'000;
};

}  // namespace occ::inj
