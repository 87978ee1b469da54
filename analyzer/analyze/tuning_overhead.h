// Tuning overhead: GPU time an autotuner spent choosing, not the running program. Marks
// KernelGroup.tuning_overhead on
//  - autotuning trials (measured_evidence.h already tells them: a name's configurations that
//    stopped while another ran on);
//  - Triton's benchmark cache flush: triton.testing.do_bench zeroes an int32 buffer of 256 MB
//    (ATen's FillFunctor<int>) before each timed run, so nearly every launch of that fill comes
//    right before a launch of the autotuned name on the same stream (ConfigStats.followed_by_*);
//  - XLA's autotuner's redzone checks (stream_executor::gpu::RedzoneAllocatorKernelImpl), run
//    around its candidates' buffers.
// Those groups leave the ranking and the actions; the summary reports their time apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/report.pb.h"

namespace occ {

// What the reader saw after a group's launches (trace_rows.h, ConfigStats.followed_by_*).
struct FollowedBy {
  std::string name;      // mangled name of a kernel with several configurations; empty: none
  int64_t launches = 0;  // of the group's launches, those right before one of `name`'s
};

// `groups` and `followed_by` in step. Run after ApplyOwnerAndEvidence (owners, trials).
void MarkTuningOverhead(const std::vector<occtrace::KernelGroup*>& groups, const std::vector<FollowedBy>& followed_by);

}  // namespace occ
