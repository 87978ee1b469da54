#include "analyzer/analyze/cross_rank.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analyzer/analyze/diff.h"
#include "analyzer/model/message_text.h"
#include "analyzer/read/rank_identity.h"

namespace occ {
namespace {

// The median of `values` (sorted here); the mean of the middle two for an even count.
double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double OverPct(double value, double reference) {
  return reference > 0 ? 100.0 * (value - reference) / reference : 0;
}

// "16×32", "256": the dimensions without trailing 1s, as the reports write them.
std::string Dims(int64_t x, int64_t y, int64_t z) {
  std::string out = std::to_string(x);
  if (y != 1 || z != 1) out += "×" + std::to_string(y);
  if (z != 1) out += "×" + std::to_string(z);
  return out;
}

std::string LaunchSummary(const occtrace::KernelGroup& g) {
  std::string out = "grid " + Dims(g.grid_x(), g.grid_y(), g.grid_z()) + " × block " +
                    Dims(g.block_x(), g.block_y(), g.block_z()) + ", " +
                    std::to_string(g.registers_per_thread()) + " registers/thread";
  const int64_t smem = static_cast<int64_t>(g.static_shared_mem()) + g.dynamic_shared_mem();
  if (smem > 0) out += ", " + FormatBytes(smem) + " shared memory";
  return out;
}

}  // namespace

std::vector<int> RankOrder(const std::vector<occtrace::InputFile>& files) {
  std::vector<int> order(files.size());
  for (size_t i = 0; i < files.size(); ++i) order[i] = static_cast<int>(i);
  auto key = [&](int i) {
    const occtrace::InputFile& f = files[static_cast<size_t>(i)];
    const bool ranked = f.rank() >= 0 && !f.rank_source().empty();
    return std::make_tuple(!ranked, ranked ? f.rank() : 0, i);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  return order;
}

occtrace::RankSpread SpreadOf(const std::map<int, FileShare>& by_file, const std::vector<int>& rank_order) {
  occtrace::RankSpread spread;
  std::vector<double> totals;
  bool first = true;
  for (int file : rank_order) {
    auto it = by_file.find(file);
    if (it == by_file.end() || it->second.launches == 0) continue;
    const FileShare& share = it->second;
    occtrace::RankFigures* figures = spread.add_per_rank();
    figures->set_file_index(file);
    figures->set_launches(share.launches);
    figures->set_total_ns(share.total_ns);
    figures->set_achieved_samples(static_cast<int32_t>(share.achieved_samples));
    figures->set_achieved_pct(share.achieved_samples > 0
                                  ? share.achieved_sum / static_cast<double>(share.achieved_samples)
                                  : -1);
    totals.push_back(static_cast<double>(share.total_ns));
    if (first || share.total_ns > spread.slowest_ns()) {
      spread.set_slowest_file_index(file);
      spread.set_slowest_ns(share.total_ns);
    }
    if (first || share.total_ns < spread.fastest_ns()) {
      spread.set_fastest_file_index(file);
      spread.set_fastest_ns(share.total_ns);
    }
    first = false;
  }
  spread.set_ran_on(spread.per_rank_size());
  spread.set_median_ns(Median(totals));
  if (spread.ran_on() >= 2) {
    spread.set_slowest_over_median_pct(
        OverPct(static_cast<double>(spread.slowest_ns()), spread.median_ns()));
  }
  return spread;
}

namespace {

// How the files are told apart: their rank sources, the world size, ResolveRanks' warnings.
void SetRankIdentity(const std::vector<occtrace::InputFile>& files,
                     const std::vector<std::string>& warnings, occtrace::CrossRank* out) {
  std::set<std::string> sources;
  int from_trace = 0, from_name = 0;
  std::set<int> world_sizes;
  for (const auto& f : files) {
    if (!f.rank_source().empty() && f.rank() >= 0) {
      sources.insert(f.rank_source());
      (f.rank_source() == "file name" ? from_name : from_trace) += 1;
    }
    if (f.world_size() > 0) world_sizes.insert(f.world_size());
  }
  const int n = static_cast<int>(files.size());
  out->set_identity(from_trace == n ? "occtrace"
                    : from_name == n ? "file name"
                    : from_trace + from_name == 0 ? "position"
                                                  : "mixed");
  std::string joined;
  for (const auto& s : sources) joined += (joined.empty() ? "" : ", ") + s;
  out->set_rank_sources(joined);
  out->set_world_size(world_sizes.size() == 1 ? *world_sizes.begin() : 0);
  for (const auto& w : warnings) out->add_warnings(w);
}

// Per rank: all of its GPU time, split into NCCL's and the rest; the compute straggler and the
// rank that waited least in NCCL.
void AddRanks(const std::vector<occtrace::InputFile>& files, occtrace::CrossRank* out) {
  std::vector<double> compute;
  int64_t least_communication = -1;
  out->set_least_communication_file_index(-1);
  for (int i : RankOrder(files)) {
    const auto& f = files[static_cast<size_t>(i)];
    occtrace::RankSummary* rank = out->add_ranks();
    rank->set_file_index(i);
    rank->set_label(RankLabel(files, i));
    rank->set_total_gpu_ns(f.total_gpu_ns());
    rank->set_communication_gpu_ns(f.communication_gpu_ns());
    rank->set_compute_gpu_ns(f.total_gpu_ns() - f.communication_gpu_ns());
    rank->set_launches(f.launches());
    compute.push_back(static_cast<double>(rank->compute_gpu_ns()));
    if (rank->compute_gpu_ns() > out->slowest_compute_ns() || out->ranks_size() == 1) {
      out->set_slowest_file_index(i);
      out->set_slowest_compute_ns(rank->compute_gpu_ns());
    }
    if (f.communication_gpu_ns() > 0 &&
        (least_communication < 0 || f.communication_gpu_ns() < least_communication)) {
      least_communication = f.communication_gpu_ns();
      out->set_least_communication_file_index(i);
    }
  }
  out->set_median_compute_ns(Median(compute));
  out->set_slowest_over_median_pct(
      OverPct(static_cast<double>(out->slowest_compute_ns()), out->median_compute_ns()));
}

// The straggler's cause: per kernel name (the configurations of one kernel often differ
// between ranks: uneven batches, sharding), its time on the slowest rank against the median
// over every file, a file without it counting 0; the three largest excesses. NCCL kernels are
// left out: their time on a rank includes waiting for the others.
void AddStragglerCauses(const std::vector<RankedGroup>& groups, int n, occtrace::CrossRank* out) {
  struct NameTimes {
    std::map<int, int64_t> by_file;
    std::string owner;
  };
  std::map<std::string, NameTimes> by_name;
  for (const auto& g : groups) {
    const occtrace::RankSpread& spread = g.group->rank_spread();
    if (spread.communication()) continue;
    NameTimes& t = by_name[g.group->name()];
    t.owner = g.group->owner_library();
    for (const auto& r : spread.per_rank()) t.by_file[r.file_index()] += r.total_ns();
  }
  std::vector<occtrace::StragglerCause> causes;
  for (const auto& [name, t] : by_name) {
    std::vector<double> times;
    for (int i = 0; i < n; ++i) {
      auto it = t.by_file.find(i);
      times.push_back(it == t.by_file.end() ? 0.0 : static_cast<double>(it->second));
    }
    auto slowest = t.by_file.find(out->slowest_file_index());
    const int64_t on_slowest = slowest == t.by_file.end() ? 0 : slowest->second;
    const double median = Median(times);
    if (static_cast<double>(on_slowest) <= median) continue;
    occtrace::StragglerCause c;
    c.set_name(name);
    c.set_owner_library(t.owner);
    c.set_slowest_rank_ns(on_slowest);
    c.set_median_ns(median);
    c.set_ran_on(static_cast<int32_t>(t.by_file.size()));
    causes.push_back(std::move(c));
  }
  std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
    return static_cast<double>(a.slowest_rank_ns()) - a.median_ns() >
           static_cast<double>(b.slowest_rank_ns()) - b.median_ns();
  });
  for (size_t i = 0; i < causes.size() && i < 3; ++i) *out->add_straggler_causes() = causes[i];
}

// The top configurations by GPU time over every file.
void AddTopKernels(const std::vector<const RankedGroup*>& by_time, int max_kernels,
                   occtrace::CrossRank* out) {
  for (const RankedGroup* g : by_time) {
    if (out->kernels_size() >= max_kernels) break;
    occtrace::RankKernel* k = out->add_kernels();
    k->set_group_rank(g->shown_rank);
    k->set_name(g->group->name());
    k->set_launch(LaunchSummary(*g->group));
    k->set_owner_library(g->group->owner_library());
    *k->mutable_spread() = g->group->rank_spread();
  }
}

// Configurations not every file ran, and whether their kernel ran on the others at all.
void AddRankOnlyConfigs(const std::vector<RankedGroup>& groups,
                        const std::vector<const RankedGroup*>& by_time, int n, int max_rank_only,
                        occtrace::CrossRank* out) {
  std::map<std::string, std::set<int>> files_by_name;
  for (const auto& g : groups) {
    for (const auto& r : g.group->rank_spread().per_rank()) files_by_name[g.group->name()].insert(r.file_index());
  }
  for (const RankedGroup* g : by_time) {
    const occtrace::RankSpread& spread = g->group->rank_spread();
    if (spread.ran_on() >= n) continue;
    out->set_rank_only_configs_total(out->rank_only_configs_total() + 1);
    if (out->rank_only_configs_size() >= max_rank_only) continue;
    occtrace::RankOnlyConfig* c = out->add_rank_only_configs();
    c->set_group_rank(g->shown_rank);
    c->set_name(g->group->name());
    c->set_launch(LaunchSummary(*g->group));
    for (const auto& r : spread.per_rank()) c->add_on_files(r.file_index());
    c->set_launches(g->group->launches());
    c->set_total_ns(g->group->total_ns());
    c->set_kernel_on_other_files(static_cast<int>(files_by_name[g->group->name()].size()) == n);
  }
}

// Whether the files are ranks of one program, by --diff's check (diff.h) of each file against the
// first in rank order: the recorded programs agree, and each pair spends most of its GPU time in
// kernels both ran. A folder of unrelated traces is no distributed job: a warning per file that
// differs (the first in `different_programs`, two more in `warnings`, then a count) and no
// straggler verdict.
void CheckOneProgram(const std::vector<occtrace::InputFile>& files, const std::vector<RankedGroup>& groups,
                     occtrace::CrossRank* out) {
  std::map<int, std::map<std::string, int64_t>> ns_by_name;  // by file
  std::map<int, int64_t> total_ns;
  for (const auto& g : groups) {
    for (const auto& r : g.group->rank_spread().per_rank()) {
      ns_by_name[r.file_index()][g.group->name()] += r.total_ns();
      total_ns[r.file_index()] += r.total_ns();
    }
  }
  const std::vector<int> order = RankOrder(files);
  const int reference = order.front();
  const std::vector<occtrace::InputFile> reference_files = {files[static_cast<size_t>(reference)]};
  constexpr int kMaxListed = 3;
  int differing = 0;
  for (size_t k = 1; k < order.size(); ++k) {
    const int i = order[k];
    const std::vector<occtrace::InputFile> other_files = {files[static_cast<size_t>(i)]};
    const auto [common_ref, common_other] =
        CommonTimePcts(ns_by_name[reference], total_ns[reference], ns_by_name[i], total_ns[i]);
    const ProgramWording wording{RankLabel(files, reference) + " and " + RankLabel(files, i),
                                 "ranks of one job run mostly the same kernels",
                                 "they are not ranks of one job"};
    const ProgramCheck check =
        CheckSameProgram({"on " + RankLabel(files, reference), &reference_files, total_ns[reference], common_ref},
                         {"on " + RankLabel(files, i), &other_files, total_ns[i], common_other}, wording);
    // Ranks of one program may run different kernels (pipeline stages): only another program,
    // or no program recorded and little in common, tells them apart.
    if (check.match != ProgramMatch::kOtherProgram && check.match != ProgramMatch::kMaybeOtherProgram) continue;
    if (++differing == 1) {
      out->set_different_programs(check.warning);
    } else if (differing <= kMaxListed) {
      out->add_warnings(check.warning);
    }
  }
  if (differing > kMaxListed) {
    out->add_warnings(std::to_string(differing - kMaxListed) + " more files are not ranks of the program " +
                      RankLabel(files, reference) + " ran either");
  }
}

}  // namespace

occtrace::CrossRank BuildCrossRank(const std::vector<occtrace::InputFile>& files,
                                   const std::vector<std::string>& warnings,
                                   const std::vector<RankedGroup>& groups, int max_kernels,
                                   int max_rank_only) {
  occtrace::CrossRank out;
  const int n = static_cast<int>(files.size());
  SetRankIdentity(files, warnings, &out);
  AddRanks(files, &out);
  CheckOneProgram(files, groups, &out);
  if (out.different_programs().empty()) AddStragglerCauses(groups, n, &out);
  std::vector<const RankedGroup*> by_time;
  for (const auto& g : groups) by_time.push_back(&g);
  std::stable_sort(by_time.begin(), by_time.end(), [](const RankedGroup* a, const RankedGroup* b) {
    return a->group->total_ns() > b->group->total_ns();
  });
  AddTopKernels(by_time, max_kernels, &out);
  AddRankOnlyConfigs(groups, by_time, n, max_rank_only, &out);
  return out;
}

}  // namespace occ
