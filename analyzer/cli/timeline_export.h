// `occ-report TRACE --format trace -o run.json.gz`: the trace's launches as a timeline in the
// Chrome Trace Event Format as torch.profiler writes it (Kineto's "kernel" events and their
// args), which Perfetto, chrome://tracing and Holistic Trace Analysis open. Takes trace files
// (occtrace, Nsight Systems export, .sql dump, torch.profiler JSON); gives one JSON file per
// input, gzip-compressed when its name ends in .gz:
//   - one track per device and stream: pid = CUDA device, tid = stream, with process_name /
//     thread_name metadata;
//   - one "X" slice per launch, cat "kernel", with Kineto's args (device, stream, correlation,
//     "registers per thread", "shared memory", grid, block, "blocks per SM", "warps per SM",
//     "est. achieved occupancy %") and occtrace's: static and dynamic shared memory,
//     "theoretical occupancy %", limiter, owner, "achieved occupancy %" where it was measured,
//     and for NCCL kernels "nccl" plus an instant marker at the kernel's start;
//   - a counter track "achieved occupancy %" per device from the trace's PM samples, if any;
//   - top-level deviceProperties, and distributedInfo (rank, world size) where the trace
//     names its rank, which HTA needs to tell the ranks' files apart.
// Streams: launches go from SQLite row by row through a buffer to zlib; memory is bounded by
// the configurations and streams, not the launches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace occ {

struct TimelineExportStats {
  int64_t files = 0;
  int64_t slices = 0;            // kernel slices written
  int64_t skipped_untimed = 0;   // launches without a start (replayed by the profiler)
  int64_t counter_events = 0;    // PM-sample counter points
};

// One input: `output` is the file to write. Several: `output` is a directory (created when
// missing) that receives one <input name>.json.gz per input. An existing file is replaced only
// with `force`. `kernel_regex` (POSIX ERE, empty = all) selects the kernels exported.
StatusOr<TimelineExportStats> ExportTimeline(const std::vector<std::string>& inputs,
                                             const std::string& output,
                                             const std::string& kernel_regex, bool force);

}  // namespace occ
