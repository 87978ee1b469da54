// PmSampleJoin: PM samples joined with the kernel timeline, on the writer thread (TraceWriter
// owns it; pure C++, no CUPTI, no SQLite). It decides which samples are worth evaluating, says
// what every decoded sample became, and keeps per configuration the sampled kernel time that the
// sampling policy (pm_sampling_policy.h) follows.
//
// Takes: kernel records (AddKernel: device, start, end, configuration), PM images from the
// collector (AddImage: with counter data, or `dropped`: spans only), and how far the kernel
// records are complete (RecordsThrough).
//
// "Caught up". CUPTI hands kernel records over in buffers, late: a buffer comes back when all
// its records are complete (cuptiActivityFlushAll(0)) or when the session forces it (its
// record age, 500 ms by default), so records trail the GPU by up to ~0.75 s while images trail
// it by about one decode period. The session calls RecordsThrough(t) with the CUPTI timestamp
// t taken just before a flush that left CUPTI holding no buffer (every record of a kernel that
// started before t was then delivered), or before a forced flush (which delivers every record,
// complete or not); at the end, with the final forced flush, records are complete. An image
// is *caught up* once t >= its last sample's end.
//
// Judging an image (NextJudged), sample by sample:
//   rejected   longer than kMaxSampleIntervals intervals (a stop or a hiccup inside it: its
//              counters cannot be put on the kernels inside it): not evaluated, counted;
//   busy       overlaps a known kernel: evaluated (and stored by the writer if an SM was
//              active, else counted idle);
//   idle       overlaps no kernel, and records are complete past it: not evaluated, counted;
//   unknown    overlaps no known kernel, but records are not complete past it: evaluated like
//              a busy one (pm_samples_ahead_of_records), since its kernel may come later.
// An image is judged when it is caught up, when more than max_held_images images wait (their
// pool slots are the collector's: it must never run out of images because the writer waits
// for records), when it has waited kMostImageWaitNs (records may never catch up: light
// tracing, OCCTRACE_MAX_RECORD_AGE_MS=0, a GPU never idle at a flush; a SIGKILL then loses no
// more samples than records), or at the end. A kernel record that arrives after samples of its time were
// judged idle (it should not: see "caught up") is counted (pm_late_kernel_records); its
// samples were not evaluated. Dropped images are judged the same way when caught up (they hold
// no slot), to count their samples as lost idle or lost busy (unknown counts as busy).
//
// Sampled kernel time: each stored sample credits every kernel overlapping it with the
// overlap, to the kernel's configuration; whichever of the two reaches the join second does
// the crediting (a sample stored before its kernel's record came is kept as a span until
// records are complete past it). A configuration has *enough* with kEnoughSampleIntervals
// intervals of sampled kernel time (see there why).
//
// GPU-busy time: the union of each device's kernel times, counted up to where the records are
// complete (or, without that, kKeepNs behind the newest record: pm_sample_join.cc), for the
// CPU bound.
//
// Memory: kernels are kept until no sample can need them (they end before the oldest waiting
// sample or the last judged one, or kKeepNs behind the newest record), spans of stored and idle samples until records
// are complete past them (contiguous ones merge).
//
// Not thread-safe: the writer thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "injector/achieved/pm_samples.h"

namespace occ::inj {

// A configuration has enough samples with this many intervals of its kernel time inside stored
// samples. occ-report solves per-configuration rates by non-negative least squares over clean
// and mixed samples and shows a figure when its standard error is <= 2 points; its clean-sample
// rule (20 samples in which the configuration ran alone: analyzer/read/pm_attribution.h) met
// Nsight Compute within 3 points on 7 of 9 configurations (docs/accuracy.md). A least-squares
// estimate weighs each sample by the configuration's time in it, so 20 intervals of kernel time
// carry what 20 clean samples carry; 25 leaves room for the noise that mixed samples add.
inline constexpr uint64_t kEnoughSampleIntervals = 25;
// A sample longer than this many intervals is rejected (pm_samples_rejected_long). PM sampling
// is triggered by GPU time, so a healthy sample is one interval long; one 10.7 s long, at a
// 20 us interval, came out of a stopped sampler in a torch.compile run and was counted by 15
// configurations.
inline constexpr uint64_t kMaxSampleIntervals = 4;
// The longest an image waits for kernel records (steady clock): beyond their usual lag (the
// session's 500 ms record age + a 250 ms flush period).
inline constexpr int64_t kMostImageWaitNs = 1'000'000'000;

struct PmJoinSettings {
  uint64_t interval_ns = 50'000;  // the sampling interval (the tracer sets it: settings.cc)
  // Images with counter data that may wait for kernel records; the collector's pool has twice
  // as many (the tracer sets it from OCCTRACE_PM_* settings).
  size_t max_held_images = 8;
  // A configuration "keeps running" while its last kernel ended within this much CUPTI time of
  // the newest kernel record or records' completeness: more than the records' lag, so that a
  // configuration that runs all the time is never between two batches of records.
  int64_t running_window_ns = 1'000'000'000;
};

// What became of the samples the join judged (OCC_META, with the writer's own counts).
struct PmJoinCounts {
  uint64_t idle = 0;               // no kernel, records complete: not evaluated
  uint64_t rejected_long = 0;
  uint64_t ahead_of_records = 0;   // evaluated before records were complete past them
  uint64_t lost_idle = 0;          // dropped images' samples, by the kernel timeline
  uint64_t lost_busy = 0;
  uint64_t late_kernel_records = 0;
  uint64_t images_judged = 0;
  uint64_t images_judged_caught_up = 0;
  uint64_t most_images_held = 0;
};

class PmSampleJoin {
 public:
  explicit PmSampleJoin(const PmJoinSettings& settings = {}) : settings_(settings) {}

  // A kernel record. start 0: untimed (replayed), ignored; an end before its start: handed
  // back by a forced flush while running, taken as running on.
  void AddKernel(uint32_t device_id, uint64_t start, uint64_t end, int64_t config_id);
  // `now_ns`: the steady clock, for kMostImageWaitNs.
  void AddImage(PmImage&& image, int64_t now_ns);
  // Kernel records are complete up to this CUPTI timestamp (see the header); UINT64_MAX at the
  // end of a full trace.
  void RecordsThrough(uint64_t cupti_ns);

  // An image to evaluate: the writer evaluates `evaluate`, stores the active ones and calls
  // Credit with which it stored; dropping the Judged then returns the image's pool slot.
  struct Judged {
    PmImage image;
    std::vector<uint32_t> evaluate;  // sample indices, ascending
    // Per entry of `evaluate`, its overlaps with known kernels: overlaps[first[k]..first[k+1]).
    std::vector<uint32_t> first;
    std::vector<std::pair<int64_t, uint64_t>> overlaps;  // (configuration, ns)
    uint64_t records_through = 0;  // at judging: later stored spans wait for their kernels
  };
  // The next image due at `now_ns` (see the header), if any; `all`: every waiting image is due
  // (the end). Judges dropped images on the way without returning them.
  bool NextJudged(bool all, int64_t now_ns, Judged* out);
  // stored[k]: sample evaluate[k] became a row.
  void Credit(const Judged& judged, const std::vector<uint8_t>& stored);

  // Forgets what no sample can need any more and counts GPU-busy time; after each batch.
  void Trim();
  // The view the sampling policy follows; false (and *report untouched) when nothing changed
  // since the last call.
  bool Report(PmWorkReport* report);

  const PmJoinCounts& counts() const { return counts_; }
  // OCC_META rows on configurations' sampled kernel time: seen, with samples, with enough.
  std::vector<std::pair<std::string, std::string>> CoverageMeta() const;
  size_t waiting_images() const;   // with counter data
  size_t waiting_samples() const;  // of every waiting image, dropped ones too
  uint64_t sampled_ns(int64_t config_id) const;  // tests

 private:
  struct Kernel {
    uint64_t start, end;  // end UINT64_MAX: running when its record came
    int64_t config_id;
  };
  struct Span {
    uint64_t start, end;
  };
  // Merged, in time order: contiguous spans become one.
  struct Spans {
    std::vector<Span> spans;
    void Add(uint64_t start, uint64_t end);
    uint64_t Overlap(uint64_t start, uint64_t end) const;
    void DropBefore(uint64_t time);
  };
  struct Device {
    std::vector<Kernel> kernels;  // [0, sorted) by start, then appended ones
    size_t sorted = 0;
    struct Waiting {
      PmImage image;
      int64_t arrived_ns;
    };
    std::deque<Waiting> waiting;
    uint64_t judged_through = 0;   // latest end of a judged sample
    uint64_t newest_start = 0;     // latest kernel start seen
    Spans stored_ahead;            // stored before records were complete past them
    Spans idle;                    // judged idle without evaluation
    uint64_t busy_through = 0;     // GPU-busy time counted up to here
    int64_t busy_ns = 0;
  };
  struct Config {
    uint32_t device_id = 0;
    uint64_t sampled_ns = 0;
    uint64_t last_end = 0;
  };

  Device& DeviceOf(uint32_t device_id);
  void SortKernels(Device* device);
  // Where the front image of each waiting queue stands; picks the next due.
  bool PickDue(bool all, int64_t now_ns, uint32_t* device_id);
  void Judge(Device* device, PmImage&& image, Judged* out);
  void CountBusy(Device* device, uint64_t through);
  Config& ConfigOf(int64_t config_id, uint32_t device_id);
  uint64_t Reference(const Device& device) const;

  const PmJoinSettings settings_;
  std::map<uint32_t, Device> devices_;
  std::vector<Config> configs_;  // by configuration id (the writer's are dense from 1)
  uint64_t records_through_ = 0;
  PmJoinCounts counts_;
  bool changed_ = false;
};

}  // namespace occ::inj
