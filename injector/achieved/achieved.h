// Interface between the injector core (subscriber, callbacks, writer thread) and the
// achieved-occupancy measurement (CUPTI range profiler, sampling policy). The core owns the one
// CUPTI subscriber and forwards every callback; the profiler hands finished samples to a sink
// that queues them for the writer thread (never SQLite on the launching thread).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>


namespace occ::inj {

// One row of OCC_ACHIEVED (schema/trace_schema.sql).
struct AchievedSample {
  uint32_t correlation_id = 0;   // outermost launch API id: joins OCC_LAUNCH.correlationId
  uint32_t context_id = 0;
  std::string status;            // "measured", or why not: "graph", "capturing", "no-range", ...
  double achieved_occupancy_pct = -1;  // < 0: absent
  double warps_active_per_cycle = -1;
  double sm_cycles_active = -1;
  double gpu_time_ns = -1;
  // Percent of the hardware's sustained peak (one-pass parts of Nsight Compute's SOL section).
  double dram_throughput_pct = -1;
  double l2_throughput_pct = -1;
  double l1_throughput_pct = -1;
  double issue_slots_pct = -1;
  double tensor_pipe_pct = -1;
  std::string policy;            // "sample" or "all"
  int32_t sample_index = 0;      // n-th sample of its signature
};

// Thread-safe; may be called from any application thread.
using AchievedSink = std::function<void(AchievedSample&&)>;

class AchievedProfiler {
 public:
  virtual ~AchievedProfiler() = default;
  // Called once, right after the core subscribed: enable the callbacks the profiler needs.
  virtual void EnableCallbacks(CUpti_SubscriberHandle subscriber) = 0;
  // The core forwards every callback of its subscriber here, after its own handling.
  virtual void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* cbdata) = 0;
  // At process exit (or tracing shutdown), before the core's final flush.
  virtual void Shutdown() = 0;
  // Whether CUPTI's activity buffers must be shared rather than per-thread: with the profiler
  // measuring every launch (`all`), per-thread buffers run the pool dry (cupti_tracer.cc).
  virtual bool NeedsSharedActivityBuffers() const { return false; }
  // name/value rows for OCC_META: mode, status (why absent), counts of measured launches...
  virtual std::vector<std::pair<std::string, std::string>> SessionMeta() const = 0;
};

struct AchievedConfig;  // achieved_policy.h

// `config`: from the OCCTRACE_* settings (settings.h). Returns nullptr when the mode is "off"
// (or "pm", CreatePmCollector's); the core then records achieved_mode=off itself. `light_tracing`:
// light tracing enables the driver launch callbacks itself and names launches by their
// driver correlation ids (AchievedConfig::light_tracing).
std::unique_ptr<AchievedProfiler> CreateAchievedProfiler(const AchievedConfig& config, AchievedSink sink,
                                                         bool light_tracing = false);

}  // namespace occ::inj
