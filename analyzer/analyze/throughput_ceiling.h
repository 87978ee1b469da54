// Is more occupancy even useful here? The hardware ceilings a measured launch ran against.
//
// Takes: the throughput the tracer measured beside achieved occupancy, in the same counter pass,
// on each measured launch (OCC_ACHIEVED's DRAM / L2 / L1 / issue-slot / tensor-pipe columns, % of
// sustained peak), summed per configuration by the reader (ThroughputSums).
// Gives: the group's Achieved.throughput with a verdict on Nsight Compute's Speed of Light
// thresholds -- the busiest unit at >= 80 % of its peak is near the ceiling, every unit below 60 %
// is latency-bound -- and a sentence saying whether raising occupancy can help. A kernel near a
// ceiling cannot run faster than the ceiling allows whatever its launch configuration, so the
// model's upper bound and the ranking key are capped at what the ceiling leaves: at 90 % of DRAM
// peak, at most 10 % of the kernel's time.
#pragma once

#include <cstdint>

#include "analyzer/read/trace_rows.h"
#include "schema/report.pb.h"

namespace occ {


// Nsight Compute's Speed of Light rule thresholds (% of peak).
inline constexpr double kNearCeilingPct = 80.0;
inline constexpr double kLatencyBoundPct = 60.0;

// Fills g->achieved().throughput from `sums` (nothing when empty) and, near a ceiling, caps
// g's recoverable upper bound and priority. Call after the group's occupancy verdict, priority
// and upper bound are set.
void JudgeThroughput(const ThroughputSums& sums, occtrace::KernelGroup* g);

// JudgeThroughput on the configuration's replay throughput where the trace recorded it, else on
// the DRAM throughput of its clean PM samples (pm_attribution.h); Throughput.source says which.
void JudgeGroupThroughput(const ConfigStats& stats, occtrace::KernelGroup* g);

// True when the group's measured launches ran near a hardware ceiling.
bool NearCeiling(const occtrace::KernelGroup& g);

}  // namespace occ
