#include "analyzer/model/register_advice.h"

#include <cstdint>

#include "analyzer/model/message_text.h"
#include "analyzer/model/what_if_launch.h"

namespace occ {

StatusOr<RegisterAdvice> AdviseRegisterCap(const DeviceProps& d, const LaunchParams& l,
                                           int local_memory_per_thread) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  RegisterAdvice a;
  a.registers_per_thread = l.regs_per_thread;
  a.allocated_registers_per_thread = current.allocated_registers_per_thread;
  a.active_blocks_per_sm = current.active_blocks_per_sm;
  a.spill_warning = local_memory_per_thread > 0;
  a.headroom_registers = l.regs_per_thread;

  // Blocks for every register count; occupancy never rises with more registers, so the largest
  // count reaching each block count is the cap to suggest for it.
  std::vector<int> blocks_at(256, 0);
  LaunchParams t = WhatIf(l);
  for (int regs = 0; regs <= 255; ++regs) {
    t.regs_per_thread = regs;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, t));
    blocks_at[static_cast<size_t>(regs)] = r.active_blocks_per_sm;
  }
  for (int regs = 255; regs >= l.regs_per_thread; --regs) {
    if (blocks_at[static_cast<size_t>(regs)] >= current.active_blocks_per_sm) {
      a.headroom_registers = regs;
      break;
    }
  }
  int last = current.active_blocks_per_sm;
  for (int regs = l.regs_per_thread - 1; regs >= 1; --regs) {
    const int blocks = blocks_at[static_cast<size_t>(regs)];
    if (blocks > last) {
      const double pct = 100.0 * blocks * current.warps_per_block / current.max_warps_per_sm;
      a.steps.push_back({regs, blocks, pct});
      last = blocks;
    }
  }
  if (a.steps.empty()) {
    a.verdict = current.active_blocks_per_sm == 0
                    ? "no register cap alone makes this launch fit"
                    : "no better option from registers: they do not limit occupancy (up to " +
                          std::to_string(a.headroom_registers) + " registers/thread keep " +
                          BlocksPerSm(current.active_blocks_per_sm) + ")";
    return a;
  }
  const RegisterStep& next = a.steps.front();
  Suggestion s;
  s.kind = "register_cap";
  s.registers_per_thread = next.max_registers_per_thread;
  s.predicted_blocks_per_sm = next.active_blocks_per_sm;
  s.predicted_occupancy_pct = next.occupancy_pct;
  s.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  FormatBytes(static_cast<int64_t>(l.static_smem) + l.dynamic_smem) +
                  " of shared memory per block unchanged; the compiler meets the cap without "
                  "spilling (check ptxas -v)";
  s.text = "Cap registers at " + std::to_string(next.max_registers_per_thread) +
           "/thread (now " + std::to_string(l.regs_per_thread) + "): __launch_bounds__(" +
           std::to_string(l.block_threads) + ", " + std::to_string(next.active_blocks_per_sm) +
           ") on this kernel → " + BlocksPerSm(next.active_blocks_per_sm) + ", theoretical occupancy " +
           Pct(current.theoretical_occupancy_pct) + " → " + Pct(next.occupancy_pct) +
           std::string(kMaxrregcountReach.substr(0, kMaxrregcountReach.find("%d"))) +
           std::to_string(next.max_registers_per_thread) +
           std::string(kMaxrregcountReach.substr(kMaxrregcountReach.find("%d") + 2));
  if (a.spill_warning) {
    s.text += "; the kernel already uses " + std::to_string(local_memory_per_thread) +
              " B of local memory per thread (spills or stack), a lower cap may spill more";
  }
  a.verdict = s.text;
  a.suggestion = s;
  return a;
}

}  // namespace occ
