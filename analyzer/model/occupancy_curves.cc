#include "analyzer/model/occupancy_curves.h"

#include <algorithm>
#include <cstdint>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/message_text.h"
#include "analyzer/model/what_if_launch.h"

namespace occ {

StatusOr<Curve> BlockSizeCurve(const DeviceProps& d, const LaunchParams& l) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  (void)current;
  Curve c;
  c.x_label = "threads per block";
  c.assumptions = HeldFixed(l);
  const int limit = BlockSizeLimit(d, l);
  LaunchParams t = WhatIf(l);
  for (int b = d.warp_size; b <= limit; b += d.warp_size) {
    t.block_threads = b;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, t));
    c.points.push_back({b, r.active_blocks_per_sm, r.active_warps_per_sm,
                        r.theoretical_occupancy_pct, r.limiting_factors});
  }
  if (limit % d.warp_size != 0) {
    t.block_threads = limit;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, t));
    c.points.push_back({limit, r.active_blocks_per_sm, r.active_warps_per_sm,
                        r.theoretical_occupancy_pct, r.limiting_factors});
  }
  return c;
}

StatusOr<Curve> RegisterCurve(const DeviceProps& d, const LaunchParams& l) {
  OCC_RETURN_IF_ERROR(ValidateLaunch(d, l));
  Curve c;
  c.x_label = "registers per thread";
  c.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  FormatBytes(static_cast<int64_t>(l.static_smem) + l.dynamic_smem) +
                  " of shared memory per block unchanged";
  LaunchParams t = WhatIf(l);
  for (int regs = 8; regs <= 256; regs += 8) {
    t.regs_per_thread = std::min(regs, 255);
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, t));
    c.points.push_back({t.regs_per_thread, r.active_blocks_per_sm, r.active_warps_per_sm,
                        r.theoretical_occupancy_pct, r.limiting_factors});
  }
  return c;
}

StatusOr<Curve> SharedMemCurve(const DeviceProps& d, const LaunchParams& l) {
  OCC_RETURN_IF_ERROR(ValidateLaunch(d, l));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(d.cc_major, d.cc_minor));
  Curve c;
  c.x_label = "shared memory per block (bytes, static + dynamic)";
  c.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  std::to_string(l.regs_per_thread) + " registers/thread unchanged; the " +
                  FormatBytes(d.reserved_smem_per_block) + " driver reserve per block is added";
  const int max_user = MaxUserSmem(d, l, *arch);
  int last_blocks = -1;
  // Allocation happens in granules, so the block count can only change at granule boundaries:
  // sample the largest user size of every granule and keep the points where the count changes.
  for (int64_t alloc = arch->smem_alloc_granularity;; alloc += arch->smem_alloc_granularity) {
    const int64_t user64 = std::min<int64_t>(alloc - d.reserved_smem_per_block, max_user);
    if (user64 < 0) continue;
    const int user = static_cast<int>(user64);
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r,
                         ComputeOccupancyUnchecked(d, WithUserSmem(d, l, user)));
    if (r.active_blocks_per_sm != last_blocks || user == max_user) {
      c.points.push_back({user, r.active_blocks_per_sm, r.active_warps_per_sm,
                          r.theoretical_occupancy_pct, r.limiting_factors});
      last_blocks = r.active_blocks_per_sm;
    }
    if (user >= max_user) break;
  }
  return c;
}

}  // namespace occ
