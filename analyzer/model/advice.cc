#include "analyzer/model/advice.h"

#include <algorithm>
#include <optional>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/limiter_words.h"
#include "analyzer/model/message_text.h"
#include "analyzer/model/what_if_launch.h"

namespace occ {

namespace {

// Named barriers come from a per-SM pool (sm_90+): fewer per block, more resident blocks. The
// largest count below the current one that fits more blocks, if any.
StatusOr<std::optional<Suggestion>> FewerBarriers(const DeviceProps& d, const LaunchParams& l,
                                                  const OccupancyResult& current) {
  LaunchParams fewer = WhatIf(l);
  for (int n = l.num_block_barriers - 1; n >= 1; --n) {
    fewer.num_block_barriers = n;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, fewer));
    if (r.active_blocks_per_sm > current.active_blocks_per_sm) {
      Suggestion s;
      s.kind = "barriers";
      s.block_size = l.block_threads;
      s.predicted_blocks_per_sm = r.active_blocks_per_sm;
      s.predicted_occupancy_pct = r.theoretical_occupancy_pct;
      s.assumptions = "block size, registers and shared memory unchanged";
      s.text = "Use at most " + std::to_string(n) + " named barriers per block (now " +
               std::to_string(l.num_block_barriers) + ", e.g. merge bar.sync IDs) → " +
               BlocksPerSm(r.active_blocks_per_sm) + ", theoretical occupancy " +
               Pct(current.theoretical_occupancy_pct) + " → " + Pct(r.theoretical_occupancy_pct);
      return std::optional<Suggestion>(s);
    }
  }
  return std::optional<Suggestion>();
}

// A grid smaller than the SM count leaves SMs idle whatever the occupancy.
Suggestion MoreBlocks(const DeviceProps& d, const LaunchParams& l, const AdviceInputs& in,
                      const OccupancyResult& current) {
  Suggestion s;
  s.kind = "grid_size";
  s.block_size = l.block_threads;
  s.predicted_blocks_per_sm = current.active_blocks_per_sm;
  s.predicted_occupancy_pct = current.theoretical_occupancy_pct;
  s.assumptions = "the work can be split into more blocks";
  s.text = "Launch at least " + std::to_string(d.num_sms) + " blocks: only " +
           std::to_string(in.grid_blocks) + " blocks for " + std::to_string(d.num_sms) +
           " SMs leaves " + std::to_string(d.num_sms - in.grid_blocks) +
           " SMs idle (split the work further, or use smaller blocks)";
  return s;
}

// What the suggestions do not cover: a large tail, a grid below the SM count, idle lanes, an
// assumed barrier count, local memory.
void AddNotes(const DeviceProps& d, const LaunchParams& l, const AdviceInputs& in,
              LaunchAdvice* out) {
  if (out->waves) {
    const std::string tail = TailSentence(*out->waves);
    if (out->waves->full_waves >= 1 && out->waves->tail_pct >= 20.0) out->notes.push_back(tail);
    if (out->waves->grid_below_sm_count) {
      out->notes.push_back("the grid (" + std::to_string(in.grid_blocks) + " blocks) is smaller than the " +
                           std::to_string(d.num_sms) + " SMs");
    }
  }
  if (l.block_threads % d.warp_size != 0) {
    const int warps = out->occupancy.warps_per_block;
    const int idle = warps * d.warp_size - l.block_threads;
    out->notes.push_back("block of " + std::to_string(l.block_threads) + " threads runs as " +
                         std::to_string(warps) + " warps with " + std::to_string(idle) +
                         " idle lanes; use a multiple of " + std::to_string(d.warp_size));
  }
  if (!in.barrier_count_known && d.cc_major >= 9) {
    out->notes.push_back("barrier count unknown (1 assumed): kernels with more named barriers may "
                         "fit fewer blocks on " + CcLabel(d.cc_major, d.cc_minor));
  }
  if (in.local_memory_per_thread > 0) {
    out->notes.push_back(std::to_string(in.local_memory_per_thread) +
                         " B of local memory per thread: register spills or a stack");
  }
}

}  // namespace

StatusOr<LaunchAdvice> AdviseLaunch(const DeviceProps& d, const LaunchParams& l,
                                    const AdviceInputs& in) {
  LaunchAdvice out;
  OCC_ASSIGN_OR_RETURN(out.occupancy, ComputeOccupancy(d, l));
  out.limiter_sentence = LimiterSentence(d, l, out.occupancy);
  out.primary_limiter = PrimaryLimiter(out.occupancy);
  if (in.grid_blocks > 0) {
    out.waves = ComputeWaves(in.grid_blocks, out.occupancy.active_blocks_per_sm, d.num_sms);
  }
  OCC_ASSIGN_OR_RETURN(out.block_size, AdviseBlockSize(d, l, in.grid_blocks));
  OCC_ASSIGN_OR_RETURN(out.registers, AdviseRegisterCap(d, l, in.local_memory_per_thread));
  OCC_ASSIGN_OR_RETURN(out.shared_memory, AdviseSharedMemory(d, l));

  if (out.registers.suggestion) out.suggestions.push_back(*out.registers.suggestion);
  if (out.shared_memory.suggestion) out.suggestions.push_back(*out.shared_memory.suggestion);
  if (out.block_size.suggestion) out.suggestions.push_back(*out.block_size.suggestion);
  if ((RealLimiters(out.occupancy) & kLimitBarriers) != 0 && out.occupancy.active_blocks_per_sm > 0) {
    OCC_ASSIGN_OR_RETURN(const std::optional<Suggestion> fewer, FewerBarriers(d, l, out.occupancy));
    if (fewer) out.suggestions.push_back(*fewer);
  }
  // A grid that fits in one wave is resident at once: more blocks per SM (registers, shared
  // memory, barriers) cannot help it, and the block-size advice names no occupancy gain there.
  if (out.waves && out.waves->blocks_per_wave > 0 && in.grid_blocks <= out.waves->blocks_per_wave) {
    const size_t before = out.suggestions.size();
    std::erase_if(out.suggestions, [](const Suggestion& s) { return s.kind != "block_size"; });
    if (out.suggestions.size() < before) {
      out.notes.push_back("the whole grid (" + std::to_string(in.grid_blocks) + " blocks) fits in one wave of " +
                          std::to_string(out.waves->blocks_per_wave) +
                          " blocks: every block is resident at once, so fitting more blocks per SM "
                          "(registers, shared memory, barriers) cannot help");
    }
  }
  if (out.waves && out.waves->grid_below_sm_count) out.suggestions.push_back(MoreBlocks(d, l, in, out.occupancy));
  // Largest predicted gain first; the grid-size advice is about idle SMs, not occupancy, and
  // keeps its place after the occupancy suggestions.
  std::stable_sort(out.suggestions.begin(), out.suggestions.end(),
                   [](const Suggestion& x, const Suggestion& y) {
                     if ((x.kind == "grid_size") != (y.kind == "grid_size")) return y.kind == "grid_size";
                     return x.predicted_occupancy_pct > y.predicted_occupancy_pct;
                   });
  AddNotes(d, l, in, &out);
  return out;
}

}  // namespace occ
