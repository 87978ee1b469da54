// The judge stage: the verdict on one group (grouping.h) on the GPU it ran on, or on the --gpu
// GPU: theoretical occupancy and its limiter, waves and tail, Nsight Compute's issues, achieved
// occupancy and what explains its gap to theoretical; or why the group cannot be judged. Takes
// a Group; gives its occtrace.KernelGroup (identity, launches, share of GPU time, verdict) and
// the model's advice the verdict came from, which group_advice.h turns into suggestions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/model/advice.h"
#include "analyzer/analyze/grouping.h"
#include "analyzer/model/occupancy.h"
#include "schema/report.pb.h"
#include "base/status.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

// What every group of one analysis is judged against.
struct JudgeContext {
  std::optional<DeviceProps> what_if;                 // --gpu: judge every group on this GPU
  std::vector<occtrace::InputFile>* files = nullptr;  // receives a warning per absurd record
};

struct Judged {
  occtrace::KernelGroup group;
  bool ok = false;                      // false: group.not_judged_reason says why
  const DeviceProps* device = nullptr;  // when ok: the GPU judged on
  LaunchAdvice advice;                  // when ok: the model's advice on the configuration
};

// `run_total_ns`: GPU time of every launch in the inputs, for the group's share.
Judged JudgeGroup(JudgeContext* ctx, const Group& group, int64_t run_total_ns);

}  // namespace occ
