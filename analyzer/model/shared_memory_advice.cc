#include "analyzer/model/shared_memory_advice.h"

#include <cstdint>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/message_text.h"
#include "analyzer/model/what_if_launch.h"

namespace occ {

StatusOr<SharedMemAdvice> AdviseSharedMemory(const DeviceProps& d, const LaunchParams& l) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(d.cc_major, d.cc_minor));
  SharedMemAdvice a;
  a.user_smem_per_block = l.static_smem + l.dynamic_smem;
  a.allocated_smem_per_block = current.allocated_shared_mem_per_block;
  a.active_blocks_per_sm = current.active_blocks_per_sm;
  a.headroom_bytes = 0;

  // Does a carveout preference (rather than the hardware) hold occupancy down?
  if (arch->configurable_carveout &&
      (l.carveout_pct != -1 || l.cache_config != CacheConfig::kPreferNone)) {
    LaunchParams no_pref = WhatIf(l);
    no_pref.carveout_pct = -1;
    no_pref.cache_config = CacheConfig::kPreferNone;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult free, ComputeOccupancyUnchecked(d, no_pref));
    a.carveout_preference_caps = free.active_blocks_per_sm > current.active_blocks_per_sm;
  }

  const int max_user = MaxUserSmem(d, l, *arch);
  const int64_t gran = arch->smem_alloc_granularity;
  int last = current.active_blocks_per_sm;
  // Scan granule by granule downward from the current size: each higher block count, at the
  // largest user size reaching it (user = allocation - driver reserve).
  const int64_t current_alloc = current.allocated_shared_mem_per_block;
  for (int64_t alloc = current_alloc - gran; alloc >= 0; alloc -= gran) {
    const int64_t user = alloc - d.reserved_smem_per_block;
    if (user < 0) break;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r,
                         ComputeOccupancyUnchecked(d, WithUserSmem(d, l, static_cast<int>(user))));
    if (r.active_blocks_per_sm > last) {
      SharedMemStep step;
      step.active_blocks_per_sm = r.active_blocks_per_sm;
      step.occupancy_pct = r.theoretical_occupancy_pct;
      step.max_user_smem_per_block = static_cast<int>(user);
      step.carveout_bytes = d.smem_per_sm;
      for (int size : arch->carveout_sizes) {
        if (static_cast<int64_t>(size) >= alloc * r.active_blocks_per_sm) {
          step.carveout_bytes = size;
          break;
        }
      }
      a.steps.push_back(step);
      last = r.active_blocks_per_sm;
    }
  }
  // Headroom: user bytes that can be added keeping the current block count.
  for (int64_t alloc = current_alloc + gran; current.active_blocks_per_sm > 0; alloc += gran) {
    const int64_t user = alloc - d.reserved_smem_per_block;
    if (user > max_user) break;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r,
                         ComputeOccupancyUnchecked(d, WithUserSmem(d, l, static_cast<int>(user))));
    if (r.active_blocks_per_sm < current.active_blocks_per_sm) break;
    a.headroom_bytes = static_cast<int>(user) - a.user_smem_per_block;
  }

  std::optional<Suggestion> carveout_fix;
  if (a.carveout_preference_caps) {
    Suggestion s;
    s.kind = "shared_memory";
    LaunchParams no_pref = WhatIf(l);
    no_pref.carveout_pct = -1;
    no_pref.cache_config = CacheConfig::kPreferNone;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult free, ComputeOccupancyUnchecked(d, no_pref));
    s.predicted_blocks_per_sm = free.active_blocks_per_sm;
    s.predicted_occupancy_pct = free.theoretical_occupancy_pct;
    s.shared_mem_per_block = a.user_smem_per_block;
    s.assumptions = "block size, registers and shared memory per block unchanged";
    s.text = "Raise or drop the shared-memory carveout preference (cudaFuncAttributePreferredSharedMemoryCarveout" +
             std::string(l.carveout_pct >= 0 ? " = " + std::to_string(l.carveout_pct) + "%" : "") +
             " / cache config): it caps the SM at " + FormatBytes(current.shared_mem_config_bytes) +
             " → " + BlocksPerSm(free.active_blocks_per_sm) + ", theoretical occupancy " +
             Pct(current.theoretical_occupancy_pct) + " → " + Pct(free.theoretical_occupancy_pct);
    carveout_fix = s;
  }

  if (a.steps.empty()) {
    if (carveout_fix) {
      a.suggestion = carveout_fix;
      a.verdict = carveout_fix->text;
      return a;
    }
    a.verdict = current.active_blocks_per_sm == 0
                    ? (current.block_limit_shared_mem == 0
                           ? "shared memory per block exceeds what one block may use"
                           : "shared memory does not keep this launch from running")
                    : "no better option from shared memory: it does not limit occupancy (" +
                          FormatBytes(a.headroom_bytes) + " more per block keep " +
                          BlocksPerSm(current.active_blocks_per_sm) + ")";
    return a;
  }
  const SharedMemStep& next = a.steps.front();
  Suggestion s;
  s.kind = "shared_memory";
  s.shared_mem_per_block = next.max_user_smem_per_block;
  s.predicted_blocks_per_sm = next.active_blocks_per_sm;
  s.predicted_occupancy_pct = next.occupancy_pct;
  s.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  std::to_string(l.regs_per_thread) + " registers/thread unchanged; the " +
                  FormatBytes(d.reserved_smem_per_block) + " driver reserve per block counted";
  s.text = "Use at most " + FormatBytes(next.max_user_smem_per_block) +
           " of shared memory per block (now " + FormatBytes(a.user_smem_per_block) + ") → " +
           BlocksPerSm(next.active_blocks_per_sm) + ", theoretical occupancy " +
           Pct(current.theoretical_occupancy_pct) + " → " + Pct(next.occupancy_pct) +
           (arch->configurable_carveout
                ? " (needs a carveout of at least " + FormatBytes(next.carveout_bytes) + ")"
                : std::string());
  if (carveout_fix && carveout_fix->predicted_occupancy_pct >= s.predicted_occupancy_pct) s = *carveout_fix;
  a.verdict = s.text;
  a.suggestion = s;
  return a;
}

}  // namespace occ
