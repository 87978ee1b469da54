#include "analyzer/analyze/group_advice.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>

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

// A block-size suggestion for a 2-D or 3-D block, as a shape: the inner dimensions (x, and y of a
// 3-D block) stay, as the kernel's indexing and coalescing depend on them, and the outermost one
// takes the new size, with the grid along it covering the same extent. "Use 384 threads per
// block (grid 1366)" for block (8, 8, 4) becomes "Use block (8, 8, 6) (384 threads), grid
// (16, 16, 6)", its waves recomputed for that grid. Left as it is when the new size is not a
// multiple of the inner dimensions, or when the suggestion rests on the 1-D grid's SM balance.
void ShapeBlockSuggestion(const ConfigStats& c, int num_sms, occtrace::Suggestion* s) {
  const int outer = c.block[2] > 1 ? 2 : c.block[1] > 1 ? 1 : 0;
  if (outer == 0 || s->block_size() <= 0) return;
  int64_t inner = 1;
  for (int i = 0; i < outer; ++i) inner *= c.block[i];
  if (inner <= 0 || s->block_size() % inner != 0) return;
  int64_t block[3] = {c.block[0], c.block[1], c.block[2]};
  int64_t grid[3] = {c.grid[0], c.grid[1], c.grid[2]};
  block[outer] = s->block_size() / inner;
  const int64_t extent = c.grid[outer] * c.block[outer];
  grid[outer] = (extent + block[outer] - 1) / block[outer];
  auto tuple = [](const int64_t* d, int n) {
    std::string t = "(";
    for (int i = 0; i < n; ++i) t += (i ? ", " : "") + std::to_string(d[i]);
    return t + ")";
  };
  const int dims = c.block[2] > 1 ? 3 : 2;
  const int grid_dims = c.grid[2] > 1 || dims == 3 ? 3 : 2;
  const std::string threads = "Use " + std::to_string(s->block_size()) + " threads per block";
  std::string text = s->text();
  if (text.rfind(threads, 0) != 0 || text.find("SM") != std::string::npos) return;
  const int64_t blocks = grid[0] * grid[1] * grid[2];
  if (const size_t waves = text.find("waves "); waves != std::string::npos && s->predicted_blocks_per_sm() > 0 &&
                                                num_sms > 0) {
    const size_t arrow = text.find(" → ", waves);  // the arrow is 3 bytes of UTF-8
    if (arrow == std::string::npos) return;
    size_t end = arrow + 5;  // past the number: digits, and a '.' only before another digit
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) ||
                                 (text[end] == '.' && end + 1 < text.size() &&
                                  std::isdigit(static_cast<unsigned char>(text[end + 1]))))) {
      ++end;
    }
    const double w = static_cast<double>(blocks) / (static_cast<double>(s->predicted_blocks_per_sm()) * num_sms);
    char value[32];
    std::snprintf(value, sizeof value, "%.2f", w);
    text = text.substr(0, arrow + 5) + value + text.substr(end);
    s->set_predicted_waves_per_sm(w);
  }
  size_t rest = threads.size();
  if (text.compare(rest, 7, " (grid ") == 0) {
    const size_t close = text.find(')', rest);
    if (close == std::string::npos) return;
    rest = close + 1;
  }
  s->set_text("Use block " + tuple(block, dims) + " (" + std::to_string(s->block_size()) + " threads), grid " +
              tuple(grid, grid_dims) + text.substr(rest));
  s->set_block_x(static_cast<int32_t>(block[0]));
  s->set_block_y(static_cast<int32_t>(block[1]));
  s->set_block_z(static_cast<int32_t>(block[2]));
  const char* axis = outer == 2 ? "z" : "y";
  const std::string shaped = "the block's inner dimensions kept, grid." + std::string(axis) + " = ceil(" +
                             std::to_string(extent) + " / block." + axis + ")";
  std::string assumptions = s->assumptions();
  const std::string flat = "grid = ceil(work / block)";
  if (const size_t at = assumptions.find(flat); at != std::string::npos) {
    assumptions.replace(at, flat.size(), shaped);
  } else {
    assumptions += "; " + shaped;
  }
  s->set_assumptions(assumptions);
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
    occtrace::Suggestion* added = out.add_suggestions();
    ToProto(s, added);
    if (s.kind == "block_size") ShapeBlockSuggestion(c, device.num_sms, added);
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
