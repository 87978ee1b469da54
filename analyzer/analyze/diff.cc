#include "analyzer/analyze/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "analyzer/model/message_text.h"
#include "analyzer/read/trace_rows.h"

namespace occ {
namespace {

// "grid 1024x1x1, block 256x1x1, 44 regs, smem 0+4096 B": a diff row's configuration.
std::string ConfigLabel(const occtrace::KernelGroup& g) {
  return "grid " + std::to_string(g.grid_x()) + "x" + std::to_string(g.grid_y()) + "x" +
         std::to_string(g.grid_z()) + ", block " + std::to_string(g.block_x()) + "x" +
         std::to_string(g.block_y()) + "x" + std::to_string(g.block_z()) + ", " +
         std::to_string(g.registers_per_thread()) + " regs, smem " +
         std::to_string(g.static_shared_mem()) + "+" + std::to_string(g.dynamic_shared_mem()) +
         " B";
}

struct KernelTotals {
  int64_t total_ns = 0;
  int64_t launches = 0;
  double weighted_occupancy = 0;  // sum of occupancy x judged time
  int64_t judged_ns = 0;
  int64_t largest_ns = -1;
  std::string config;              // of the largest group
  std::set<std::string> configs;   // every configuration it ran in
};

std::map<std::string, KernelTotals> Totals(const std::vector<occtrace::KernelGroup>& groups) {
  std::map<std::string, KernelTotals> totals;
  for (const auto& g : groups) {
    KernelTotals& t = totals[g.name()];
    t.total_ns = SaturatingAdd(t.total_ns, g.total_ns());
    t.launches += g.launches();
    if (g.judged()) {
      t.weighted_occupancy += g.occupancy().theoretical_occupancy_pct() *
                              static_cast<double>(g.total_ns());
      t.judged_ns = SaturatingAdd(t.judged_ns, g.total_ns());
    }
    const std::string label = ConfigLabel(g);
    t.configs.insert(label);
    if (g.total_ns() > t.largest_ns) {
      t.largest_ns = g.total_ns();
      t.config = label;
    }
  }
  return totals;
}

double Occupancy(const KernelTotals& t) {
  if (t.judged_ns > 0) return t.weighted_occupancy / static_cast<double>(t.judged_ns);
  return 0;  // no judged group (or all of 0 ns)
}

std::string ConfigText(const KernelTotals& t) {
  if (t.configs.size() <= 1) return t.config;
  return t.config + " (+" + std::to_string(t.configs.size() - 1) + " more configuration" +
         (t.configs.size() == 2 ? ")" : "s)");
}

int64_t Delta(const occtrace::DiffRow& row) { return row.total_ns_after() - row.total_ns_before(); }

std::string BaseName(const std::string& word) {
  const size_t slash = word.find_last_of('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The distinct ProgramOf of the files that recorded a command ("" when none did).
std::set<std::string> Programs(const std::vector<occtrace::InputFile>& files) {
  std::set<std::string> programs;
  for (const auto& f : files) {
    const std::string program = ProgramOf(f.command());
    if (!program.empty()) programs.insert(program);
  }
  return programs;
}

std::string JoinSet(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + AbbrevOneLine(item, 60);
  return out;
}

// Below this share of either side's GPU time in kernels both traces ran, the two are taken for
// different programs or workloads (see CheckSameProgram).
constexpr double kCommonTimeMinPct = 50;

// The GPU: no GPU model in common means the times do not compare, whatever the program.
std::string GpuWarning(const DiffSide& before, const DiffSide& after) {
  std::set<std::string> gpus_before(before.gpus.begin(), before.gpus.end());
  bool common_gpu = false;
  for (const auto& g : after.gpus) common_gpu = common_gpu || gpus_before.count(g) > 0;
  if (before.gpus.empty() || after.gpus.empty() || common_gpu) return "";
  std::set<std::string> gpus_after(after.gpus.begin(), after.gpus.end());
  return "the two traces ran on different GPUs (" + JoinSet(gpus_before) + " before, " + JoinSet(gpus_after) +
         " after): their GPU times do not compare";
}

// Whether the two traces compare: the same program (CheckSameProgram) on a GPU model in common.
// Each failed check is one warning, with the figures it rests on.
std::vector<std::string> DiffWarnings(const DiffSide& before, const DiffSide& after,
                                      const occtrace::Diff& diff) {
  std::vector<std::string> warnings;
  ProgramCheck program = CheckSameProgram({"before", &before.files, before.total_ns, diff.common_time_pct_before()},
                                          {"after", &after.files, after.total_ns, diff.common_time_pct_after()});
  if (!program.warning.empty()) warnings.push_back(std::move(program.warning));
  if (std::string gpu = GpuWarning(before, after); !gpu.empty()) warnings.push_back(std::move(gpu));
  return warnings;
}

std::map<std::string, int64_t> TimeByName(const std::vector<occtrace::KernelGroup>& groups) {
  std::map<std::string, int64_t> by_name;
  for (const auto& g : groups) by_name[g.name()] = SaturatingAdd(by_name[g.name()], g.total_ns());
  return by_name;
}

}  // namespace

// - The program: when both sides record a command (occtrace traces do; Nsight Systems exports
//   and torch.profiler traces do not), the programs they run (ProgramOf: the script or the
//   executable, never the arguments, since the fix under test is often a flag) must agree.
// - The kernels: the share of each side's GPU time spent in kernels (by demangled name) that
//   both sides ran. A fix changes some kernels' configurations (same names) or replaces a few
//   kernels with new ones, and ranks of one job run the same model; either leaves most of the
//   time in kernels both sides share. Below half on either side, they ran mostly different work
//   (another program, model or input). This is the one check for traces without a command, and
//   it also catches two programs run by one interpreter under names ProgramOf cannot tell apart.
ProgramCheck CheckSameProgram(const ProgramSide& a, const ProgramSide& b, const ProgramWording& wording) {
  const std::set<std::string> programs_a = Programs(*a.files);
  const std::set<std::string> programs_b = Programs(*b.files);
  const bool programs_differ = !programs_a.empty() && !programs_b.empty() && programs_a != programs_b;
  const bool kernels_differ = a.total_ns > 0 && b.total_ns > 0 &&
                              (a.common_time_pct < kCommonTimeMinPct || b.common_time_pct < kCommonTimeMinPct);
  const std::string common = "kernels both traces ran hold " + Fixed(a.common_time_pct) + "% of the GPU time " +
                             a.label + " and " + Fixed(b.common_time_pct) + "% " + b.label;
  ProgramCheck check;
  if (programs_differ) {
    check.match = ProgramMatch::kOtherProgram;
    check.warning = wording.subject + " come from different programs: " + JoinSet(programs_a) + " " + a.label +
                    ", " + JoinSet(programs_b) + " " + b.label + " (" + common + "); " + wording.consequence;
  } else if (kernels_differ && !programs_a.empty() && programs_a == programs_b) {
    // The same program: other inputs, another model or library version, or a fix that replaced
    // its main kernels.
    check.match = ProgramMatch::kSameProgramOtherKernels;
    check.warning = "the same program (" + JoinSet(programs_b) + ") ran mostly different kernels: " + common +
                    " (another input, model or library version, or replaced kernels); " + wording.consequence;
  } else if (kernels_differ) {
    check.match = ProgramMatch::kMaybeOtherProgram;
    check.warning = wording.subject + " may come from different programs or workloads: " + common + " (" +
                    wording.why_common_kernels + "); " + wording.consequence;
  }
  return check;
}

std::pair<double, double> CommonTimePcts(const std::map<std::string, int64_t>& ns_by_name_a, int64_t total_a,
                                         const std::map<std::string, int64_t>& ns_by_name_b, int64_t total_b) {
  int64_t common_a = 0, common_b = 0;
  for (const auto& [name, ns] : ns_by_name_a) {
    auto other = ns_by_name_b.find(name);
    if (other == ns_by_name_b.end()) continue;
    common_a = SaturatingAdd(common_a, ns);
    common_b = SaturatingAdd(common_b, other->second);
  }
  return {Pct(common_a, total_a), Pct(common_b, total_b)};
}

std::string ProgramOf(const std::string& command) {
  std::istringstream words(command);
  std::string first, script;
  for (std::string word; words >> word;) {
    if (first.empty()) first = word;
    if (word.size() > 3 && word.compare(word.size() - 3, 3, ".py") == 0) {
      script = word;
      break;
    }
  }
  return BaseName(script.empty() ? first : script);
}

std::vector<occtrace::DiffRow> DiffKernels(const std::vector<occtrace::KernelGroup>& before,
                                           const std::vector<occtrace::KernelGroup>& after) {
  std::map<std::string, KernelTotals> b = Totals(before);
  std::map<std::string, KernelTotals> a = Totals(after);
  std::map<std::string, int> names;
  for (const auto& [name, t] : b) names[name] |= 1;
  for (const auto& [name, t] : a) names[name] |= 2;

  std::vector<occtrace::DiffRow> rows;
  for (const auto& [name, where] : names) {
    occtrace::DiffRow row;
    row.set_name(name);
    const KernelTotals empty;
    const KernelTotals& tb = (where & 1) ? b[name] : empty;
    const KernelTotals& ta = (where & 2) ? a[name] : empty;
    row.set_config_before(ConfigText(tb));
    row.set_config_after(ConfigText(ta));
    row.set_occupancy_before_pct(Occupancy(tb));
    row.set_occupancy_after_pct(Occupancy(ta));
    row.set_total_ns_before(tb.total_ns);
    row.set_total_ns_after(ta.total_ns);
    row.set_launches_before(tb.launches);
    row.set_launches_after(ta.launches);
    if (where == 1) {
      row.set_status("gone");
    } else if (where == 2) {
      row.set_status("new");
    } else if (tb.configs != ta.configs ||
               std::fabs(row.occupancy_after_pct() - row.occupancy_before_pct()) >= 0.05) {
      // Times differ between any two runs; "changed" means the launch configurations or the
      // occupancy did, the time deltas are in the row either way.
      row.set_status("changed");
    } else {
      row.set_status("same");
    }
    rows.push_back(std::move(row));
  }
  // What the user changed first (changed, new, gone), then the rest; each by the time it saved
  // or cost.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    const bool sx = x.status() == "same", sy = y.status() == "same";
    if (sx != sy) return sy;
    const int64_t dx = std::llabs(Delta(x)), dy = std::llabs(Delta(y));
    if (dx != dy) return dx > dy;
    return x.name() < y.name();
  });
  return rows;
}

occtrace::Diff BuildDiff(const DiffSide& before, const DiffSide& after) {
  occtrace::Diff diff;
  for (const auto& f : before.files) *diff.add_base_files() = f;
  diff.set_total_ns_before(before.total_ns);
  diff.set_total_ns_after(after.total_ns);
  diff.set_launches_before(before.launches);
  diff.set_launches_after(after.launches);
  std::vector<occtrace::DiffRow> rows = DiffKernels(before.groups, after.groups);
  for (const auto& row : rows) {
    if (row.status() == "same") {
      diff.set_same_kernels(diff.same_kernels() + 1);
      diff.set_same_delta_ns(diff.same_delta_ns() + Delta(row));
    } else {
      diff.set_changed_kernels(diff.changed_kernels() + 1);
      diff.set_changed_delta_ns(diff.changed_delta_ns() + Delta(row));
    }
  }
  const auto [common_before, common_after] =
      CommonTimePcts(TimeByName(before.groups), before.total_ns, TimeByName(after.groups), after.total_ns);
  diff.set_common_time_pct_before(common_before);
  diff.set_common_time_pct_after(common_after);
  for (auto& w : DiffWarnings(before, after, diff)) diff.add_warnings(std::move(w));
  diff.set_kernels_total(static_cast<int32_t>(rows.size()));
  diff.set_kernels_matched(static_cast<int32_t>(rows.size()));
  for (auto& row : rows) *diff.add_rows() = std::move(row);
  return diff;
}

}  // namespace occ
