// The advise stage for a traced group: of the model's suggestions for a judged group (judge.h,
// advice.h), keeps those that change the recorded configuration and raise the occupancy its
// grid can reach, and sets the group's headroom, priority and the GPU time a change could save
// at most. A block size must also gain something (reached occupancy, SM spread or idle lanes);
// for Triton and Inductor kernels it is a num_warps at the recorded grid, which num_warps never
// changes. measured_evidence.h then adds what the trace itself measured.
#pragma once

#include "analyzer/model/advice.h"
#include "analyzer/model/occupancy.h"
#include "schema/report.pb.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

void AdviseGroup(const ConfigStats& config, const DeviceProps& device, const LaunchAdvice& advice,
                 occtrace::KernelGroup* group);

}  // namespace occ
