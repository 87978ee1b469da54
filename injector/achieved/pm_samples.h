// What PM sampling (OCCTRACE_ACHIEVED=pm, pm_collector.h) hands the trace writer: raw CUPTI
// counter-data images as the decode thread filled them, each with the time span of every
// completed sample and the evaluator that turns a sample into metric values. No CUPTI types:
// TraceSession and TraceWriter carry and consume these without knowing CUPTI, and CPU tests
// hand in images made by a fake evaluator.
//
// Why evaluation waits for the writer thread: cuptiProfilerHostEvaluateToGpuValues is the
// expensive step (at a 10 us interval, evaluating on the decode thread fell behind the
// hardware buffer, which then overflowed: docs/achieved.md); the decode thread only decodes,
// reads the sample spans and moves the image on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace occ::inj {

// One OCC_PM_SAMPLE row's values (schema/trace_schema.sql).
struct PmValues {
  double sm_cycles_active = 0;   // sm__cycles_active.sum over the sample, all SMs
  double warps_active = 0;       // sm__warps_active.sum over the sample, all SMs
  double dram_throughput_pct = -1;  // < 0: not collected (NULL)
};

// Turns one sample of a counter-data image into values. Made by the collector per device and
// shared by every image of that device; used on the writer thread only (after the collector
// may have stopped: it holds what it needs, e.g. CUPTI's host object, by itself).
class PmEvaluator {
 public:
  virtual ~PmEvaluator() = default;
  // false with *error set ("cuptiProfilerHostEvaluateToGpuValues failed: ...") on failure.
  virtual bool Evaluate(const std::vector<uint8_t>& image, size_t sample_index, PmValues* out,
                        std::string* error) = 0;
};

// One decode's worth of samples from one device. Its image goes back to the collector's pool
// when the writer is done with it (`recycle`), so the images in flight stay bounded and are not
// allocated again at every decode (pm_collector.h).
struct PmImage {
  PmImage() = default;
  PmImage(PmImage&&) = default;
  PmImage& operator=(PmImage&&) = default;
  ~PmImage() {
    if (recycle && !counter_data.empty()) recycle(std::move(counter_data));
  }

  uint32_t device_id = 0;
  std::vector<uint8_t> counter_data;  // CUPTI counter-data image (opaque here)
  struct Span {
    uint64_t start_ns = 0;  // CUPTI timestamps: the clock of the kernel records
    uint64_t end_ns = 0;
  };
  std::vector<Span> spans;  // spans[i]: completed sample i of counter_data
  std::shared_ptr<PmEvaluator> evaluator;
  std::function<void(std::vector<uint8_t>&&)> recycle;  // may be empty
};

}  // namespace occ::inj
