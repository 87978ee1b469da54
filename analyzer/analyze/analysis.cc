#include "analyzer/analyze/analysis.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "analyzer/read/registry/input_formats.h"
#include "analyzer/model/arch_table.h"
#include "analyzer/analyze/cross_rank.h"
#include "analyzer/analyze/group_advice.h"
#include "analyzer/analyze/grouping.h"
#include "analyzer/read/registry/input_paths.h"
#include "analyzer/analyze/judge.h"
#include "analyzer/analyze/kernel_origin.h"
#include "analyzer/analyze/measured_evidence.h"
#include "analyzer/read/parallel_scan.h"
#include "analyzer/read/rank_identity.h"
#include "analyzer/analyze/run_figures.h"
#include "analyzer/analyze/report_builder.h"
#include "sqlite/sqlite_db.h"
#include "analyzer/analyze/throughput_ceiling.h"
#include "analyzer/analyze/tuning_overhead.h"

namespace occ {
namespace {

// Runs the read, group, judge and advise stages over `inputs`.
StatusOr<Analysis> Analyze(const ReportOptions& options, const std::vector<std::string>& inputs,
                           std::optional<DeviceProps> what_if) {
  Analysis a;
  for (size_t i = 0; i < inputs.size(); ++i) {
    OCC_ASSIGN_OR_RETURN(auto input, OpenInput(inputs[i], static_cast<int>(i)));
    a.inputs.push_back(std::move(input));
  }
  LaunchGroups groups;
  bool any_launch = false;
  int64_t first = 0, last = 0;
  // Per file: GPU time of every kernel, and of NCCL's (before --kernel picks groups).
  std::vector<std::pair<int64_t, int64_t>> file_gpu_ns;
  std::vector<int64_t> file_busy_ns;  // 0: unknown
  for (auto& input : a.inputs) {
    // Every kernel: --kernel only chooses what the report shows (report_builder.cc), never the
    // run's figures.
    OCC_ASSIGN_OR_RETURN(TraceScan scan, input->Scan(/*kernel_regex=*/"", options.jobs));
    int64_t communication_ns = 0;
    for (const auto& c : scan.configs) {
      if (IsCommunicationKernel(c.mangled_name, c.name)) {
        communication_ns = SaturatingAdd(communication_ns, c.total_ns);
      }
    }
    file_gpu_ns.emplace_back(scan.total_ns, communication_ns);
    file_busy_ns.push_back(std::max<int64_t>(0, scan.busy_ns));
    any_launch |= scan.launches > 0;
    a.run_total_ns = SaturatingAdd(a.run_total_ns, scan.total_ns);
    a.run_launches += scan.launches;
    if (scan.first_start > 0) {
      first = first == 0 ? scan.first_start : std::min(first, scan.first_start);
      last = std::max(last, scan.last_end);
    }
    AddToGroups(std::move(scan.configs), input->devices(), what_if.has_value(), &groups);
  }
  FoldProfiledLaunches(&groups);
  if (!any_launch) {
    std::string names;
    for (const auto& input : a.inputs) names += (names.empty() ? "" : ", ") + input->info().path();
    return BadInput(names + ": no kernel launches in the trace");
  }
  a.first_start = first;
  a.last_end = last;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    a.files.push_back(a.inputs[i]->info());
    a.files.back().set_total_gpu_ns(file_gpu_ns[i].first);
    a.files.back().set_communication_gpu_ns(file_gpu_ns[i].second);
    a.files.back().set_busy_gpu_ns(file_busy_ns[i]);
  }
  a.rank_warnings = ResolveRanks(&a.files);
  const bool several_files = a.files.size() > 1;
  const std::vector<int> rank_order = RankOrder(a.files);
  JudgeContext ctx;
  ctx.what_if = what_if;
  ctx.files = &a.files;
  std::vector<FollowedBy> judged_followed_by, unjudged_followed_by;
  for (const auto& key : groups.order) {
    const Group& g = groups.by_key.at(key);
    Judged j = JudgeGroup(&ctx, g, a.run_total_ns);
    (j.ok ? judged_followed_by : unjudged_followed_by).push_back({g.stats.followed_by_name, g.stats.followed_by_launches});
    if (several_files) *j.group.mutable_rank_spread() = SpreadOf(g.by_file, rank_order);
    if (j.ok) {
      AdviseGroup(g.stats, *j.device, j.advice, &j.group);
      // Measured on the GPU the trace ran on: no verdict for another GPU's what-if.
      if (!what_if) JudgeGroupThroughput(g.stats, &j.group);
      a.judged.push_back(std::move(j.group));
      a.group_inputs.emplace_back(g.device, g.stats);
    } else {
      a.unjudged.push_back(std::move(j.group));
    }
  }
  // Who owns each kernel, and what the trace's own measurements say can be gained.
  ApplyOwnerAndEvidence(&a.judged, a.run_total_ns);
  ApplyOwnerAndEvidence(&a.unjudged, a.run_total_ns);
  // Autotuners' own time, kept apart from the program's (tuning_overhead.h).
  std::vector<occtrace::KernelGroup*> all_groups;
  for (auto& g : a.judged) all_groups.push_back(&g);
  for (auto& g : a.unjudged) all_groups.push_back(&g);
  judged_followed_by.insert(judged_followed_by.end(), unjudged_followed_by.begin(), unjudged_followed_by.end());
  MarkTuningOverhead(all_groups, judged_followed_by);
  // The figures every view shares, once, before any view option applies.
  a.actions = BuildRunActions(&a.judged, a.run_total_ns);
  if (several_files) {
    for (auto* list : {&a.judged, &a.unjudged}) {
      for (auto& g : *list) {
        g.mutable_rank_spread()->set_communication(g.owner_library() == kCommunicationLibrary);
      }
    }
  }
  return a;
}

}  // namespace

Status ValidateReportOptions(const ReportOptions& options) {
  if (options.inputs.empty()) return InvalidArgument("no input file given");
  static const std::set<std::string> kSorts = {"time",     "priority", "recoverable", "owner",
                                                "headroom", "launches", "name"};
  if (!kSorts.count(options.sort)) {
    return InvalidArgument("--sort '" + options.sort +
                           "': expected time, priority, recoverable, owner, headroom, launches or name");
  }
  if (options.top < 0) return InvalidArgument("--top must be >= 0 (0 = all)");
  if (options.jobs < 0 || options.jobs > kMaxScanJobs) {
    return InvalidArgument("--jobs must be between 0 (automatic) and " +
                           std::to_string(kMaxScanJobs));
  }
  if (!(options.min_time_pct >= 0 && options.min_time_pct <= 100)) {
    return InvalidArgument("--min-time-pct must be between 0 and 100");
  }
  if (!options.kernel_regex.empty()) OCC_RETURN_IF_ERROR(sql::ValidateRegex(options.kernel_regex));
  if (!options.diff_base.empty()) {
    // The diff has one order (time saved or cost) and shows every kernel that changed.
    if (options.sort != "time") {
      return InvalidArgument("--sort " + options.sort +
                             " does not apply to --diff: its rows are ranked by the GPU time each "
                             "kernel saved or cost");
    }
    if (options.min_time_pct > 0) return InvalidArgument("--min-time-pct does not apply to --diff");
  }
  if (!options.gpu.empty()) {
    auto gpu = LookupGpu(options.gpu);
    if (!gpu.ok()) return InvalidArgument("--gpu: " + gpu.status().message());
  }
  return OkStatus();
}

StatusOr<occtrace::Report> BuildReport(const ReportOptions& given) {
  OCC_RETURN_IF_ERROR(ValidateReportOptions(given));
  ReportOptions options = given;
  OCC_ASSIGN_OR_RETURN(options.inputs, ExpandInputPaths(given.inputs));
  std::optional<DeviceProps> what_if;
  if (!options.gpu.empty()) {
    OCC_ASSIGN_OR_RETURN(DeviceProps gpu, LookupGpu(options.gpu));
    what_if = gpu;
  }
  OCC_ASSIGN_OR_RETURN(Analysis a, Analyze(options, options.inputs, what_if));
  if (options.diff_base.empty()) return ReportFromAnalysis(options, what_if, a);
  std::vector<std::string> base_inputs = {options.diff_base};
  auto base = Analyze(options, base_inputs, what_if);
  if (!base.ok()) {
    // A base without launches still diffs: everything is "new".
    if (base.status().code() != StatusCode::kBadInput ||
        base.status().message().find("no kernel launches") == std::string::npos) {
      return Status(base.status().code(), "--diff: " + base.status().message());
    }
  }
  return DiffReport(options, what_if, base.ok() ? &*base : nullptr, a);
}

}  // namespace occ
