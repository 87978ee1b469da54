#include "analyzer/analyze/report_builder.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "analyzer/model/arch_table.h"
#include "analyzer/analyze/cross_rank.h"
#include "analyzer/analyze/diff.h"
#include "analyzer/analyze/judge.h"
#include "analyzer/analyze/measured_evidence.h"
#include "analyzer/model/message_text.h"
#include "analyzer/model/occupancy_curves.h"
#include "sqlite/sqlite_db.h"

namespace occ {
namespace {

void AddCurve(const DeviceProps& device, const ConfigStats& c, bool on_traced_gpu,
              occtrace::KernelGroup* out) {
  auto params = LaunchParamsFor(c, device, on_traced_gpu);
  if (!params.ok()) return;
  auto curve = BlockSizeCurve(device, *params);
  if (!curve.ok()) return;
  for (const auto& p : curve->points) {
    occtrace::BlockSizePoint* point = out->add_curve();
    point->set_block_size(p.x);
    point->set_active_blocks_per_sm(p.active_blocks_per_sm);
    point->set_occupancy_pct(p.occupancy_pct);
  }
}

void FillDevice(const TraceDevice& d, occtrace::Device* out) {
  out->set_file_index(d.file_index);
  out->set_device_id(d.device_id);
  out->set_name(d.props.name.empty() ? "(unknown)" : d.props.name);
  out->set_cc_major(d.props.cc_major);
  out->set_cc_minor(d.props.cc_minor);
  out->set_num_sms(d.props.num_sms);
  out->set_max_warps_per_sm(d.props.warp_size > 0 ? d.props.max_threads_per_sm / d.props.warp_size
                                                  : 0);
  out->set_max_blocks_per_sm(d.max_blocks_per_sm);
  out->set_regs_per_sm(d.props.regs_per_sm);
  out->set_smem_per_sm(d.props.smem_per_sm);
  out->set_smem_per_block_optin(d.props.smem_per_block_optin);
  out->set_reserved_smem_per_block(d.props.reserved_smem_per_block);
  out->set_source(d.known ? d.source : occtrace::SOURCE_UNSPECIFIED);
  for (const auto& f : d.defaulted_fields) out->add_defaulted_fields(f);
}

// What every report opens with, full or diff: tool, command, inputs, their devices and the
// what-if GPU's name.
occtrace::Report ReportHeader(const ReportOptions& options, const std::optional<DeviceProps>& what_if,
                              const Analysis& a) {
  occtrace::Report report;
  report.set_tool_version(OCC_VERSION);
  report.set_generated_for(options.command_line);
  for (auto& f : a.files) *report.add_files() = f;
  for (const auto& input : a.inputs) {
    for (const auto& d : input->devices()) FillDevice(d, report.add_devices());
  }
  if (what_if) {
    report.set_what_if_gpu(what_if->name + " (" + CcLabel(what_if->cc_major, what_if->cc_minor) +
                           ", " + std::to_string(what_if->num_sms) + " SMs)");
  }
  return report;
}

// --kernel is a view: it picks the configurations shown, the figures stay the run's.
class KernelView {
 public:
  static StatusOr<KernelView> Compile(const std::string& regex) {
    KernelView view;
    if (!regex.empty()) {
      OCC_ASSIGN_OR_RETURN(sql::NameFilter compiled, sql::NameFilter::Compile(regex));
      view.filter_ = std::move(compiled);
    }
    return view;
  }
  bool filtered() const { return filter_.has_value(); }
  bool Shows(const std::string& name) const { return !filter_ || filter_->Matches(name); }

 private:
  std::optional<sql::NameFilter> filter_;
};

double ShareOfRunPct(const Analysis& a, int64_t ns) {
  return a.run_total_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(a.run_total_ns)
                            : 0;
}

// --gpu: the what-if GPU as one more device, and what re-evaluating on it assumes.
void AddWhatIfDevice(const DeviceProps& what_if, occtrace::Report* report) {
  TraceDevice d;
  d.file_index = -1;
  d.device_id = -1;
  d.known = true;
  d.props = what_if;
  d.source = occtrace::SOURCE_ARCH_TABLE;
  auto arch = FindArchConstants(what_if.cc_major, what_if.cc_minor);
  if (arch.ok()) d.max_blocks_per_sm = (*arch)->max_blocks_per_sm;
  FillDevice(d, report->add_devices());
  report->add_notes("re-evaluated on " + report->what_if_gpu() +
                    " from the architecture table: registers and shared memory per kernel are "
                    "assumed unchanged (a build for another architecture may differ); the "
                    "recorded carveout and achieved occupancy do not apply there");
}

// NotFound when --kernel matches no launch; else, with --kernel, a note on what it shows.
Status NoteKernelView(const ReportOptions& options, const KernelView& view, const Analysis& a,
                      occtrace::Report* report) {
  int64_t matched_launches = 0, kernel_launches = 0, kernel_ns = 0;
  int kernel_groups = 0;
  for (const auto* list : {&a.judged, &a.unjudged}) {
    for (const auto& g : *list) {
      matched_launches += g.launches();
      if (!view.Shows(g.name())) continue;
      kernel_launches += g.launches();
      kernel_ns = SaturatingAdd(kernel_ns, g.total_ns());
      ++kernel_groups;
    }
  }
  if (matched_launches == 0 || kernel_launches == 0) {
    return NotFound("no kernel launch matches --kernel '" + options.kernel_regex + "'");
  }
  if (view.filtered()) {
    report->add_notes("--kernel '" + options.kernel_regex + "' shows " + std::to_string(kernel_groups) +
                      " of " + std::to_string(a.judged.size() + a.unjudged.size()) + " configurations (" +
                      Fixed(ShareOfRunPct(a, kernel_ns), 1) +
                      "% of GPU time); the summary, the recoverable time and the actions are the whole run's");
  }
  return OkStatus();
}

// The summary over every matched group (before --kernel, --top and --min-time-pct).
void FillSummary(const Analysis& a, occtrace::Summary* summary) {
  summary->set_total_gpu_ns(a.run_total_ns);
  summary->set_launches(a.run_launches);
  summary->set_span_ns(a.last_end > a.first_start ? a.last_end - a.first_start : 0);
  // Unknown (0) when any file's is: a partial union would read as the run's.
  int64_t busy_ns = 0;
  for (const auto& f : a.files) {
    if (f.busy_gpu_ns() <= 0 && f.launches() > 0) {
      busy_ns = 0;
      break;
    }
    busy_ns = SaturatingAdd(busy_ns, f.busy_gpu_ns());
  }
  summary->set_busy_ns(busy_ns);
  std::set<std::string> names;
  int64_t below_half_ns = 0, judged_ns = 0, achieved_ns = 0;
  int32_t achieved_groups = 0;
  double weighted_theo = 0, weighted_ach = 0;
  for (const auto& g : a.judged) {
    names.insert(g.name());
    double theo = g.occupancy().theoretical_occupancy_pct();
    if (theo < 50) below_half_ns = SaturatingAdd(below_half_ns, g.total_ns());
    judged_ns = SaturatingAdd(judged_ns, g.total_ns());
    weighted_theo += theo * static_cast<double>(g.total_ns());
    if (g.achieved().samples() > 0) {
      ++achieved_groups;
      achieved_ns = SaturatingAdd(achieved_ns, g.total_ns());
      weighted_ach += g.achieved().mean_pct() * static_cast<double>(g.total_ns());
    }
  }
  int64_t unjudged_ns = 0;
  for (const auto& g : a.unjudged) {
    names.insert(g.name());
    unjudged_ns = SaturatingAdd(unjudged_ns, g.total_ns());
  }
  summary->set_kernels(static_cast<int32_t>(names.size()));
  summary->set_groups(static_cast<int32_t>(a.judged.size() + a.unjudged.size()));
  summary->set_time_below_50pct_theoretical_pct(ShareOfRunPct(a, below_half_ns));
  SetRecoverable(a.actions, summary);
  summary->set_achieved_groups(achieved_groups);
  summary->set_weighted_theoretical_occupancy_pct(
      judged_ns > 0 ? weighted_theo / static_cast<double>(judged_ns) : 0);
  summary->set_weighted_achieved_occupancy_pct(
      achieved_ns > 0 ? weighted_ach / static_cast<double>(achieved_ns) : 0);
  summary->set_unjudged_groups(static_cast<int32_t>(a.unjudged.size()));
  summary->set_unjudged_gpu_ns(unjudged_ns);
  // Autotuners' time (tuning_overhead.h), and who tuned: the part before the ':'.
  int64_t tuning_ns = 0;
  std::set<std::string> tuners;
  for (const auto* list : {&a.judged, &a.unjudged}) {
    for (const auto& g : *list) {
      if (g.tuning_overhead().empty()) continue;
      tuning_ns = SaturatingAdd(tuning_ns, g.total_ns());
      tuners.insert(g.tuning_overhead().substr(0, g.tuning_overhead().find(':')));
    }
  }
  summary->set_tuning_overhead_ns(tuning_ns);
  for (const std::string& t : tuners) summary->add_tuning_overhead_by(t);
}

// GPU time per limiting factor over every matched group, the unjudged as one more; largest first.
void AddTimeByLimiter(const Analysis& a, occtrace::Report* report) {
  std::map<std::string, int64_t> by_limiter;
  for (const auto& g : a.judged) {
    by_limiter[g.limiting_factor()] = SaturatingAdd(by_limiter[g.limiting_factor()], g.total_ns());
  }
  int64_t unjudged_ns = 0;
  for (const auto& g : a.unjudged) unjudged_ns = SaturatingAdd(unjudged_ns, g.total_ns());
  if (unjudged_ns > 0 || !a.unjudged.empty()) by_limiter["unjudged"] += unjudged_ns;
  std::vector<std::pair<std::string, int64_t>> limiters(by_limiter.begin(), by_limiter.end());
  std::stable_sort(limiters.begin(), limiters.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  for (const auto& [limiter, ns] : limiters) {
    occtrace::LimiterShare* share = report->add_time_by_limiter();
    share->set_limiter(limiter);
    share->set_total_ns(ns);
    share->set_time_pct(ShareOfRunPct(a, ns));
  }
}

// Whether `gx` comes before `gy` under --sort `sort`; ties by GPU time, then by name.
bool SortsBefore(const std::string& sort, const occtrace::KernelGroup& gx,
                 const occtrace::KernelGroup& gy) {
  if (sort == "time" && gx.total_ns() != gy.total_ns()) return gx.total_ns() > gy.total_ns();
  if (sort == "headroom" && gx.headroom_pct() != gy.headroom_pct()) {
    return gx.headroom_pct() > gy.headroom_pct();
  }
  if (sort == "launches" && gx.launches() != gy.launches()) return gx.launches() > gy.launches();
  if (sort == "name" && gx.name() != gy.name()) return gx.name() < gy.name();
  if (sort == "priority" && gx.priority() != gy.priority()) return gx.priority() > gy.priority();
  if (sort == "recoverable" && gx.counted_gain_ns() != gy.counted_gain_ns()) {
    return gx.counted_gain_ns() > gy.counted_gain_ns();
  }
  if (sort == "owner") {
    const std::string ox = gx.owner_library().empty() ? gx.origin() : gx.owner_library();
    const std::string oy = gy.owner_library().empty() ? gy.origin() : gy.owner_library();
    if (ox != oy) return ox < oy;
  }
  if (gx.total_ns() != gy.total_ns()) return gx.total_ns() > gy.total_ns();
  return gx.name() < gy.name();
}

// Indices into `judged` in --sort order.
std::vector<size_t> RankJudged(const std::string& sort, const std::vector<occtrace::KernelGroup>& judged) {
  std::vector<size_t> order(judged.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return SortsBefore(sort, judged[x], judged[y]); });
  return order;
}

// Where the view put the judged groups.
struct ShownGroups {
  std::vector<int> rank;  // parallel to Analysis::judged: the rank shown, 0 when not shown
  int shown = 0;
  int hidden_small = 0;   // below --min-time-pct
};

// The judged groups --kernel, --min-time-pct and --top show, in --sort order, each with its
// block-size curve on the GPU it is judged on.
ShownGroups AddShownGroups(const ReportOptions& options, const std::optional<DeviceProps>& what_if,
                           const KernelView& view, const Analysis& a, occtrace::Report* report) {
  ShownGroups out;
  out.rank.assign(a.judged.size(), 0);
  bool full = false;  // --top reached: only tuning overhead is still listed
  for (size_t i : RankJudged(options.sort, a.judged)) {
    const auto& g = a.judged[i];
    if (!view.Shows(g.name())) continue;
    // Tuning, not the program: listed apart, its time the summary's tuning overhead.
    if (!g.tuning_overhead().empty()) {
      *report->add_tuning() = g;
      continue;
    }
    if (full) continue;
    if (g.time_pct() < options.min_time_pct) {
      ++out.hidden_small;
      continue;
    }
    if (options.top > 0 && out.shown >= options.top) {
      full = true;
      continue;
    }
    occtrace::KernelGroup* group = report->add_groups();
    *group = g;
    group->set_rank(++out.shown);
    out.rank[i] = out.shown;
    const auto& [device, stats] = a.group_inputs[i];
    if (what_if) {
      AddCurve(*what_if, stats, /*on_traced_gpu=*/false, group);
    } else if (device) {
      AddCurve(device->props, stats, /*on_traced_gpu=*/true, group);
    }
  }
  report->set_groups_total(static_cast<int32_t>(a.judged.size()));
  return out;
}

// The actions are the run's (run_figures.h); a view only says where their groups are shown.
void AddActions(const RunActions& run, const std::vector<int>& shown_rank, occtrace::Report* report) {
  for (size_t k = 0; k < run.actions.size(); ++k) {
    occtrace::Action* action = report->add_actions();
    *action = run.actions[k];
    action->set_group_rank(shown_rank[run.action_group[k]]);
  }
  for (size_t k = 0; k < run.minor_actions.size(); ++k) {
    occtrace::Action* action = report->add_minor_actions();
    *action = run.minor_actions[k];
    action->set_group_rank(shown_rank[run.minor_action_group[k]]);
  }
}

// The unjudged groups --kernel shows, by GPU time.
void AddUnjudged(const KernelView& view, const Analysis& a, occtrace::Report* report) {
  std::vector<occtrace::KernelGroup> unjudged = a.unjudged;
  std::stable_sort(unjudged.begin(), unjudged.end(),
                   [](const auto& x, const auto& y) { return x.total_ns() > y.total_ns(); });
  for (auto& g : unjudged) {
    if (view.Shows(g.name())) *report->add_unjudged() = std::move(g);
  }
}

occtrace::CrossRank CrossRankOf(const Analysis& a, const std::vector<int>& shown_rank) {
  std::vector<RankedGroup> all;
  for (size_t i = 0; i < a.judged.size(); ++i) all.push_back({&a.judged[i], shown_rank[i]});
  for (const auto& g : a.unjudged) all.push_back({&g, 0});
  return BuildCrossRank(a.files, a.rank_warnings, all);
}

std::string FormatNs(int64_t ns) {
  const double v = static_cast<double>(ns);
  return v >= 1e9 ? Fixed(v / 1e9, 2) + " s" : v >= 1e6 ? Fixed(v / 1e6, 2) + " ms" : Fixed(v / 1e3, 1) + " µs";
}

// Kernels that ran concurrently, or inputs whose launch times do not say (launch_overlap.h).
void AddOverlapNotes(const Analysis& a, occtrace::Report* report) {
  std::string unknown;
  for (const auto& f : a.files) {
    // Light traces know their timed launches' overlap; their busy span is left unknown.
    if (f.busy_gpu_ns() <= 0 && f.launches() > 0 && f.trace_mode() != "light") {
      unknown += (unknown.empty() ? "" : ", ") + f.path();
    }
  }
  if (!unknown.empty()) {
    report->add_notes("overlap unknown for " + unknown + ": no launch start times, so which launches ran "
                      "concurrently cannot be computed; measured comparisons use every launch");
  }
  const occtrace::Summary& s = report->summary();
  if (s.busy_ns() > 0 && static_cast<double>(s.total_gpu_ns()) >= 1.01 * static_cast<double>(s.busy_ns())) {
    report->add_notes("kernels ran concurrently: " + FormatNs(s.total_gpu_ns()) + " of summed kernel time in a " +
                      FormatNs(s.busy_ns()) + " busy span (the union of kernel intervals per device, summed "
                      "over devices); time shares are of summed kernel time, which counts overlapped time "
                      "once per kernel");
  }
}

// What the inputs did not record, or recorded another way, said once per report.
void AddInputNotes(const std::optional<DeviceProps>& what_if, const Analysis& a,
                   occtrace::Report* report) {
  // Traces with cubin facts (OCC_FUNCTION) know each kernel's named barriers; Nsight Systems
  // exports and traces of older occtrace versions do not.
  size_t barriers_unknown = 0;
  for (const auto& [device, stats] : a.group_inputs) barriers_unknown += stats.barrier_count < 0;
  if (barriers_unknown > 0) {
    report->add_notes(
        "barrier count not recorded for " +
        (barriers_unknown == a.group_inputs.size()
             ? std::string("any configuration")
             : std::to_string(barriers_unknown) + " of " + std::to_string(a.group_inputs.size()) +
                   " configurations") +
        ": 1 named barrier assumed; kernels using 3 or more (sm_90/100/103) or 2 or more "
        "(sm_110/12x) may fit fewer blocks per SM");
  }
  // Users check achieved occupancy against Nsight Compute, whose defaults measure another
  // cache state (docs/accuracy.md: H100, memory-bound saxpy, 11-22 points apart).
  const bool any_achieved = std::any_of(a.judged.begin(), a.judged.end(), [](const auto& g) {
    return g.achieved().samples() > 0;
  });
  if (any_achieved && !what_if) {
    report->add_notes(
        "achieved occupancy is measured on the program's own launches, with the caches and clocks "
        "the program left; to compare with Nsight Compute run ncu --cache-control none "
        "--clock-control none (its defaults flush the caches before each kernel: on a "
        "memory-bound kernel that reads up to about 20 points higher)");
  }
  // Light traces count every launch but time only those that ran in a sampling window.
  bool any_light = false;
  for (const auto& file : a.files) any_light |= file.trace_mode() == "light";
  if (any_light) {
    report->add_notes(
        "light trace: every launch is counted, GPU times are estimates (launches x the mean "
        "duration of the launches timed in sampling windows; ± is a 95 % interval of the "
        "sampling error); configurations never timed count 0 ns. Trace with --mode full for "
        "every launch's own time");
  }
  AddOverlapNotes(a, report);
  report->add_notes("GPU-time shares are of all " + std::to_string(a.run_launches) +
                    " launches in the input" + (a.files.size() > 1 ? "s" : "") + "; registers "
                    "as reported by the driver");
}

// What --min-time-pct and --top left out of the table.
void AddViewNotes(const ReportOptions& options, const KernelView& view, const Analysis& a,
                  const ShownGroups& shown, occtrace::Report* report) {
  if (shown.hidden_small > 0) {
    report->add_notes(std::to_string(shown.hidden_small) + " groups below --min-time-pct " +
                      Fixed(options.min_time_pct, 2) + "% not listed");
  }
  int judged_shown_by_kernel = 0;
  for (const auto& g : a.judged) judged_shown_by_kernel += view.Shows(g.name());
  if (options.top > 0 && shown.shown >= options.top &&
      judged_shown_by_kernel - shown.hidden_small > shown.shown) {
    report->add_notes("showing the top " + std::to_string(shown.shown) + " of " +
                      std::to_string(judged_shown_by_kernel - shown.hidden_small) +
                      " groups (--top 0 shows all)");
  }
}

// Device properties an input did not record, taken from the architecture table.
void AddDefaultedDeviceNotes(const Analysis& a, occtrace::Report* report) {
  for (const auto& input : a.inputs) {
    for (const auto& d : input->devices()) {
      if (d.defaulted_fields.empty()) continue;
      std::string list;
      for (const auto& f : d.defaulted_fields) list += (list.empty() ? "" : ", ") + f;
      report->add_notes(input->info().path() + ", device " + std::to_string(d.device_id) + " (" +
                        Abbrev(d.props.name) + "): not recorded in the trace, taken from the "
                        "architecture table for " + CcLabel(d.props.cc_major, d.props.cc_minor) +
                        ": " + list);
    }
  }
}

}  // namespace

// The summary, the ranked groups with the run's actions, then the notes.
StatusOr<occtrace::Report> ReportFromAnalysis(const ReportOptions& options,
                                              const std::optional<DeviceProps>& what_if,
                                              const Analysis& a) {
  occtrace::Report report = ReportHeader(options, what_if, a);
  report.set_sort(options.sort);
  report.set_top(options.top);
  if (what_if) AddWhatIfDevice(*what_if, &report);
  OCC_ASSIGN_OR_RETURN(const KernelView view, KernelView::Compile(options.kernel_regex));
  OCC_RETURN_IF_ERROR(NoteKernelView(options, view, a, &report));

  FillSummary(a, report.mutable_summary());
  AddTimeByLimiter(a, &report);

  const ShownGroups shown = AddShownGroups(options, what_if, view, a, &report);
  AddActions(a.actions, shown.rank, &report);
  AddUnjudged(view, a, &report);
  if (a.files.size() > 1) *report.mutable_cross_rank() = CrossRankOf(a, shown.rank);

  if (!a.judged.empty()) AddInputNotes(what_if, a, &report);
  AddViewNotes(options, view, a, shown, &report);
  AddDefaultedDeviceNotes(a, &report);
  if (a.files.size() > 1) {
    report.add_notes("groups with the same kernel, configuration and GPU model are merged across "
                     "files (file_index -1); each group's figures per file are in its rank_spread "
                     "(JSON) and in the cross-rank section");
  }
  return report;
}

namespace {

DiffSide SideOf(const Analysis& a) {
  DiffSide side;
  side.files = a.files;
  side.groups = a.judged;
  side.groups.insert(side.groups.end(), a.unjudged.begin(), a.unjudged.end());
  for (const auto& input : a.inputs) {
    for (const auto& d : input->devices()) {
      if (d.known && !d.props.name.empty()) side.gpus.push_back(d.props.name);
    }
  }
  side.total_ns = a.run_total_ns;
  side.launches = a.run_launches;
  return side;
}

}  // namespace

StatusOr<occtrace::Report> DiffReport(const ReportOptions& options,
                                      const std::optional<DeviceProps>& what_if, const Analysis* base,
                                      const Analysis& a) {
  occtrace::Report report = ReportHeader(options, what_if, a);
  report.set_top(options.top);
  if (what_if) {
    report.add_notes("theoretical occupancy before and after re-evaluated on " + report.what_if_gpu() +
                     " from the architecture table (registers and shared memory per kernel "
                     "assumed unchanged); the GPU times are those recorded");
  }
  DiffSide before;
  if (base != nullptr) {
    before = SideOf(*base);
  } else {
    // A base without launches still diffs: everything is "new".
    occtrace::InputFile f;
    f.set_path(options.diff_base);
    f.add_warnings("no kernel launches in the trace");
    before.files.push_back(std::move(f));
  }
  occtrace::Diff diff = BuildDiff(before, SideOf(a));

  // --kernel and --top choose the rows shown; the totals and warnings stay the whole runs'.
  OCC_ASSIGN_OR_RETURN(const KernelView view, KernelView::Compile(options.kernel_regex));
  google::protobuf::RepeatedPtrField<occtrace::DiffRow> shown;
  int matched = 0;
  for (auto& row : *diff.mutable_rows()) {
    if (!view.Shows(row.name())) continue;
    ++matched;
    if (options.top == 0 || shown.size() < options.top) *shown.Add() = std::move(row);
  }
  if (matched == 0) {
    return NotFound("no kernel launch matches --kernel '" + options.kernel_regex + "'");
  }
  diff.set_kernels_matched(matched);
  diff.mutable_rows()->Swap(&shown);
  if (view.filtered()) {
    report.add_notes("--kernel '" + options.kernel_regex + "' shows " + std::to_string(matched) + " of " +
                     std::to_string(diff.kernels_total()) +
                     " kernels; the totals and the warnings are the whole runs'");
  }
  if (diff.rows_size() < matched) {
    report.add_notes("showing the first " + std::to_string(diff.rows_size()) + " of " +
                     std::to_string(matched) + " kernels (--top 0 shows all)");
  }
  *report.mutable_diff() = std::move(diff);
  return report;
}

}  // namespace occ
