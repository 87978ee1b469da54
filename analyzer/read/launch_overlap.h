// Which launches had their device to themselves. Takes a trace's timed launches (start, end,
// stream, configuration) as the readers gather them in their scan, in any order; gives, per
// configuration, how much of its time other launches ran beside it on the same device, how many
// of its launches ran alone (and their time), and which other streams it overlapped; and the
// file's busy span, the union of kernel intervals per device summed over devices.
//
// Why: kernels of concurrent streams share the SMs, so a launch that overlapped others is slower
// than it would be alone. Comparing two configurations' means across such launches measures
// contention, not the configuration (measured_evidence.h compares launches that ran alone).
//
// One sort per device by start, then two linear walks: O(n log n) time and 32 bytes per launch,
// which a 1 M-launch trace (a 1,000-step ResNet) holds in 32 MB. Intervals are half-open
// [start, end): two launches that touch at one nanosecond (back to back on a stream) do not
// overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace occ {

// A launch overlapped by others for at most this share of its own duration still ran alone:
// clock skew between records and the few hundred nanoseconds a successor's first blocks share
// with a predecessor's last must not make every launch of a busy stream "overlapped".
inline constexpr double kSoloToleranceFraction = 0.01;
// Other streams a configuration lists; beyond them, more_streams says there were more.
inline constexpr size_t kMaxOverlapStreams = 4;
// Launches visited beside each launch's start to name the streams it overlapped. A GPU runs at
// most 128 kernels at once (Hopper's concurrent-kernel limit), so a real trace never has more
// active; a damaged one cannot make the walk quadratic. Overlapped time is exact either way.
inline constexpr size_t kMaxActiveVisited = 128;

// One configuration's launches against the rest of their device.
struct OverlapSums {
  int64_t launches = 0;        // launches swept: timed (duration > 0) with a start
  int64_t launch_ns = 0;       // their summed durations
  int64_t overlapped_ns = 0;   // of it, time another launch ran beside them on the device
  int64_t solo_launches = 0;   // launches overlapped for at most kSoloToleranceFraction of their time
  int64_t solo_ns = 0;         // their summed durations
  std::vector<int64_t> streams;  // other streams they overlapped, ascending, at most kMaxOverlapStreams
  bool more_streams = false;     // and there were more

  // False for a configuration no launch of which could be swept (no start times: a trace
  // summary, untimed launches): its overlap is unknown.
  bool known() const { return launches > 0; }
  void AddStream(int64_t stream);
  void Merge(const OverlapSums& other);
};

// A timed launch, as a reader hands it to the sweep. `config` indexes the reader's
// configurations (and OverlapResult::per_config).
struct TimedLaunch {
  int64_t start = 0;
  int64_t end = 0;
  int64_t stream = 0;
  int32_t config = 0;
};

struct OverlapResult {
  std::vector<OverlapSums> per_config;  // indexed like the configurations
  int64_t busy_ns = 0;  // union of launch intervals per device, summed over devices
};

// Sweeps `launches` (reordered in place) of `config_count` configurations; `device_of_config[i]`
// is configuration i's device. Launches with end <= start, or an unknown configuration, are
// ignored.
OverlapResult SweepOverlap(std::vector<TimedLaunch>* launches,
                           const std::vector<int64_t>& device_of_config);

}  // namespace occ
