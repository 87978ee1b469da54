#include "reports/csv_printer.h"

#include <algorithm>
#include <climits>
#include <ostream>
#include <string>
#include <vector>

#include "reports/report_facts.h"
#include "reports/strings.h"
#include "schema/report.pb.h"

namespace occ::reports {
namespace {

// Column names follow nsys' cuda_gpu_trace / cuda_gpu_kern_sum (and nvprof's GPU trace), then
// Nsight Compute's occupancy names. Units in the header, raw numbers in the cells.
// --gpu: the achieved columns hold the traced GPU's measurements, never the what-if GPU's.
std::vector<std::string> Header(bool what_if) {
  static const std::vector<std::string> kHeader = {
      "Rank", "Name", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd", "StcSMem (B)",
      "DymSMem (B)", "LclMem/Trd (B)", "Instances", "Total Time (ns)", "Avg (ns)", "Min (ns)",
      "Max (ns)", "Time (%)", "Time Estimated", "Timed Instances", "Time 95% Interval (ns)", "Overlap", "Judged", "Theoretical Occupancy (%)",
      "Theoretical Active Warps per SM", "Achieved Occupancy (measured) (%)",
      "Achieved Measured Launches", "Achieved Source", "PM Achieved Occupancy (%)", "PM Clean Samples",
      "PM Mixed Samples", "PM Standard Error (points)", "PM From Mixed Samples", "PM Status",
      "Achieved Not Measured Reason", "Throughput Verdict", "Busiest Unit", "Busiest Unit (% of peak)",
      "DRAM Throughput (%)", "L2 Throughput (%)", "L1 Throughput (%)", "Issue Slots Busy (%)",
      "Tensor Pipe Busy (%)", "Limiter", "Block Limit Registers", "Block Limit Shared Mem",
      "Block Limit Warps", "Block Limit SM", "Block Limit Barriers", "Allocated Reg/Trd",
      "Waves Per SM", "Tail (%)", "Best Suggestion", "Predicted Theoretical Occupancy (%)",
      "Recoverable Time Upper Bound (ns)", "Priority", "Not Judged Reason", "Origin", "Owner Library", "Source",
      "Tunable", "Measured Gain (ns)", "Counted Gain (ns)", "Counted Gain Kind", "What To Change", "Ran On Ranks", "Slowest Rank",
      "Slowest Rank Total (ns)", "Median Rank Total (ns)", "Slowest Over Median (%)",
      "Per-Rank Total (ns)", "Device", "GPU", "CC",
      "SMs", "Input", "Tool"};
  if (!what_if) return kHeader;
  std::vector<std::string> header = kHeader;
  for (std::string& name : header) {
    if (name == "Achieved Occupancy (measured) (%)") name = "Achieved Occupancy (measured on the traced GPU) (%)";
    if (name == "PM Achieved Occupancy (%)") name = "PM Achieved Occupancy (traced GPU) (%)";
  }
  return header;
}

// Empty for "no limit": a number column must stay numeric for spreadsheets and pandas.
std::string LimitCell(int32_t limit) { return limit == INT32_MAX ? "" : std::to_string(limit); }

std::string InputCell(const occtrace::Report& report, const occtrace::KernelGroup& g) {
  if (g.file_index() >= 0 && g.file_index() < report.files_size()) {
    return report.files(g.file_index()).path();
  }
  std::string joined;
  for (const occtrace::InputFile& file : report.files()) {
    joined += (joined.empty() ? "" : ";") + file.path();
  }
  return joined;
}

// The "What to change" entry for this group, if it has one.
std::string ActionFor(const occtrace::Report& report, const occtrace::KernelGroup& g) {
  for (const auto* list : {&report.actions(), &report.minor_actions()}) {
    for (const occtrace::Action& a : *list) {
      if (g.rank() > 0 && a.group_rank() == g.rank()) return a.change();
    }
  }
  return "";
}

// The cross-rank columns (several input files): which ranks ran the configuration, the slowest
// against the median, and every rank's total as "rank 0=1200;rank 1=1250". Empty for one input.
std::vector<std::string> RankCells(const occtrace::Report& report, const occtrace::KernelGroup& g) {
  if (!HasCrossRank(report) || !g.has_rank_spread()) return std::vector<std::string>(6);
  const occtrace::RankSpread& spread = g.rank_spread();
  std::string ran_on, totals;
  for (const occtrace::RankFigures& f : spread.per_rank()) {
    const std::string name = RankName(report, f.file_index());
    ran_on += (ran_on.empty() ? "" : ";") + name;
    totals += (totals.empty() ? "" : ";") + name + "=" + std::to_string(f.total_ns());
  }
  const bool compared = spread.ran_on() >= 2;
  return {ran_on,
          compared ? RankName(report, spread.slowest_file_index()) : "",
          compared ? std::to_string(spread.slowest_ns()) : "",
          compared ? FormatFixed(spread.median_ns(), 1) : "",
          compared ? FormatFixed(spread.slowest_over_median_pct(), 2) : "",
          totals};
}

// Rank .. Time 95% Interval (ns): the configuration and its launches' times.
std::vector<std::string> LaunchCells(const occtrace::KernelGroup& g) {
  return {
      g.rank() > 0 ? std::to_string(g.rank()) : "",
      g.name(),
      std::to_string(g.grid_x()),
      std::to_string(g.grid_y()),
      std::to_string(g.grid_z()),
      std::to_string(g.block_x()),
      std::to_string(g.block_y()),
      std::to_string(g.block_z()),
      std::to_string(g.registers_per_thread()),
      std::to_string(g.static_shared_mem()),
      std::to_string(g.dynamic_shared_mem()),
      std::to_string(g.local_mem_per_thread()),
      std::to_string(g.launches()),
      std::to_string(g.total_ns()),
      FormatFixed(g.mean_ns(), 1),
      std::to_string(g.min_ns()),
      std::to_string(g.max_ns()),
      FormatFixed(g.time_pct(), 2),
      // Light traces: Total is an estimate from the timed instances; the interval is empty for a
      // full trace and for a single timed instance.
      g.time_estimated() ? "yes" : "no",
      g.time_estimated() ? std::to_string(g.timed_launches()) : std::to_string(g.launches()),
      g.time_estimated() && g.time_ci95_ns() >= 0 ? std::to_string(g.time_ci95_ns()) : "",
      // "60.0% (streams 14 15 16)": the share of its time other kernels ran beside it, and
      // their streams; "unknown" without launch times.
      OverlapCell(g),
  };
}

// Judged .. Achieved Not Measured Reason: theoretical occupancy and the achieved measurements.
std::vector<std::string> OccupancyCells(const occtrace::KernelGroup& g) {
  const occtrace::Occupancy& occ = g.occupancy();
  const bool judged = g.judged();
  const occtrace::PmAchieved& pm = g.achieved().pm();
  return {
      judged ? "yes" : "no",
      judged ? FormatFixed(occ.theoretical_occupancy_pct(), 2) : "",
      judged ? std::to_string(occ.active_warps_per_sm()) : "",
      HasAchieved(g) ? FormatFixed(g.achieved().mean_pct(), 2) : "",
      // Replay's measured launches; PM's figure has its own columns ("Achieved Source" says
      // which one the achieved column holds).
      std::to_string(AchievedSource(g) == "pm" ? 0 : g.achieved().samples()),
      AchievedSource(g),
      g.achieved().has_pm() && pm.achieved_pct() >= 0 ? FormatFixed(pm.achieved_pct(), 2) : "",
      g.achieved().has_pm() ? std::to_string(pm.clean_samples()) : "",
      g.achieved().has_pm() ? std::to_string(pm.mixed_samples()) : "",
      g.achieved().has_pm() && pm.standard_error() >= 0 ? FormatFixed(pm.standard_error(), 2) : "",
      g.achieved().has_pm() ? (pm.from_mixed() ? "yes" : "no") : "",
      pm.status(),
      HasAchieved(g) ? "" : g.achieved().not_measured_reason(),
  };
}

// Throughput Verdict .. Tensor Pipe Busy (%): empty when the trace recorded no throughput for
// the group or for that unit.
std::vector<std::string> ThroughputCells(const occtrace::KernelGroup& g) {
  const occtrace::Throughput& throughput = g.achieved().throughput();
  auto measured_pct = [&](double pct) {
    return g.achieved().has_throughput() && pct >= 0 ? FormatFixed(pct, 2) : std::string();
  };
  return {
      throughput.verdict(),
      throughput.busiest_unit(),
      measured_pct(throughput.busiest_pct()),
      measured_pct(throughput.dram_pct()),
      measured_pct(throughput.l2_pct()),
      measured_pct(throughput.l1_pct()),
      measured_pct(throughput.issue_slots_pct()),
      measured_pct(throughput.tensor_pipe_pct()),
  };
}

// Limiter .. Tail (%): Nsight Compute's block limits and the waves; empty when not judged.
std::vector<std::string> LimiterCells(const occtrace::KernelGroup& g) {
  const occtrace::Occupancy& occ = g.occupancy();
  const int32_t smem_limit = occ.ncu_block_limit_shared_mem() > 0 ? occ.ncu_block_limit_shared_mem()
                                                                   : occ.block_limit_shared_mem();
  const int32_t barrier_limit = occ.ncu_block_limit_barriers() > 0 ? occ.ncu_block_limit_barriers()
                                                                   : occ.block_limit_barriers();
  std::vector<std::string> cells = {
      g.limiting_factor(),
      LimitCell(occ.block_limit_registers()),
      LimitCell(smem_limit),
      LimitCell(occ.block_limit_warps()),
      LimitCell(occ.block_limit_blocks()),
      LimitCell(barrier_limit),
      std::to_string(occ.allocated_registers_per_thread()),
      FormatFixed(g.waves_per_sm(), 2),
      FormatFixed(g.tail_pct(), 1),
  };
  if (!g.judged()) std::fill(cells.begin(), cells.end(), std::string());
  return cells;
}

// Best Suggestion .. What To Change: the advice, the owner it is for, and the gain counted.
std::vector<std::string> AdviceCells(const occtrace::Report& report, const occtrace::KernelGroup& g) {
  const occtrace::Suggestion* best = g.suggestions_size() > 0 ? &g.suggestions(0) : nullptr;
  return {
      best != nullptr ? best->text() : "",
      best != nullptr ? FormatFixed(best->predicted_occupancy_pct(), 2) : "",
      g.judged() ? std::to_string(g.recoverable_ns_upper_bound()) : "",
      g.judged() ? FormatFixed(g.priority(), 3) : "",
      g.not_judged_reason(),
      g.origin(),
      g.owner_library(),
      SourceText(g.source()),
      g.origin().empty() ? "" : (g.tunable() ? "yes" : "no"),
      g.measured_gain_ns() > 0 ? std::to_string(g.measured_gain_ns()) : "",
      g.counted_gain_ns() > 0 ? std::to_string(g.counted_gain_ns()) : "",
      g.counted_gain_kind(),
      ActionFor(report, g),
  };
}

// Device .. Tool: where the configuration ran and what recorded it.
std::vector<std::string> DeviceCells(const occtrace::Report& report, const occtrace::KernelGroup& g) {
  const occtrace::Device* device = FindDevice(report, g);
  return {
      std::to_string(g.device_id()),
      device != nullptr ? device->name() : "",
      device != nullptr ? std::to_string(device->cc_major()) + "." + std::to_string(device->cc_minor())
                        : "",
      device != nullptr ? std::to_string(device->num_sms()) : "",
      InputCell(report, g),
      ToolName(report),
  };
}

// One row under Header(), its column groups in the header's order.
std::vector<std::string> Row(const occtrace::Report& report, const occtrace::KernelGroup& g) {
  std::vector<std::string> row;
  for (const std::vector<std::string>& cells :
       {LaunchCells(g), OccupancyCells(g), ThroughputCells(g), LimiterCells(g), AdviceCells(report, g),
        RankCells(report, g), DeviceCells(report, g)}) {
    row.insert(row.end(), cells.begin(), cells.end());
  }
  return row;
}

void WriteRow(const std::vector<std::string>& cells, std::ostream& out) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out << ',';
    out << CsvField(cells[i]);
  }
  out << "\r\n";  // RFC 4180 line break
}


// --diff: one row per kernel shown, in the report's order (changed first, by time saved or
// cost); raw numbers, the change in ns signed (negative: saved).
void PrintDiffRows(const occtrace::Report& report, std::ostream& out) {
  WriteRow({"Name", "Status", "Config Before", "Config After", "Instances Before", "Instances After",
            "Total Time Before (ns)", "Total Time After (ns)", "Change (ns)", "Change (%)",
            "Theoretical Occupancy Before (%)", "Theoretical Occupancy After (%)"},
           out);
  for (const occtrace::DiffRow& r : report.diff().rows()) {
    const bool before = DiffHasBefore(r);
    const bool after = DiffHasAfter(r);
    std::string pct;
    if (before && after && r.total_ns_before() > 0) {
      pct = FormatFixed(100.0 * static_cast<double>(r.total_ns_after() - r.total_ns_before()) /
                            static_cast<double>(r.total_ns_before()),
                        2);
    }
    WriteRow({r.name(), r.status(), before ? r.config_before() : "", after ? r.config_after() : "",
              before ? std::to_string(r.launches_before()) : "", after ? std::to_string(r.launches_after()) : "",
              std::to_string(r.total_ns_before()), std::to_string(r.total_ns_after()),
              std::to_string(r.total_ns_after() - r.total_ns_before()), pct,
              before ? FormatFixed(r.occupancy_before_pct(), 2) : "",
              after ? FormatFixed(r.occupancy_after_pct(), 2) : ""},
             out);
  }
}

}  // namespace

void CsvPrinter::DoPrint(const occtrace::Report& report, const PrintOptions&, std::ostream& out) {
  if (report.has_diff()) {
    PrintDiffRows(report, out);
    return;
  }
  WriteRow(Header(!report.what_if_gpu().empty()), out);
  for (const occtrace::KernelGroup& g : report.groups()) WriteRow(Row(report, g), out);
  for (const occtrace::KernelGroup& g : report.unjudged()) WriteRow(Row(report, g), out);
}

}  // namespace occ::reports
