#include "analysis.h"
#include "measured_evidence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "advice.h"
#include "arch_table.h"
#include "diff.h"
#include "limiter_words.h"
#include "message_text.h"
#include "occupancy_curves.h"
#include "sqlite_db.h"

namespace occ {
namespace {

constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxSmemBytes = 1 << 20;     // no GPU has a megabyte of shared memory per block
constexpr double kLowTheoreticalPct = 80;      // ncu TheoreticalOccupancy rule
constexpr double kAchievedGapPoints = 10;      // ncu AchievedOccupancy rule
constexpr double kTailReportPct = 20;          // ncu tail-effect rule shows X >= 20 %

// Why a recorded configuration cannot be a real launch, or "" if it can.
std::string AbsurdValue(const ConfigStats& c) {
  if (c.grid[0] < 1 || c.grid[0] > kMaxGridX || c.grid[1] < 1 || c.grid[1] > kMaxGridYZ ||
      c.grid[2] < 1 || c.grid[2] > kMaxGridYZ) {
    return "invalid grid " + DimsText(c.grid);
  }
  if (c.block[0] < 1 || c.block[0] > 1024 || c.block[1] < 1 || c.block[1] > 1024 ||
      c.block[2] < 1 || c.block[2] > 64 || c.block[0] * c.block[1] * c.block[2] > 1024) {
    return "invalid block " + DimsText(c.block);
  }
  if (c.registers_per_thread < 0 || c.registers_per_thread > 255) {
    return "invalid register count " + std::to_string(c.registers_per_thread) + " per thread";
  }
  if (c.static_smem < 0 || c.static_smem > kMaxSmemBytes || c.dynamic_smem < 0 ||
      c.dynamic_smem > kMaxSmemBytes) {
    return "invalid shared memory " + std::to_string(c.static_smem) + " B static + " +
           std::to_string(c.dynamic_smem) + " B dynamic";
  }
  if (c.local_mem_per_thread < 0 || c.local_mem_per_thread > (int64_t{1} << 30)) {
    return "invalid local memory " + std::to_string(c.local_mem_per_thread) + " B per thread";
  }
  if (c.smem_executed < 0 || c.smem_executed > 2 * kMaxSmemBytes) {
    return "invalid executed shared memory configuration " + std::to_string(c.smem_executed);
  }
  for (int64_t d : c.cluster) {
    if (d < 0 || d > 1024) return "invalid cluster " + DimsText(c.cluster);
  }
  return "";
}

int64_t GridBlocks(const ConfigStats& c) { return c.grid[0] * c.grid[1] * c.grid[2]; }
int64_t BlockThreads(const ConfigStats& c) { return c.block[0] * c.block[1] * c.block[2]; }

// A group of launches with one kernel and configuration, possibly over several files/devices.
struct Group {
  ConfigStats stats;
  const TraceDevice* device = nullptr;   // the first device it ran on
  std::set<int> files;
  std::set<int64_t> device_ids;
};

std::string DeviceKey(const TraceDevice* d) {
  if (d == nullptr || !d->known) {
    return d == nullptr ? "none" : "unknown:" + std::to_string(d->file_index) + ":" +
                                       std::to_string(d->device_id);
  }
  const DeviceProps& p = d->props;
  std::ostringstream key;
  key << p.name << '|' << p.cc_major << '.' << p.cc_minor << '|' << p.num_sms << '|'
      << p.max_threads_per_sm << '|' << p.regs_per_sm << '|' << p.smem_per_sm << '|'
      << p.smem_per_block_optin << '|' << p.reserved_smem_per_block;
  return key.str();
}

std::string ConfigKey(const ConfigStats& c, bool with_executed_carveout = true) {
  std::ostringstream key;
  key << DimsText(c.grid) << '|' << DimsText(c.block) << '|' << c.registers_per_thread << '|'
      << c.registers_known << '|' << c.static_smem << '|' << c.dynamic_smem << '|'
      << (with_executed_carveout ? c.smem_executed : -1) << '|' << c.smem_limit_config << '|'
      << c.carveout_pct << '|'
      << c.cache_config << '|' << DimsText(c.cluster) << '|' << c.local_mem_per_thread << '|'
      << c.name;
  return key.str();
}

void Merge(ConfigStats* into, const ConfigStats& from) {
  if (from.launches > 0) {
    if (into->launches == 0) {
      into->min_ns = from.min_ns;
      into->max_ns = from.max_ns;
    } else {
      into->min_ns = std::min(into->min_ns, from.min_ns);
      into->max_ns = std::max(into->max_ns, from.max_ns);
    }
  }
  into->launches += from.launches;
  into->untimed_launches += from.untimed_launches;
  into->total_ns = SaturatingAdd(into->total_ns, from.total_ns);
  if (from.achieved_samples > 0) {
    if (into->achieved_samples == 0) {
      into->achieved_min = from.achieved_min;
      into->achieved_max = from.achieved_max;
    } else {
      into->achieved_min = std::min(into->achieved_min, from.achieved_min);
      into->achieved_max = std::max(into->achieved_max, from.achieved_max);
    }
  }
  into->achieved_samples += from.achieved_samples;
  into->achieved_sum += from.achieved_sum;
  into->achieved_not_measured += from.achieved_not_measured;
  for (const auto& [reason, n] : from.not_measured_reasons) into->not_measured_reasons[reason] += n;
  if (into->graph_id == 0) into->graph_id = from.graph_id;
}

void FillIdentity(const Group& g, occtrace::KernelGroup* out) {
  const ConfigStats& c = g.stats;
  out->set_file_index(g.files.size() == 1 ? *g.files.begin() : -1);
  out->set_device_id(g.device_ids.size() == 1 ? static_cast<int32_t>(*g.device_ids.begin()) : -1);
  out->set_name(c.name);
  out->set_short_name(c.short_name);
  out->set_mangled_name(c.mangled_name);
  auto i32 = [](int64_t v) {
    return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
  };
  out->set_grid_x(i32(c.grid[0]));
  out->set_grid_y(i32(c.grid[1]));
  out->set_grid_z(i32(c.grid[2]));
  out->set_block_x(i32(c.block[0]));
  out->set_block_y(i32(c.block[1]));
  out->set_block_z(i32(c.block[2]));
  out->set_registers_per_thread(i32(c.registers_per_thread));
  out->set_static_shared_mem(i32(c.static_smem));
  out->set_dynamic_shared_mem(i32(c.dynamic_smem));
  out->set_local_mem_per_thread(i32(c.local_mem_per_thread));
  out->set_shared_mem_executed(i32(c.smem_executed));
  out->set_cluster_x(i32(c.cluster[0]));
  out->set_cluster_y(i32(c.cluster[1]));
  out->set_cluster_z(i32(c.cluster[2]));
  out->set_launches(c.launches);
  out->set_total_ns(c.total_ns);
  const int64_t timed_launches = c.launches - c.untimed_launches;
  out->set_mean_ns(timed_launches > 0
                       ? static_cast<double>(c.total_ns) / static_cast<double>(timed_launches)
                       : 0);
  out->set_min_ns(c.min_ns);
  out->set_max_ns(c.max_ns);
  out->set_graph_id(c.graph_id);
  // Triton's cache can hold one kernel name compiled several ways (Inductor's autotuner tries
  // num_warps 2, 4, 8 ... under the same name), and the trace keeps one of them: quote it only
  // when it is the compilation this configuration ran (num_warps x 32 threads per block).
  const int64_t block_threads = std::max<int64_t>(1, c.block[0]) * std::max<int64_t>(1, c.block[1]) *
                                std::max<int64_t>(1, c.block[2]);
  if (c.triton_num_warps > 0 && c.triton_num_warps * 32 == block_threads) {
    out->set_triton_num_warps(static_cast<int32_t>(c.triton_num_warps));
    if (c.triton_num_stages >= 0) out->set_triton_num_stages(static_cast<int32_t>(c.triton_num_stages));
  }
}

void FillOccupancy(const OccupancyResult& r, const std::string& sentence,
                   occtrace::Occupancy* out) {
  out->set_theoretical_occupancy_pct(r.theoretical_occupancy_pct);
  out->set_active_blocks_per_sm(r.active_blocks_per_sm);
  out->set_active_warps_per_sm(r.active_warps_per_sm);
  out->set_max_warps_per_sm(r.max_warps_per_sm);
  out->set_block_limit_warps(r.block_limit_warps);
  out->set_block_limit_registers(r.block_limit_registers);
  out->set_block_limit_shared_mem(r.block_limit_shared_mem);
  out->set_block_limit_blocks(r.block_limit_blocks);
  out->set_block_limit_barriers(r.block_limit_barriers);
  out->set_ncu_block_limit_shared_mem(r.ncu_block_limit_shared_mem);
  out->set_ncu_block_limit_barriers(r.ncu_block_limit_barriers);
  out->set_allocated_registers_per_block(r.allocated_registers_per_block);
  out->set_allocated_shared_mem_per_block(r.allocated_shared_mem_per_block);
  out->set_allocated_registers_per_thread(r.allocated_registers_per_thread);
  for (auto& name : LimitingFactorNames(RealLimiters(r))) out->add_limiting_factors(name);
  out->set_limiter_sentence(sentence);
}

// Is the suggestion a change at all? The advice promises never to echo the current
// configuration; this re-checks it against what the trace recorded.
// Occupancy the grid can reach on the whole GPU: warps resident in its first wave over all SMs'
// warp slots. It equals the theoretical occupancy when the grid fills at least one wave; below
// that, capacity for more blocks per SM stays unused.
double ReachableOccupancyPct(int64_t grid_blocks, int blocks_per_sm, int64_t warps_per_block,
                             int num_sms, int max_warps_per_sm) {
  if (grid_blocks <= 0 || blocks_per_sm <= 0 || num_sms <= 0 || max_warps_per_sm <= 0) return 0;
  const int64_t resident = std::min<int64_t>(grid_blocks, int64_t{blocks_per_sm} * num_sms);
  return 100.0 * static_cast<double>(resident * warps_per_block) /
         (static_cast<double>(num_sms) * max_warps_per_sm);
}

bool ChangesSomething(const Suggestion& s, const ConfigStats& c, const OccupancyResult& current) {
  if (s.kind == "block_size" || s.kind == "grid_size") {
    return s.block_size > 0 && s.block_size != BlockThreads(c);
  }
  if (s.kind == "register_cap") {
    return s.registers_per_thread > 0 && s.registers_per_thread < c.registers_per_thread &&
           s.predicted_occupancy_pct > current.theoretical_occupancy_pct;
  }
  if (s.kind == "shared_memory") {
    return s.shared_mem_per_block >= 0 && s.shared_mem_per_block < c.static_smem + c.dynamic_smem &&
           s.predicted_occupancy_pct > current.theoretical_occupancy_pct;
  }
  return s.predicted_occupancy_pct > current.theoretical_occupancy_pct;
}

struct Judged {
  occtrace::KernelGroup group;
  bool ok = false;
};

// ncu's achieved-occupancy rule, with the reasons a trace can show.
void ExplainGap(const ConfigStats& c, const OccupancyResult& r, const Waves& w, int num_sms,
                occtrace::Achieved* achieved) {
  double theo = r.theoretical_occupancy_pct;
  double gap = achieved->gap_points();
  if (gap <= kAchievedGapPoints || r.active_blocks_per_sm <= 0 || r.max_warps_per_sm <= 0) return;
  const double per_block_pct = 100.0 * r.warps_per_block / r.max_warps_per_sm;
  const int64_t grid = GridBlocks(c);
  bool explained = false;
  // Achieved occupancy averages over active SM cycles only: an SM holding fewer blocks than
  // the limit lowers it, an idle SM does not.
  if (w.full_waves == 0) {
    int64_t busy_sms = std::min<int64_t>(grid, num_sms);
    int64_t blocks_per_busy_sm = (grid + busy_sms - 1) / std::max<int64_t>(busy_sms, 1);
    double estimate = std::min<double>(theo, per_block_pct * static_cast<double>(
                                                                 std::min<int64_t>(blocks_per_busy_sm, r.active_blocks_per_sm)));
    achieved->add_gap_explanations(
        "small grid: " + std::to_string(grid) + " blocks are less than one wave of " +
        std::to_string(w.blocks_per_wave) + " (" + std::to_string(r.active_blocks_per_sm) +
        " blocks/SM x " + std::to_string(num_sms) + " SMs), so busy SMs hold at most " +
        std::to_string(std::min<int64_t>(blocks_per_busy_sm, r.active_blocks_per_sm)) +
        " of " + std::to_string(r.active_blocks_per_sm) + " possible blocks: wave-capped "
        "estimate " + Fixed(estimate) + "%");
    explained = estimate <= achieved->mean_pct() + kAchievedGapPoints;
  } else if (w.tail_blocks > 0) {
    int64_t tail_sms = std::min<int64_t>(w.tail_blocks, num_sms);
    double tail_blocks_per_sm = static_cast<double>(w.tail_blocks) / static_cast<double>(tail_sms);
    double tail_occ = std::min(theo, per_block_pct * tail_blocks_per_sm);
    double estimate = (static_cast<double>(w.full_waves) * theo + tail_occ) /
                      static_cast<double>(w.full_waves + 1);
    if (w.tail_pct >= kTailReportPct || estimate < theo - 1) {
      achieved->add_gap_explanations(
          "tail effect: " + std::to_string(w.full_waves) + (w.full_waves == 1 ? " full wave" : " full waves") +
          " and a partial wave of " +
          std::to_string(w.tail_blocks) + " blocks; during the tail SMs hold fewer blocks "
          "(wave-capped estimate " + Fixed(estimate) + "%)" +
          // Which SMs receive the tail blocks changes from launch to launch, and with it the
          // achieved occupancy of grids whose tail is a large share (>= 20 %) of the run
          // (1122 x 256 on an H200: 85-97 %, in ncu and occtrace alike; docs/accuracy.md).
          (achieved->samples() < 3 && w.tail_pct >= kTailReportPct ? "; the tail's placement on the SMs, and so this value, varies from "
                                     "launch to launch: sample more launches (OCCTRACE_SAMPLES) for a steady mean"
                                   : ""));
      explained = estimate <= achieved->mean_pct() + kAchievedGapPoints;
    }
  }
  if (!explained) {
    achieved->add_gap_explanations(
        "warp scheduling overhead or workload imbalance within or across blocks (blocks finishing "
        "at different times leave SMs partly empty): the grid shape alone does not explain the gap");
  }
}

struct Context {
  const ReportOptions* options = nullptr;
  std::optional<DeviceProps> what_if;       // --gpu
  std::vector<occtrace::InputFile>* files = nullptr;
};

void FileWarning(Context* ctx, int file_index, const std::string& warning) {
  if (file_index >= 0 && static_cast<size_t>(file_index) < ctx->files->size()) {
    (*ctx->files)[static_cast<size_t>(file_index)].add_warnings(warning);
  }
}

Judged JudgeGroup(Context* ctx, const Group& g, int64_t run_total_ns) {
  Judged j;
  occtrace::KernelGroup& out = j.group;
  const ConfigStats& c = g.stats;
  FillIdentity(g, &out);
  out.set_time_pct(run_total_ns > 0 ? 100.0 * static_cast<double>(c.total_ns) /
                                          static_cast<double>(run_total_ns)
                                    : 0);
  auto unjudged = [&](const std::string& reason) {
    out.set_judged(false);
    out.set_not_judged_reason(reason);
    return j;
  };
  std::string absurd = AbsurdValue(c);
  if (!absurd.empty()) {
    FileWarning(ctx, *g.files.begin(), "kernel '" + Abbrev(c.name) + "': " + absurd +
                                           " in the trace: not judged");
    return unjudged("the trace records an " + absurd);
  }
  if (!c.registers_known) return unjudged("no register count recorded for this kernel");
  const DeviceProps* device = nullptr;
  if (ctx->what_if) {
    device = &*ctx->what_if;
  } else if (g.device == nullptr) {
    return unjudged("device " + std::to_string(c.device_id) + " has no device row in the trace "
                    "(unknown GPU; --gpu NAME evaluates it on a named GPU)");
  } else if (!g.device->known) {
    return unjudged("unknown GPU: " + g.device->unknown_reason +
                    " (--gpu NAME evaluates it on a named GPU)");
  } else {
    device = &g.device->props;
  }
  auto params = LaunchParamsFor(c, *device, /*on_traced_gpu=*/!ctx->what_if);
  if (!params.ok()) return unjudged(params.status().message());
  LaunchParams launch = *params;
  AdviceInputs inputs;
  inputs.grid_blocks = GridBlocks(c);
  inputs.local_memory_per_thread = static_cast<int>(c.local_mem_per_thread);
  inputs.barrier_count_known = c.barrier_count >= 0;
  auto advice_or = AdviseLaunch(*device, launch, inputs);
  if (!advice_or.ok()) return unjudged(advice_or.status().message());
  const LaunchAdvice& advice = *advice_or;
  const OccupancyResult& r = advice.occupancy;
  out.set_judged(true);
  FillOccupancy(r, advice.limiter_sentence, out.mutable_occupancy());
  out.set_limiting_factor(advice.primary_limiter);

  Waves w = advice.waves ? *advice.waves
                         : ComputeWaves(GridBlocks(c), r.active_blocks_per_sm, device->num_sms);
  out.set_waves_per_sm(w.waves_per_sm);
  out.set_full_waves(w.full_waves);
  out.set_tail_blocks(w.tail_blocks);
  out.set_tail_pct(w.tail_pct);

  // Issues: Nsight Compute's rules (occupancy-model.md §5.4), same thresholds.
  const int64_t grid = GridBlocks(c);
  const int64_t threads = BlockThreads(c);
  if (r.active_blocks_per_sm == 0) {
    out.add_issues("cannot run on " + device->name + ": " + advice.limiter_sentence);
  }
  if (threads % 32 != 0) {
    int64_t warps = (threads + 31) / 32;
    int64_t idle = warps * 32 - threads;
    out.add_issues("block of " + std::to_string(threads) + " threads is not a multiple of 32: " +
                   std::to_string(idle) + " of " + std::to_string(warps * 32) +
                   " lanes in its warps are masked off (est. speedup up to " +
                   Fixed(100.0 * static_cast<double>(idle) / static_cast<double>(warps * 32)) +
                   "%)");
  }
  if (grid < device->num_sms) {
    out.add_issues("grid of " + std::to_string(grid) + " blocks is smaller than the GPU's " +
                   std::to_string(device->num_sms) + " SMs: " +
                   std::to_string(device->num_sms - grid) + " SMs stay idle (est. speedup up to " +
                   Fixed(100.0 * static_cast<double>(device->num_sms - grid) / device->num_sms) +
                   "%)");
  } else if (w.full_waves >= 1 && w.tail_blocks > 0 && w.tail_pct >= kTailReportPct) {
    std::string tail = TailSentence(w);
    if (!tail.empty()) out.add_issues(tail);
  }
  if (r.active_blocks_per_sm > 0 && r.theoretical_occupancy_pct < kLowTheoreticalPct) {
    out.add_issues("theoretical occupancy " + Fixed(r.theoretical_occupancy_pct) +
                   "% is below 80%: " + advice.limiter_sentence);
  }
  if (c.local_mem_per_thread > 0) {
    out.add_issues("uses " + std::to_string(c.local_mem_per_thread) +
                   " B of local memory per thread (register spills or stack)");
  }
  for (const auto& note : advice.notes) {
    // Barrier, wave and grid notes are covered above or once per report.
    if (note.find("barrier") != std::string::npos || note.find("wave") != std::string::npos ||
        note.find("grid") != std::string::npos || note.find("local memory") != std::string::npos ||
        note.find("idle lanes") != std::string::npos) {
      continue;
    }
    bool dup = false;
    for (const auto& issue : out.issues()) dup |= issue == note;
    if (!dup) out.add_issues(note);
  }

  // Achieved occupancy.
  if (c.achieved_samples > 0 || c.achieved_not_measured > 0) {
    occtrace::Achieved* a = out.mutable_achieved();
    a->set_samples(static_cast<int32_t>(std::min<int64_t>(c.achieved_samples, INT32_MAX)));
    a->set_not_measured(static_cast<int32_t>(std::min<int64_t>(c.achieved_not_measured, INT32_MAX)));
    std::string reasons;
    for (const auto& [reason, n] : c.not_measured_reasons) {
      reasons += (reasons.empty() ? "" : ", ") + reason + " (" + std::to_string(n) + ")";
    }
    a->set_not_measured_reason(reasons);
    if (c.achieved_samples > 0) {
      a->set_mean_pct(c.achieved_sum / static_cast<double>(c.achieved_samples));
      a->set_min_pct(c.achieved_min);
      a->set_max_pct(c.achieved_max);
      // Only meaningful on the GPU the trace ran on.
      if (!ctx->what_if) {
        a->set_gap_points(r.theoretical_occupancy_pct - a->mean_pct());
        ExplainGap(c, r, w, device->num_sms, a);
      }
    }
  }

  // Suggestions, best first; each must change something and reach more occupancy than now.
  // Headroom is measured in occupancy the grid can reach (ReachableOccupancyPct): for a grid
  // below one wave, room for more blocks per SM gains nothing.
  const int64_t work = grid * BlockThreads(c);
  const double reachable_now =
      ReachableOccupancyPct(grid, r.active_blocks_per_sm, r.warps_per_block, device->num_sms,
                            r.max_warps_per_sm);
  double best = reachable_now;
  for (const auto& s : advice.suggestions) {
    if (!ChangesSomething(s, c, r)) continue;
    double reachable = reachable_now;
    bool keep = true;
    if (s.kind == "block_size" && s.block_size > 0) {
      int64_t warps = (s.block_size + device->warp_size - 1) / device->warp_size;
      reachable = ReachableOccupancyPct((work + s.block_size - 1) / s.block_size,
                                        s.predicted_blocks_per_sm, warps, device->num_sms,
                                        r.max_warps_per_sm);
      // A new block size may trade occupancy for SM balance, never lose occupancy for nothing.
      keep = s.predicted_occupancy_pct >= r.theoretical_occupancy_pct || reachable > reachable_now;
    } else if (s.kind != "grid_size") {
      reachable = ReachableOccupancyPct(grid, s.predicted_blocks_per_sm, r.warps_per_block,
                                        device->num_sms, r.max_warps_per_sm);
      keep = reachable > reachable_now + 1e-9;
    }
    if (!keep) continue;
    ToProto(s, out.add_suggestions());
    best = std::max(best, reachable);
  }
  double headroom = std::max(0.0, best - reachable_now);
  out.set_headroom_pct(headroom);
  out.set_priority(out.time_pct() * headroom / 100.0);
  if (headroom > 0 && reachable_now > 0) {
    // Upper bound: runtime inversely proportional to occupancy (latency-bound kernels at best).
    double fraction = 1.0 - reachable_now / best;
    out.set_recoverable_ns_upper_bound(
        static_cast<int64_t>(static_cast<double>(c.total_ns) * fraction));
  }
  j.ok = true;
  return j;
}

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

struct Analysis {
  std::vector<occtrace::InputFile> files;
  std::vector<occtrace::Device> devices;
  std::vector<occtrace::KernelGroup> judged;    // matched by the filters, unsorted
  std::vector<occtrace::KernelGroup> unjudged;
  std::vector<std::pair<const TraceDevice*, ConfigStats>> group_inputs;  // parallel to judged
  int64_t run_total_ns = 0;
  int64_t run_launches = 0;
  int64_t first_start = 0;
  int64_t last_end = 0;
  std::vector<std::unique_ptr<TraceReader>> readers;
};

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

// The executed carveout CUPTI reports for a launch the range profiler replayed is not the one the
// program's launches get: 0 (with no timestamps), or another size. On the H100 (2026-11-22,
// examples/train_small_h100.sql) 32 of 80 measured first launches reported 32 or 100 KiB where
// their 29-59 siblings reported 8-228 KiB, among them a kernel with 120 KiB of dynamic shared
// memory, which cannot run in 32 KiB; the same program traced without the profiler had no such
// splits. Grouped by that value, each measured launch would form a group of its own and leave its
// siblings "not measured". So a group with an unreported carveout, or whose every launch was
// profiled, is folded into the group that has the same configuration apart from the carveout
// and launches the profiler did not touch (else, for an unreported carveout, any reported one),
// the one with most launches. Replayed records can lack the requested carveout percentage too
// (NULL, read as -1), so such a group matches its siblings whatever they requested. In `all`
// mode every launch is profiled: groups then fold only by the unreported-carveout rule.
void FoldProfiledLaunches(std::map<std::string, Group>* groups, std::vector<std::string>* order) {
  auto profiled = [](const ConfigStats& c) { return c.achieved_samples + c.achieved_not_measured; };
  auto only_profiled = [&](const ConfigStats& c) { return c.launches > 0 && profiled(c) >= c.launches; };
  auto loose_key = [](const std::string& key, ConfigStats stats, bool any_requested_carveout) {
    if (any_requested_carveout) stats.carveout_pct = -1;
    return key.substr(0, key.find('#')) + "#" + ConfigKey(stats, false);
  };
  // Preferred target: launches the profiler did not touch, then the most launches.
  auto better = [&](const ConfigStats& a, const ConfigStats& b) {
    return std::make_pair(!only_profiled(a), a.launches) > std::make_pair(!only_profiled(b), b.launches);
  };
  // key without the executed carveout (and, in the second map, without the requested one) ->
  // the best group that reported its carveout
  std::map<std::string, std::string> reported, reported_any_request;
  for (const auto& key : *order) {
    const Group& g = groups->at(key);
    if (g.stats.smem_executed == 0) continue;
    for (bool any_request : {false, true}) {
      auto& index = any_request ? reported_any_request : reported;
      std::string loose = loose_key(key, g.stats, any_request);
      auto it = index.find(loose);
      if (it == index.end() || better(g.stats, groups->at(it->second).stats)) index[loose] = key;
    }
  }
  std::vector<std::string> kept;
  for (const auto& key : *order) {
    Group& g = groups->at(key);
    const bool unreported = g.stats.smem_executed == 0;
    if (unreported || only_profiled(g.stats)) {
      const bool request_unreported = g.stats.carveout_pct < 0;
      const auto& index = request_unreported ? reported_any_request : reported;
      auto it = index.find(loose_key(key, g.stats, request_unreported));
      // count(): an entry of one map may name a group already folded through the other (a
      // profiled-only group with a requested carveout); the group then simply stays apart.
      if (it != index.end() && it->second != key && groups->count(it->second) > 0 &&
          (unreported || !only_profiled(groups->at(it->second).stats))) {
        Group& into = groups->at(it->second);
        into.files.insert(g.files.begin(), g.files.end());
        into.device_ids.insert(g.device_ids.begin(), g.device_ids.end());
        Merge(&into.stats, g.stats);
        groups->erase(key);
        continue;
      }
    }
    kept.push_back(key);
  }
  *order = std::move(kept);
}

StatusOr<Analysis> Analyze(const ReportOptions& options, const std::vector<std::string>& inputs,
                           std::optional<DeviceProps> what_if) {
  Analysis a;
  for (size_t i = 0; i < inputs.size(); ++i) {
    OCC_ASSIGN_OR_RETURN(auto reader, TraceReader::Open(inputs[i], static_cast<int>(i)));
    a.readers.push_back(std::move(reader));
  }
  std::map<std::string, Group> groups;
  std::vector<std::string> order;  // deterministic: first appearance
  bool any_launch = false;
  int64_t first = 0, last = 0;
  for (auto& reader : a.readers) {
    OCC_ASSIGN_OR_RETURN(TraceScan scan, reader->Scan(options.kernel_regex));
    any_launch |= scan.launches > 0;
    a.run_total_ns = SaturatingAdd(a.run_total_ns, scan.total_ns);
    a.run_launches += scan.launches;
    if (scan.first_start > 0) {
      first = first == 0 ? scan.first_start : std::min(first, scan.first_start);
      last = std::max(last, scan.last_end);
    }
    for (auto& c : scan.configs) {
      if (!c.matched) continue;
      const TraceDevice* device = FindDevice(reader->devices(), c.device_id);
      std::string key = (what_if ? std::string("what-if") : DeviceKey(device)) + "#" + ConfigKey(c);
      auto it = groups.find(key);
      if (it == groups.end()) {
        Group g;
        g.device = device;
        g.files.insert(c.file_index);
        g.device_ids.insert(c.device_id);
        g.stats = std::move(c);
        order.push_back(key);
        groups.emplace(key, std::move(g));
      } else {
        it->second.files.insert(c.file_index);
        it->second.device_ids.insert(c.device_id);
        Merge(&it->second.stats, c);
      }
    }
  }
  FoldProfiledLaunches(&groups, &order);
  if (!any_launch) {
    std::string names;
    for (const auto& r : a.readers) names += (names.empty() ? "" : ", ") + r->info().path();
    return BadInput(names + ": no kernel launches in the trace");
  }
  a.first_start = first;
  a.last_end = last;
  for (const auto& reader : a.readers) {
    a.files.push_back(reader->info());
    for (const auto& d : reader->devices()) FillDevice(d, &a.devices.emplace_back());
  }
  Context ctx;
  ctx.options = &options;
  ctx.what_if = what_if;
  ctx.files = &a.files;
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    Judged j = JudgeGroup(&ctx, g, a.run_total_ns);
    if (j.ok) {
      a.judged.push_back(std::move(j.group));
      a.group_inputs.emplace_back(g.device, g.stats);
    } else {
      a.unjudged.push_back(std::move(j.group));
    }
  }
  // Who owns each kernel, and what the trace's own measurements say can be gained.
  ApplyOwnerAndEvidence(&a.judged, a.run_total_ns);
  ApplyOwnerAndEvidence(&a.unjudged, a.run_total_ns);
  return a;
}

}  // namespace

StatusOr<LaunchParams> LaunchParamsFor(const ConfigStats& c, const DeviceProps& device,
                                       bool on_traced_gpu) {
  std::string absurd = AbsurdValue(c);
  if (!absurd.empty()) return InvalidArgument(absurd);
  LaunchParams p;
  p.block_threads = static_cast<int>(BlockThreads(c));
  if (p.block_threads > device.max_threads_per_block) {
    return InvalidArgument("block of " + std::to_string(p.block_threads) + " threads exceeds " +
                           device.name + "'s limit of " +
                           std::to_string(device.max_threads_per_block));
  }
  p.regs_per_thread = static_cast<int>(c.registers_per_thread);
  p.static_smem = static_cast<int>(c.static_smem);
  p.dynamic_smem = static_cast<int>(c.dynamic_smem);
  // A launch that ran with more than the default per-block limit must have opted in, whatever
  // the recorded limit config says (older records lack it).
  bool opt_in = c.smem_limit_config == 1 || c.static_smem + c.dynamic_smem > device.smem_per_block;
  p.shmem_limit_config = opt_in ? ShmemLimitConfig::kOptIn : ShmemLimitConfig::kDefault;
  // The launch succeeded, so its dynamic size was allowed: the attribute is at least that, and
  // for opt-in launches whatever the device allows (occupancy-model.md §9).
  p.max_dynamic_smem = opt_in ? std::max<int>(p.dynamic_smem,
                                              device.smem_per_block_optin - p.static_smem)
                              : p.dynamic_smem;
  p.carveout_pct = (c.carveout_pct >= 0 && c.carveout_pct <= 100) ? static_cast<int>(c.carveout_pct)
                                                                  : -1;
  int64_t cache = c.cache_config & 0xF;
  p.cache_config = cache <= 3 ? static_cast<CacheConfig>(cache) : CacheConfig::kPreferNone;
  // Not in CUPTI records: from the cubin (OCC_FUNCTION) when recorded, else 1 (noted in the report).
  p.num_block_barriers = c.barrier_count >= 0 ? static_cast<int>(c.barrier_count) : 1;
  if (c.func_max_threads > 0) p.func_max_threads_per_block = static_cast<int>(c.func_max_threads);
  p.executed_smem_config = on_traced_gpu ? static_cast<int>(c.smem_executed) : 0;
  int64_t cluster = std::max<int64_t>(1, c.cluster[0]) * std::max<int64_t>(1, c.cluster[1]) *
                    std::max<int64_t>(1, c.cluster[2]);
  p.cluster_size = static_cast<int>(std::min<int64_t>(cluster, 1024));
  return p;
}

std::string ConfigLabel(const occtrace::KernelGroup& g) {
  return "grid " + std::to_string(g.grid_x()) + "x" + std::to_string(g.grid_y()) + "x" +
         std::to_string(g.grid_z()) + ", block " + std::to_string(g.block_x()) + "x" +
         std::to_string(g.block_y()) + "x" + std::to_string(g.block_z()) + ", " +
         std::to_string(g.registers_per_thread()) + " regs, smem " +
         std::to_string(g.static_shared_mem()) + "+" + std::to_string(g.dynamic_shared_mem()) +
         " B";
}

Status ValidateReportOptions(const ReportOptions& options) {
  if (options.inputs.empty()) return InvalidArgument("no input file given");
  static const std::set<std::string> kSorts = {"priority", "time", "headroom", "launches", "name"};
  if (!kSorts.count(options.sort)) {
    return InvalidArgument("--sort '" + options.sort +
                           "': expected priority, time, headroom, launches or name");
  }
  if (options.top < 0) return InvalidArgument("--top must be >= 0 (0 = all)");
  if (!(options.min_time_pct >= 0 && options.min_time_pct <= 100)) {
    return InvalidArgument("--min-time-pct must be between 0 and 100");
  }
  if (!options.kernel_regex.empty()) OCC_RETURN_IF_ERROR(sql::ValidateRegex(options.kernel_regex));
  if (!options.gpu.empty()) {
    auto gpu = LookupGpu(options.gpu);
    if (!gpu.ok()) return InvalidArgument("--gpu: " + gpu.status().message());
  }
  return OkStatus();
}

StatusOr<occtrace::Report> BuildReport(const ReportOptions& options) {
  OCC_RETURN_IF_ERROR(ValidateReportOptions(options));
  std::optional<DeviceProps> what_if;
  if (!options.gpu.empty()) {
    OCC_ASSIGN_OR_RETURN(DeviceProps gpu, LookupGpu(options.gpu));
    what_if = gpu;
  }
  OCC_ASSIGN_OR_RETURN(Analysis a, Analyze(options, options.inputs, what_if));

  occtrace::Report report;
  report.set_tool_version(OCC_VERSION);
  report.set_generated_for(options.command_line);
  for (auto& f : a.files) *report.add_files() = f;
  for (auto& d : a.devices) *report.add_devices() = d;
  report.set_sort(options.sort);
  report.set_top(options.top);

  if (what_if) {
    report.set_what_if_gpu(what_if->name + " (" + CcLabel(what_if->cc_major, what_if->cc_minor) +
                           ", " + std::to_string(what_if->num_sms) + " SMs)");
    TraceDevice d;
    d.file_index = -1;
    d.device_id = -1;
    d.known = true;
    d.props = *what_if;
    d.source = occtrace::SOURCE_ARCH_TABLE;
    auto arch = FindArchConstants(what_if->cc_major, what_if->cc_minor);
    if (arch.ok()) d.max_blocks_per_sm = (*arch)->max_blocks_per_sm;
    FillDevice(d, report.add_devices());
    report.add_notes("re-evaluated on " + report.what_if_gpu() +
                     " from the architecture table: registers and shared memory per kernel are "
                     "assumed unchanged (a build for another architecture may differ); the "
                     "recorded carveout and achieved occupancy do not apply there");
  }

  // Summary over every matched group (before --top / --min-time-pct).
  occtrace::Summary* summary = report.mutable_summary();
  summary->set_total_gpu_ns(a.run_total_ns);
  summary->set_launches(a.run_launches);
  summary->set_span_ns(a.last_end > a.first_start ? a.last_end - a.first_start : 0);
  std::set<std::string> names;
  int64_t below_half_ns = 0, recoverable = 0, judged_ns = 0, achieved_ns = 0;
  double weighted_theo = 0, weighted_ach = 0;
  std::map<std::string, int64_t> by_limiter;
  int64_t matched_launches = 0;
  for (const auto& g : a.judged) {
    names.insert(g.name());
    matched_launches += g.launches();
    double theo = g.occupancy().theoretical_occupancy_pct();
    if (theo < 50) below_half_ns = SaturatingAdd(below_half_ns, g.total_ns());
    recoverable = SaturatingAdd(recoverable, g.recoverable_ns_upper_bound());
    judged_ns = SaturatingAdd(judged_ns, g.total_ns());
    weighted_theo += theo * static_cast<double>(g.total_ns());
    if (g.achieved().samples() > 0) {
      achieved_ns = SaturatingAdd(achieved_ns, g.total_ns());
      weighted_ach += g.achieved().mean_pct() * static_cast<double>(g.total_ns());
    }
    by_limiter[g.limiting_factor()] = SaturatingAdd(by_limiter[g.limiting_factor()], g.total_ns());
  }
  int64_t unjudged_ns = 0;
  for (const auto& g : a.unjudged) {
    names.insert(g.name());
    matched_launches += g.launches();
    unjudged_ns = SaturatingAdd(unjudged_ns, g.total_ns());
  }
  if (matched_launches == 0) {
    return NotFound("no kernel launch matches --kernel '" + options.kernel_regex + "'");
  }
  summary->set_kernels(static_cast<int32_t>(names.size()));
  summary->set_groups(static_cast<int32_t>(a.judged.size() + a.unjudged.size()));
  auto pct = [&](int64_t ns) {
    return a.run_total_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(a.run_total_ns)
                              : 0;
  };
  summary->set_time_below_50pct_theoretical_pct(pct(below_half_ns));
  summary->set_recoverable_ns_upper_bound(recoverable);
  summary->set_weighted_theoretical_occupancy_pct(
      judged_ns > 0 ? weighted_theo / static_cast<double>(judged_ns) : 0);
  summary->set_weighted_achieved_occupancy_pct(
      achieved_ns > 0 ? weighted_ach / static_cast<double>(achieved_ns) : 0);
  summary->set_unjudged_groups(static_cast<int32_t>(a.unjudged.size()));

  if (unjudged_ns > 0 || !a.unjudged.empty()) by_limiter["unjudged"] += unjudged_ns;
  std::vector<std::pair<std::string, int64_t>> limiters(by_limiter.begin(), by_limiter.end());
  std::stable_sort(limiters.begin(), limiters.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  for (const auto& [limiter, ns] : limiters) {
    occtrace::LimiterShare* share = report.add_time_by_limiter();
    share->set_limiter(limiter);
    share->set_total_ns(ns);
    share->set_time_pct(pct(ns));
  }

  // Rank.
  std::vector<size_t> idx(a.judged.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto by = [&](size_t x, size_t y) {
    const auto& gx = a.judged[x];
    const auto& gy = a.judged[y];
    if (options.sort == "time" && gx.total_ns() != gy.total_ns()) return gx.total_ns() > gy.total_ns();
    if (options.sort == "headroom" && gx.headroom_pct() != gy.headroom_pct()) {
      return gx.headroom_pct() > gy.headroom_pct();
    }
    if (options.sort == "launches" && gx.launches() != gy.launches()) return gx.launches() > gy.launches();
    if (options.sort == "name" && gx.name() != gy.name()) return gx.name() < gy.name();
    if (options.sort == "priority" && gx.priority() != gy.priority()) return gx.priority() > gy.priority();
    if (gx.total_ns() != gy.total_ns()) return gx.total_ns() > gy.total_ns();
    return gx.name() < gy.name();
  };
  std::stable_sort(idx.begin(), idx.end(), by);
  int hidden_small = 0;
  int shown = 0;
  for (size_t i : idx) {
    const auto& g = a.judged[i];
    if (g.time_pct() < options.min_time_pct) {
      ++hidden_small;
      continue;
    }
    if (options.top > 0 && shown >= options.top) break;
    occtrace::KernelGroup* out = report.add_groups();
    *out = g;
    out->set_rank(++shown);
    const auto& [device, stats] = a.group_inputs[i];
    if (what_if) {
      AddCurve(*what_if, stats, /*on_traced_gpu=*/false, out);
    } else if (device) {
      AddCurve(device->props, stats, /*on_traced_gpu=*/true, out);
    }
  }
  report.set_groups_total(static_cast<int32_t>(a.judged.size()));
  BuildActions(&report, a.run_total_ns);
  std::vector<occtrace::KernelGroup> unjudged = a.unjudged;
  std::stable_sort(unjudged.begin(), unjudged.end(),
                   [](const auto& x, const auto& y) { return x.total_ns() > y.total_ns(); });
  for (auto& g : unjudged) *report.add_unjudged() = std::move(g);

  if (!a.judged.empty()) {
    // Traces with cubin facts (OCC_FUNCTION) know each kernel's named barriers; Nsight Systems
    // exports and traces of older occtrace versions do not.
    size_t barriers_unknown = 0;
    for (const auto& [device, stats] : a.group_inputs) barriers_unknown += stats.barrier_count < 0;
    if (barriers_unknown > 0) {
      report.add_notes(
          "barrier count not recorded for " +
          (barriers_unknown == a.group_inputs.size()
               ? std::string("any configuration")
               : std::to_string(barriers_unknown) + " of " + std::to_string(a.group_inputs.size()) +
                     " configurations") +
          ": 1 named barrier assumed; kernels using 3 or more (sm_90/100/103) or 2 or more "
          "(sm_110/12x) may fit fewer blocks per SM");
    }
    report.add_notes("GPU-time shares are of all " + std::to_string(a.run_launches) +
                     " launches in the input" + (a.files.size() > 1 ? "s" : "") + "; registers "
                     "as reported by the driver");
  }
  if (hidden_small > 0) {
    report.add_notes(std::to_string(hidden_small) + " groups below --min-time-pct " +
                     Fixed(options.min_time_pct, 2) + "% not listed");
  }
  if (options.top > 0 && shown >= options.top &&
      static_cast<int>(a.judged.size()) - hidden_small > shown) {
    report.add_notes("showing the top " + std::to_string(shown) + " of " +
                     std::to_string(static_cast<int>(a.judged.size()) - hidden_small) +
                     " groups (--top 0 shows all)");
  }
  for (const auto& reader : a.readers) {
    for (const auto& d : reader->devices()) {
      if (d.defaulted_fields.empty()) continue;
      std::string list;
      for (const auto& f : d.defaulted_fields) list += (list.empty() ? "" : ", ") + f;
      report.add_notes(reader->info().path() + ", device " + std::to_string(d.device_id) + " (" +
                       Abbrev(d.props.name) + "): not recorded in the trace, taken from the "
                       "architecture table for " + CcLabel(d.props.cc_major, d.props.cc_minor) +
                       ": " + list);
    }
  }
  if (a.files.size() > 1) {
    report.add_notes("groups with the same kernel, configuration and GPU model are merged across "
                     "files (file_index -1)");
  }

  if (!options.diff_base.empty()) {
    std::vector<std::string> base_inputs = {options.diff_base};
    auto base = Analyze(options, base_inputs, what_if);
    if (!base.ok()) {
      // A base without launches still diffs: everything is "new".
      if (base.status().code() != StatusCode::kBadInput ||
          base.status().message().find("no kernel launches") == std::string::npos) {
        return Status(base.status().code(), "--diff: " + base.status().message());
      }
    }
    std::vector<occtrace::KernelGroup> before, after;
    if (base.ok()) {
      before = base->judged;
      before.insert(before.end(), base->unjudged.begin(), base->unjudged.end());
      for (auto& f : base->files) {
        for (const auto& w : f.warnings()) report.add_notes("--diff base " + f.path() + ": " + w);
      }
    }
    after = a.judged;
    after.insert(after.end(), a.unjudged.begin(), a.unjudged.end());
    for (auto& row : DiffKernels(before, after)) *report.add_diff() = std::move(row);
  }
  return report;
}

}  // namespace occ
