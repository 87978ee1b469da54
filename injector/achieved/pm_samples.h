// What PM sampling (OCCTRACE_ACHIEVED=pm, pm_collector.h) and the trace writer hand each other,
// with no CUPTI types, so that TraceSession and TraceWriter carry and consume them without knowing
// CUPTI, and CPU tests hand in images made by a fake evaluator:
//  - collector -> writer: raw CUPTI counter-data images as the decode thread filled them, each
//    with the time span of every completed sample and the evaluator that turns samples into
//    metric values (PmImage); an image the collector had no pool slot for comes as its spans
//    only (`dropped`), so that the writer can still tell which of its lost samples were busy;
//  - writer -> collector: what the kernel records say about GPU work (PmWorkReport): which
//    devices run configurations that lack samples, and how long each device has been busy.
//
// Why evaluation waits for the writer thread: cuptiProfilerHostEvaluateToGpuValues is the
// expensive step after decoding (at a 10 us interval, evaluating on the decode thread fell
// behind the hardware buffer, which then overflowed: docs/achieved.md), and only the writer
// holds the kernel timeline that says which samples are worth evaluating (pm_sample_join.h).
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

// Turns samples of a counter-data image into values. Made by the collector per device and
// shared by every image of that device; Evaluate is used on the writer thread (after the
// collector may have stopped: it holds what it needs, e.g. CUPTI's host object, by itself),
// AnyActive on the decode thread.
class PmEvaluator {
 public:
  virtual ~PmEvaluator() = default;
  // The collector's idle spot check (pm_sampling_policy.h): whether an SM was active
  // (sm__cycles_active > 0) in any of `samples`, a few of a decode's. Evaluates that one metric
  // and stops at the first active sample; never waits long for CUPTI's lock, so that the decode
  // thread does not stall behind the writer. Returns false when it could not tell (lock busy,
  // evaluation failed): then nothing is concluded.
  virtual bool AnyActive(const std::vector<uint8_t>& /*image*/, const std::vector<uint32_t>& /*samples*/,
                         bool* /*active*/) {
    return false;
  }
  // Evaluates samples[k] of `image` into (*values)[k] (both resized to samples.size()), under
  // one hold of CUPTI's lock for the whole list: taken per sample, the lock made the writer
  // wait behind every decode (~115 us per evaluated sample, waits included, H200 2026-11-29).
  // (*failed)[k] is 1 when sample k was not evaluated; *error then names the first failure
  // ("cuptiProfilerHostEvaluateToGpuValues failed: ...").
  virtual void Evaluate(const std::vector<uint8_t>& image, const std::vector<uint32_t>& samples,
                        std::vector<PmValues>* values, std::vector<uint8_t>* failed, std::string* error) = 0;
};

// One decode's worth of samples from one device. Its image goes back to the collector's pool
// when the writer is done with it (`recycle`, when the PmImage is destroyed: the writer drops
// each image as soon as it has judged it), so the images in flight stay bounded and are not
// allocated again at every decode (pm_collector.h).
struct PmImage {
  PmImage() = default;
  PmImage(PmImage&&) = default;
  // An image overwritten goes back to its pool as one destroyed does.
  PmImage& operator=(PmImage&& other) noexcept {
    if (this == &other) return *this;
    GiveBack();
    device_id = other.device_id;
    counter_data = std::move(other.counter_data);
    spans = std::move(other.spans);
    dropped = other.dropped;
    interval_ns = other.interval_ns;
    evaluator = std::move(other.evaluator);
    recycle = std::move(other.recycle);
    other.recycle = nullptr;
    return *this;
  }
  ~PmImage() { GiveBack(); }
  void GiveBack() {
    if (recycle && !counter_data.empty()) recycle(std::move(counter_data));
    counter_data.clear();
  }

  uint32_t device_id = 0;
  std::vector<uint8_t> counter_data;  // CUPTI counter-data image (opaque here)
  struct Span {
    uint64_t start_ns = 0;  // CUPTI timestamps: the clock of the kernel records
    uint64_t end_ns = 0;
  };
  std::vector<Span> spans;  // spans[i]: completed sample i of counter_data
  // The samples were decoded but the pool had no image for them (the writer behind): only
  // their spans come, counter_data is empty, and they are counted as lost, idle or busy.
  bool dropped = false;
  uint64_t interval_ns = 0;  // the sampling interval they were taken at
  std::shared_ptr<PmEvaluator> evaluator;
  std::function<void(std::vector<uint8_t>&&)> recycle;  // may be empty
};

// What the writer's kernel timeline says about GPU work (PmSampleJoin::Report), for the
// collector's sampling policy (pm_sampling_policy.h). Made on the writer thread each time it
// changes; copied to the collector.
struct PmWorkReport {
  struct Device {
    uint32_t device_id = 0;
    // Configurations that ran lately (kernel records within the running window) and have less
    // sampled kernel time than they need: what sampling is for.
    uint32_t wanting = 0;
    uint32_t configs = 0;     // configurations seen on the device
    uint32_t satisfied = 0;   // of those, with enough sampled kernel time
    int64_t busy_ns = 0;      // GPU-busy time so far: the union of the device's kernel times
  };
  std::vector<Device> devices;  // by device_id
};

}  // namespace occ::inj
