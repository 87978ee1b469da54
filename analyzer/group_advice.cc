#include "group_advice.h"

#include <algorithm>
#include <cstdint>

namespace occ {
namespace {

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

// Is the suggestion a change at all? The advice promises never to echo the current
// configuration; this re-checks it against what the trace recorded.
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

}  // namespace

void AdviseGroup(const ConfigStats& c, const DeviceProps& device, const LaunchAdvice& advice,
                 occtrace::KernelGroup* group) {
  occtrace::KernelGroup& out = *group;
  const OccupancyResult& r = advice.occupancy;
  const int64_t grid = GridBlocks(c);
  // Suggestions, best first; each must change something and reach more occupancy than now.
  // Headroom is measured in occupancy the grid can reach (ReachableOccupancyPct): for a grid
  // below one wave, room for more blocks per SM gains nothing.
  const int64_t work = grid * BlockThreads(c);
  const double reachable_now =
      ReachableOccupancyPct(grid, r.active_blocks_per_sm, r.warps_per_block, device.num_sms,
                            r.max_warps_per_sm);
  double best = reachable_now;
  for (const auto& s : advice.suggestions) {
    if (!ChangesSomething(s, c, r)) continue;
    double reachable = reachable_now;
    bool keep = true;
    if (s.kind == "block_size" && s.block_size > 0) {
      int64_t warps = (s.block_size + device.warp_size - 1) / device.warp_size;
      reachable = ReachableOccupancyPct((work + s.block_size - 1) / s.block_size,
                                        s.predicted_blocks_per_sm, warps, device.num_sms,
                                        r.max_warps_per_sm);
      // A new block size may trade occupancy for SM balance, never lose occupancy for nothing.
      keep = s.predicted_occupancy_pct >= r.theoretical_occupancy_pct || reachable > reachable_now;
    } else if (s.kind != "grid_size") {
      reachable = ReachableOccupancyPct(grid, s.predicted_blocks_per_sm, r.warps_per_block,
                                        device.num_sms, r.max_warps_per_sm);
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
}

}  // namespace occ
