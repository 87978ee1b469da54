#include "analyzer/analyze/judge.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <utility>

#include "analyzer/analyze/achieved_figure.h"
#include "analyzer/analyze/kernel_origin.h"
#include "analyzer/model/limiter_words.h"
#include "analyzer/model/message_text.h"
#include "analyzer/model/waves.h"

namespace occ {
namespace {

constexpr double kLowTheoreticalPct = 80;      // ncu TheoreticalOccupancy rule
constexpr double kAchievedGapPoints = 10;      // ncu AchievedOccupancy rule
constexpr double kTailReportPct = 20;          // ncu tail-effect rule shows X >= 20 %


// Left absent where no launch of the configuration could be swept (overlap unknown).
void FillOverlap(const OverlapSums& o, occtrace::KernelGroup* out) {
  if (!o.known()) return;
  occtrace::LaunchOverlap* overlap = out->mutable_overlap();
  overlap->set_launches(o.launches);
  overlap->set_overlapped_ns(o.overlapped_ns);
  overlap->set_overlapped_pct(o.launch_ns > 0 ? 100.0 * static_cast<double>(o.overlapped_ns) /
                                                    static_cast<double>(o.launch_ns)
                                              : 0);
  overlap->set_solo_launches(o.solo_launches);
  overlap->set_solo_mean_ns(o.solo_launches > 0 ? static_cast<double>(o.solo_ns) /
                                                      static_cast<double>(o.solo_launches)
                                                : 0);
  for (int64_t stream : o.streams) overlap->add_streams(stream);
  overlap->set_more_streams(o.more_streams);
}

void FillIdentity(const Group& g, occtrace::KernelGroup* out) {
  const ConfigStats& c = g.stats;
  out->set_file_index(g.files.size() == 1 ? *g.files.begin() : -1);
  out->set_device_id(g.device_ids.size() == 1 ? static_cast<int32_t>(*g.device_ids.begin()) : -1);
  if (IsNumbaKernel(c.mangled_name, c.name) && c.name.find("[abi:") != std::string::npos) {
    out->set_name(NumbaDisplayName(c.name, true));
    out->set_short_name(NumbaDisplayName(c.name, false));
  } else {
    out->set_name(c.name);
    out->set_short_name(c.short_name);
  }
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
  // An estimate covers every launch; otherwise untimed launches are left out of the mean.
  const int64_t timed_launches = c.time_estimated ? c.launches : c.launches - c.untimed_launches;
  if (c.time_estimated) {
    out->set_time_estimated(true);
    out->set_timed_launches(c.estimate_samples);
    // One timed launch gives no spread to build an interval from: -1 says so.
    out->set_time_ci95_ns(c.estimate_samples < 2 && c.estimate_samples < c.launches
                              ? -1
                              : static_cast<int64_t>(1.96 * std::sqrt(std::max(0.0, c.estimate_variance)) + 0.5));
  }
  out->set_mean_ns(timed_launches > 0
                       ? static_cast<double>(c.total_ns) / static_cast<double>(timed_launches)
                       : 0);
  out->set_min_ns(c.min_ns);
  out->set_max_ns(c.max_ns);
  out->set_graph_id(c.graph_id);
  out->set_first_start_ns(c.first_start_ns);
  out->set_last_end_ns(c.last_end_ns);
  out->set_tail_launches(c.tail_launches);
  FillOverlap(c.overlap, out);
  out->set_launch_bounds_max_threads(static_cast<int32_t>(std::clamp<int64_t>(c.func_max_threads, 0, INT32_MAX)));
  // Never the tracing machine's folders: from the Python package on, or the file name.
  out->set_loader(LoaderLabel(c.loader));
  out->set_module_library(LoaderLabel(c.module_library));
  if (!c.source_file.empty() || !c.source_nodes.empty() || !c.original_aten.empty()) {
    occtrace::KernelSource* source = out->mutable_source();
    // The file name only, as for loaders: never the tracing machine's folders.
    source->set_file(c.source_file.substr(c.source_file.rfind('/') + 1));
    source->set_line(static_cast<int32_t>(std::clamp<int64_t>(c.source_line, 0, INT32_MAX)));
    source->set_source_nodes(c.source_nodes);
    source->set_original_aten(c.original_aten);
  }
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

void FileWarning(JudgeContext* ctx, int file_index, const std::string& warning) {
  if (file_index >= 0 && static_cast<size_t>(file_index) < ctx->files->size()) {
    (*ctx->files)[static_cast<size_t>(file_index)].add_warnings(warning);
  }
}

// The GPU the group is judged on: the --gpu GPU, else the one it ran on. An error says why the
// group cannot be judged (an absurd record, also warned about on its file; no register count;
// an unknown GPU).
StatusOr<const DeviceProps*> JudgedOn(JudgeContext* ctx, const Group& g) {
  const ConfigStats& c = g.stats;
  std::string absurd = AbsurdValue(c);
  if (!absurd.empty()) {
    FileWarning(ctx, *g.files.begin(), "kernel '" + Abbrev(c.name) + "': " + absurd +
                                           " in the trace: not judged");
    return BadInput("the trace records an " + absurd);
  }
  if (!c.registers_known) return BadInput("no register count recorded for this kernel");
  if (ctx->what_if) return &*ctx->what_if;
  if (g.device == nullptr) {
    return BadInput("device " + std::to_string(c.device_id) + " has no device row in the trace "
                    "(unknown GPU; --gpu NAME evaluates it on a named GPU)");
  }
  if (!g.device->known) {
    return BadInput("unknown GPU: " + g.device->unknown_reason +
                    " (--gpu NAME evaluates it on a named GPU)");
  }
  return &g.device->props;
}

// The occupancy model's verdict and advice on the configuration, on `device`.
StatusOr<LaunchAdvice> AdviseConfig(const ConfigStats& c, const DeviceProps& device,
                                    bool on_traced_gpu) {
  OCC_ASSIGN_OR_RETURN(const LaunchParams launch, LaunchParamsFor(c, device, on_traced_gpu));
  AdviceInputs inputs;
  inputs.grid_blocks = GridBlocks(c);
  inputs.local_memory_per_thread = static_cast<int>(c.local_mem_per_thread);
  inputs.barrier_count_known = c.barrier_count >= 0;
  return AdviseLaunch(device, launch, inputs);
}

void FillWaves(const Waves& w, occtrace::KernelGroup* out) {
  out->set_waves_per_sm(w.waves_per_sm);
  out->set_full_waves(w.full_waves);
  out->set_tail_blocks(w.tail_blocks);
  out->set_tail_pct(w.tail_pct);
}

// Issues: Nsight Compute's rules (occupancy-model.md §5.4), same thresholds, then the advice's
// notes not said already. The rules' estimates are Nsight Compute's "Est. Speedup" (the most of
// the kernel's time the fix could save), bounds of a change to the work's split (grid, block
// shape), which the recoverable time (measured gains + the occupancy model's bounds,
// run_figures.h) does not count: said in the issue, so "up to 51.5%" never reads against
// "Recoverable none" a few lines below.
void AddIssues(const ConfigStats& c, const DeviceProps* device, const LaunchAdvice& advice,
               const Waves& w, occtrace::KernelGroup* out_group) {
  occtrace::KernelGroup& out = *out_group;
  const OccupancyResult& r = advice.occupancy;
  static constexpr const char* kNotCounted = " (Nsight Compute's bound, not counted in Recoverable)";
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
                   " lanes in its warps are masked off; full warps could save up to " +
                   Fixed(100.0 * static_cast<double>(idle) / static_cast<double>(warps * 32)) +
                   "% of this kernel's time" + kNotCounted);
  }
  if (grid < device->num_sms) {
    out.add_issues("grid of " + std::to_string(grid) + " blocks is smaller than the GPU's " +
                   std::to_string(device->num_sms) + " SMs: " +
                   std::to_string(device->num_sms - grid) +
                   " SMs stay idle; work spread over every SM could save up to " +
                   Fixed(100.0 * static_cast<double>(device->num_sms - grid) / device->num_sms) +
                   "% of this kernel's time" + kNotCounted);
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
}

}  // namespace

Judged JudgeGroup(JudgeContext* ctx, const Group& g, int64_t run_total_ns) {
  Judged j;
  occtrace::KernelGroup& out = j.group;
  const ConfigStats& c = g.stats;
  FillIdentity(g, &out);
  out.set_time_pct(run_total_ns > 0 ? 100.0 * static_cast<double>(c.total_ns) /
                                          static_cast<double>(run_total_ns)
                                    : 0);
  // Every group has its achieved figure, or says why not, judged or not (achieved_figure.h).
  static const std::vector<occtrace::InputFile> kNoFiles;
  FillAchieved(g, ctx->files != nullptr ? *ctx->files : kNoFiles, out.mutable_achieved());
  auto unjudged = [&](const std::string& reason) {
    out.set_judged(false);
    out.set_not_judged_reason(reason);
    return j;
  };
  auto device_or = JudgedOn(ctx, g);
  if (!device_or.ok()) return unjudged(device_or.status().message());
  const DeviceProps* device = *device_or;
  auto advice_or = AdviseConfig(c, *device, /*on_traced_gpu=*/!ctx->what_if);
  if (!advice_or.ok()) return unjudged(advice_or.status().message());
  j.device = device;
  j.advice = std::move(*advice_or);
  const LaunchAdvice& advice = j.advice;
  const OccupancyResult& r = advice.occupancy;
  out.set_judged(true);
  FillOccupancy(r, advice.limiter_sentence, out.mutable_occupancy());
  out.set_limiting_factor(advice.primary_limiter);

  Waves w = advice.waves ? *advice.waves
                         : ComputeWaves(GridBlocks(c), r.active_blocks_per_sm, device->num_sms);
  FillWaves(w, &out);
  AddIssues(c, device, advice, w, &out);

  // Achieved occupancy (filled above): only meaningful on the GPU the trace ran on: under --gpu
  // the figures stay that GPU's, said so, and are never set against the what-if GPU's
  // theoretical occupancy.
  occtrace::Achieved* a = out.mutable_achieved();
  if (ctx->what_if && (a->samples() > 0 || a->has_pm())) {
    a->set_measured_on_gpu(g.device != nullptr && g.device->known ? g.device->props.name
                                                                   : "the traced GPU");
  }
  if (a->samples() > 0 && !ctx->what_if) {
    a->set_gap_points(r.theoretical_occupancy_pct - a->mean_pct());
    ExplainGap(c, r, w, device->num_sms, a);
  }
  j.ok = true;
  return j;
}

}  // namespace occ
