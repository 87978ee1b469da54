#include "analyzer/analyze/throughput_ceiling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/model/message_text.h"
#include "analyzer/read/trace_rows.h"

namespace occ {
namespace {

std::string PercentText(double pct, int digits = 1) { return Fixed(pct, digits) + "%"; }

constexpr const char* kUnitNames[kThroughputUnits] = {"DRAM", "L2", "L1", "issue slots", "tensor pipe"};

bool IsMemoryUnit(int unit) {
  return unit == static_cast<int>(ThroughputUnit::kDram) || unit == static_cast<int>(ThroughputUnit::kL2) ||
         unit == static_cast<int>(ThroughputUnit::kL1);
}

// What makes a kernel faster once its busiest unit is saturated: not more warps, less work for
// that unit.
std::string NearCeilingAdvice(int unit) {
  if (IsMemoryUnit(unit)) {
    return "raising occupancy will not make it faster; moving fewer bytes will (fuse it with the "
           "kernels that produce or consume its data, a smaller dtype)";
  }
  if (unit == static_cast<int>(ThroughputUnit::kTensorPipe)) {
    return "its occupancy is low by design and raising it will not make it faster; less matrix work "
           "or a lower precision will";
  }
  return "raising occupancy will not make it faster; fewer instructions will (vector loads, less "
         "index arithmetic)";
}

}  // namespace

void JudgeThroughput(const ThroughputSums& sums, occtrace::KernelGroup* g) {
  if (sums.empty()) return;
  double mean[kThroughputUnits];
  int busiest = -1;
  for (int i = 0; i < kThroughputUnits; ++i) {
    mean[i] = sums.samples[i] > 0 ? sums.sum[i] / static_cast<double>(sums.samples[i]) : -1.0;
    if (mean[i] >= 0 && (busiest < 0 || mean[i] > mean[busiest])) busiest = i;
  }
  if (busiest < 0) return;
  occtrace::Throughput* t = g->mutable_achieved()->mutable_throughput();
  t->set_dram_pct(mean[static_cast<int>(ThroughputUnit::kDram)]);
  t->set_l2_pct(mean[static_cast<int>(ThroughputUnit::kL2)]);
  t->set_l1_pct(mean[static_cast<int>(ThroughputUnit::kL1)]);
  t->set_issue_slots_pct(mean[static_cast<int>(ThroughputUnit::kIssueSlots)]);
  t->set_tensor_pipe_pct(mean[static_cast<int>(ThroughputUnit::kTensorPipe)]);
  t->set_busiest_unit(kUnitNames[busiest]);
  t->set_busiest_pct(mean[busiest]);
  t->set_samples(static_cast<int32_t>(std::min<int64_t>(sums.launches, INT32_MAX)));

  int units = 0;
  for (int i = 0; i < kThroughputUnits; ++i) units += mean[i] >= 0 ? 1 : 0;
  t->set_source("replay");

  const std::string busiest_words = std::string(kUnitNames[busiest]) + " at " + PercentText(mean[busiest]) + " of peak";
  if (units == 1 && mean[busiest] < kNearCeilingPct) {
    // One unit (PM sampling records DRAM only) below its ceiling says nothing of the others: a
    // kernel bound by its tensor pipe would look latency-bound.
    t->set_verdict("below_ceiling");
    t->set_summary(busiest_words + ", the only unit measured: not at that ceiling; the other units "
                   "were not measured");
  } else if (mean[busiest] >= kNearCeilingPct) {
    t->set_verdict("near_ceiling");
    t->set_summary("near the " + std::string(kUnitNames[busiest]) + " ceiling (" + busiest_words +
                   "): " + NearCeilingAdvice(busiest));
    // No launch configuration takes a kernel past its busiest unit's peak.
    const double fraction = std::max(0.0, 100.0 - mean[busiest]) / 100.0;
    const int64_t cap_ns = std::llround(static_cast<double>(g->total_ns()) * fraction);
    if (g->recoverable_ns_upper_bound() > cap_ns) g->set_recoverable_ns_upper_bound(cap_ns);
    g->set_priority(std::min(g->priority(), g->time_pct() * fraction));
  } else if (mean[busiest] < kLatencyBoundPct) {
    t->set_verdict("latency_bound");
    t->set_summary("latency-bound (every unit below " + PercentText(kLatencyBoundPct, 0) + " of its peak; busiest " +
                   busiest_words + "): more resident warps can hide more latency, so occupancy matters here");
  } else {
    t->set_verdict("moderate");
    t->set_summary("busiest unit " + busiest_words + ": between latency-bound and the ceiling, so more occupancy "
                   "helps less than the model's bound says");
  }
}

void JudgeGroupThroughput(const ConfigStats& stats, occtrace::KernelGroup* g) {
  if (!stats.throughput.empty() || stats.pm.dram_samples < kMinPmDramSamples) {
    JudgeThroughput(stats.throughput, g);
    return;
  }
  ThroughputSums dram;
  const int unit = static_cast<int>(ThroughputUnit::kDram);
  dram.samples[unit] = stats.pm.dram_samples;
  dram.sum[unit] = stats.pm.DramPct() * static_cast<double>(stats.pm.dram_samples);
  dram.launches = stats.pm.dram_samples;
  JudgeThroughput(dram, g);
  if (g->achieved().has_throughput()) g->mutable_achieved()->mutable_throughput()->set_source("pm");
}

bool NearCeiling(const occtrace::KernelGroup& g) {
  return g.achieved().has_throughput() && g.achieved().throughput().verdict() == "near_ceiling";
}

}  // namespace occ
