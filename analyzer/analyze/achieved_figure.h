// The judge stage's achieved-occupancy figure for one group (judge.h calls it for every group,
// judged or not): replay's per-launch measurements where the trace has them, else PM sampling's
// least-squares figure (analyzer/read/pm_attribution.h) when its standard error is small
// enough, else the figure over the samples it had alone when theirs is. Without a figure it
// always says why, in Achieved.not_measured_reason (and, for PM, PmAchieved.status): PM sampling
// off, no sample while the kernel ran (sampling stopped, or its samples lost), only in samples
// with other kernels at once, only in samples that do not separate it from another kernel, an
// error too large, or a trace without achieved occupancy. Takes the group's rows and its input
// files' facts; gives occtrace.Achieved except what needs the occupancy model (the gap to
// theoretical, judge.cc).
#pragma once

#include <vector>

#include "analyzer/analyze/grouping.h"
#include "schema/report.pb.h"

namespace occ {

// Above this variance inflation (how much sharing samples widens a unit's error against running
// alone: pm_rates.h), an error too large to show is put down to the samples not separating the
// kernel from its neighbours: the usual rule of thumb for collinear regressors.
inline constexpr double kPmNotSeparableInflation = 10;

void FillAchieved(const Group& group, const std::vector<occtrace::InputFile>& files, occtrace::Achieved* out);

}  // namespace occ
