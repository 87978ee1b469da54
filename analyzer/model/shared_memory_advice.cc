#include "analyzer/model/shared_memory_advice.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/message_text.h"
#include "analyzer/model/what_if_launch.h"

namespace occ {

namespace {

// The launch without a carveout preference or cache config: the hardware's choice.
LaunchParams WithoutCarveoutPreference(const LaunchParams& l) {
  LaunchParams no_pref = WhatIf(l);
  no_pref.carveout_pct = -1;
  no_pref.cache_config = CacheConfig::kPreferNone;
  return no_pref;
}

// Scanning granule by granule downward from the current allocation: each higher block count,
// at the largest user size reaching it (user = allocation - driver reserve), with the carveout
// it needs.
StatusOr<std::vector<SharedMemStep>> SmallerBudgets(const DeviceProps& d, const LaunchParams& l,
                                                    const ArchConstants& arch,
                                                    const OccupancyResult& current) {
  std::vector<SharedMemStep> steps;
  const int64_t gran = arch.smem_alloc_granularity;
  int last = current.active_blocks_per_sm;
  for (int64_t alloc = current.allocated_shared_mem_per_block - gran; alloc >= 0; alloc -= gran) {
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
      for (int size : arch.carveout_sizes) {
        if (static_cast<int64_t>(size) >= alloc * r.active_blocks_per_sm) {
          step.carveout_bytes = size;
          break;
        }
      }
      steps.push_back(step);
      last = r.active_blocks_per_sm;
    }
  }
  return steps;
}

// Headroom: user bytes that can be added to `user_smem` keeping the current block count.
StatusOr<int> Headroom(const DeviceProps& d, const LaunchParams& l, const ArchConstants& arch,
                       const OccupancyResult& current, int user_smem) {
  const int max_user = MaxUserSmem(d, l, arch);
  const int64_t gran = arch.smem_alloc_granularity;
  int headroom = 0;
  for (int64_t alloc = current.allocated_shared_mem_per_block + gran; current.active_blocks_per_sm > 0;
       alloc += gran) {
    const int64_t user = alloc - d.reserved_smem_per_block;
    if (user > max_user) break;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r,
                         ComputeOccupancyUnchecked(d, WithUserSmem(d, l, static_cast<int>(user))));
    if (r.active_blocks_per_sm < current.active_blocks_per_sm) break;
    headroom = static_cast<int>(user) - user_smem;
  }
  return headroom;
}

// Dropping the carveout preference that caps the SM's shared memory.
StatusOr<Suggestion> CarveoutFix(const DeviceProps& d, const LaunchParams& l,
                                 const OccupancyResult& current, int user_smem) {
  Suggestion s;
  s.kind = "shared_memory";
  OCC_ASSIGN_OR_RETURN(const OccupancyResult free, ComputeOccupancyUnchecked(d, WithoutCarveoutPreference(l)));
  s.predicted_blocks_per_sm = free.active_blocks_per_sm;
  s.predicted_occupancy_pct = free.theoretical_occupancy_pct;
  s.shared_mem_per_block = user_smem;
  s.assumptions = "block size, registers and shared memory per block unchanged";
  s.text = "Raise or drop the shared-memory carveout preference (cudaFuncAttributePreferredSharedMemoryCarveout" +
           std::string(l.carveout_pct >= 0 ? " = " + std::to_string(l.carveout_pct) + "%" : "") +
           " / cache config): it caps the SM at " + FormatBytes(current.shared_mem_config_bytes) +
           " → " + BlocksPerSm(free.active_blocks_per_sm) + ", theoretical occupancy " +
           Pct(current.theoretical_occupancy_pct) + " → " + Pct(free.theoretical_occupancy_pct);
  return s;
}

// The first smaller budget that fits more blocks.
Suggestion SmallerBudget(const DeviceProps& d, const LaunchParams& l, const ArchConstants& arch,
                         const OccupancyResult& current, const SharedMemAdvice& a) {
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
           (arch.configurable_carveout
                ? " (needs a carveout of at least " + FormatBytes(next.carveout_bytes) + ")"
                : std::string());
  return s;
}

}  // namespace

StatusOr<SharedMemAdvice> AdviseSharedMemory(const DeviceProps& d, const LaunchParams& l) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(d.cc_major, d.cc_minor));
  SharedMemAdvice a;
  a.user_smem_per_block = l.static_smem + l.dynamic_smem;
  a.allocated_smem_per_block = current.allocated_shared_mem_per_block;
  a.active_blocks_per_sm = current.active_blocks_per_sm;

  // Does a carveout preference (rather than the hardware) hold occupancy down?
  if (arch->configurable_carveout &&
      (l.carveout_pct != -1 || l.cache_config != CacheConfig::kPreferNone)) {
    OCC_ASSIGN_OR_RETURN(const OccupancyResult free, ComputeOccupancyUnchecked(d, WithoutCarveoutPreference(l)));
    a.carveout_preference_caps = free.active_blocks_per_sm > current.active_blocks_per_sm;
  }
  OCC_ASSIGN_OR_RETURN(a.steps, SmallerBudgets(d, l, *arch, current));
  OCC_ASSIGN_OR_RETURN(a.headroom_bytes, Headroom(d, l, *arch, current, a.user_smem_per_block));

  std::optional<Suggestion> carveout_fix;
  if (a.carveout_preference_caps) {
    OCC_ASSIGN_OR_RETURN(carveout_fix, CarveoutFix(d, l, current, a.user_smem_per_block));
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
  Suggestion s = SmallerBudget(d, l, *arch, current, a);
  if (carveout_fix && carveout_fix->predicted_occupancy_pct >= s.predicted_occupancy_pct) s = *carveout_fix;
  a.verdict = s.text;
  a.suggestion = s;
  return a;
}

}  // namespace occ
