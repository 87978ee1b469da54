#include "analyzer/analyze/group_advice.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analyze/kernel_origin.h"
#include "analyzer/model/message_text.h"

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

// How evenly a grid spreads over the SMs, as the block-size advice weighs it
// (block_size_advice.cc): busy SMs over all SMs below one block per SM, else blocks per SM over
// the busiest SM's, 1 from 0.9 on.
double SmSpread(int64_t grid_blocks, int num_sms) {
  if (grid_blocks <= 0 || num_sms <= 0) return 0;
  const double per_sm = static_cast<double>(grid_blocks) / num_sms;
  const double balance = per_sm / std::ceil(per_sm);
  return balance >= 0.9 ? 1.0 : balance;
}

// A new block size is worth suggesting for what it changes beside the model's figures: the
// occupancy the grid reaches, how evenly the grid spreads over the SMs, or idle lanes. A block
// size that leaves all three as they are (Use 128 threads ... ≥ 2 blocks/SM at the same 50 %)
// gains nothing the report can stand behind.
bool BlockSizeGains(const ConfigStats& c, const DeviceProps& d, int new_block, int64_t new_grid,
                    double reachable_now, double reachable_new) {
  const int64_t block = BlockThreads(c);
  auto idle_lanes = [&](int64_t b) { return (d.warp_size - b % d.warp_size) % d.warp_size; };
  return reachable_new > reachable_now + 1e-9 ||
         SmSpread(new_grid, d.num_sms) > SmSpread(GridBlocks(c), d.num_sms) + 1e-9 ||
         (idle_lanes(new_block) == 0 && idle_lanes(block) > 0);
}

// Triton's or Inductor's kernel, or neither.
KernelOriginKind TritonOrigin(const ConfigStats& c) {
  KernelFacts facts;
  facts.mangled = c.mangled_name;
  facts.demangled = c.name;
  facts.has_triton_metadata = c.triton_num_warps >= 0;
  const std::string loader = LoaderLabel(c.loader), library = LoaderLabel(c.module_library);
  facts.loader = loader;
  facts.module_library = library;
  const KernelOriginKind kind = ClassifyKernel(facts).kind;
  return kind == KernelOriginKind::kTriton || kind == KernelOriginKind::kInductor ? kind : KernelOriginKind::kUnknown;
}

// Triton launches 32 x num_warps threads per program over a grid of cdiv(n, XBLOCK) programs:
// num_warps changes the threads per program and never the grid, so the model's block sizes are
// read at the recorded grid (not at the same total threads, as for CUDA C++). The num_warps
// (a power of two) whose occupancy the grid reaches best, if it reaches more than now; none while
// the whole grid is resident at once, where occupancy cannot matter (XBLOCK sets the grid: the
// grid-size advice covers it). Of equal reach, the smallest change of num_warps.
std::optional<Suggestion> TritonNumWarps(const ConfigStats& c, const DeviceProps& d, const LaunchAdvice& advice,
                                         KernelOriginKind kind, double reachable_now) {
  const OccupancyResult& r = advice.occupancy;
  const int64_t grid = GridBlocks(c);
  if (grid <= int64_t{r.active_blocks_per_sm} * d.num_sms || d.warp_size <= 0) return std::nullopt;
  const BlockSizeCandidate* chosen = nullptr;
  double chosen_reach = reachable_now;
  double chosen_step = 0;
  const double warps_now = static_cast<double>(BlockThreads(c)) / d.warp_size;
  for (const BlockSizeCandidate& k : advice.block_size.ranked) {
    const int warps = k.block_size / d.warp_size;
    if (k.block_size % d.warp_size != 0 || (warps & (warps - 1)) != 0 || k.block_size == BlockThreads(c)) continue;
    const double reach = ReachableOccupancyPct(grid, k.active_blocks_per_sm, warps, d.num_sms, r.max_warps_per_sm);
    const double step = std::fabs(std::log2(warps / warps_now));
    if (reach > chosen_reach + 1e-9 ||
        (chosen != nullptr && reach > chosen_reach - 1e-9 &&
         (step < chosen_step || (step == chosen_step && k.block_size < chosen->block_size)))) {
      chosen = &k;
      chosen_reach = reach;
      chosen_step = step;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  const int warps = chosen->block_size / d.warp_size;
  const Waves now = ComputeWaves(grid, r.active_blocks_per_sm, d.num_sms);
  const Waves then = ComputeWaves(grid, chosen->active_blocks_per_sm, d.num_sms);
  // Inductor names the block of elements a program covers XBLOCK; hand-written kernels BLOCK_SIZE.
  const std::string grid_rule = kind == KernelOriginKind::kInductor ? "cdiv(n, XBLOCK)" : "cdiv(n, BLOCK_SIZE)";
  Suggestion s;
  s.kind = "block_size";
  s.block_size = chosen->block_size;
  s.predicted_occupancy_pct = chosen->occupancy_pct;
  s.predicted_blocks_per_sm = chosen->active_blocks_per_sm;
  s.predicted_waves_per_sm = then.waves_per_sm;
  s.text = "Use num_warps=" + std::to_string(warps) + " (" + std::to_string(chosen->block_size) +
           " threads per program; the grid stays " + std::to_string(grid) +
           " programs, as " + grid_rule + " does not depend on num_warps): theoretical occupancy " +
           Pct(r.theoretical_occupancy_pct) + " → " + Pct(chosen->occupancy_pct) +
           (chosen->active_blocks_per_sm != r.active_blocks_per_sm
                ? ", waves " + Fixed(now.waves_per_sm, 2) + " → " + Fixed(then.waves_per_sm, 2)
                : std::string());
  s.assumptions = "Triton's launch: 32 × num_warps threads per program, grid = " + grid_rule + " programs unchanged; " +
                  std::to_string(c.registers_per_thread) + " registers/thread and " +
                  FormatBytes(c.static_smem + c.dynamic_smem) +
                  " of shared memory per program unchanged (the compiler may allocate otherwise at another num_warps)";
  return s;
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
  const KernelOriginKind triton_kind = TritonOrigin(c);
  const bool triton = triton_kind != KernelOriginKind::kUnknown;
  // Triton: the model's block size (same total threads) is not a launch Triton can make; its
  // num_warps at the recorded grid takes that place.
  std::vector<Suggestion> suggestions;
  for (const auto& s : advice.suggestions) {
    if (s.kind != "block_size" || !triton) suggestions.push_back(s);
  }
  if (triton) {
    if (auto num_warps = TritonNumWarps(c, device, advice, triton_kind, reachable_now)) {
      suggestions.push_back(*num_warps);
      // In the model's order (advice.cc): highest predicted occupancy first, the grid size last.
      std::stable_sort(suggestions.begin(), suggestions.end(), [](const Suggestion& x, const Suggestion& y) {
        if ((x.kind == "grid_size") != (y.kind == "grid_size")) return y.kind == "grid_size";
        return x.predicted_occupancy_pct > y.predicted_occupancy_pct;
      });
    }
  }
  for (const auto& s : suggestions) {
    if (!ChangesSomething(s, c, r)) continue;
    double reachable = reachable_now;
    bool keep = true;
    if (s.kind == "block_size" && s.block_size > 0) {
      const int64_t warps = (s.block_size + device.warp_size - 1) / device.warp_size;
      const int64_t new_grid = triton ? grid : (work + s.block_size - 1) / s.block_size;
      reachable = ReachableOccupancyPct(new_grid, s.predicted_blocks_per_sm, warps, device.num_sms,
                                        r.max_warps_per_sm);
      // A new block size may trade occupancy for SM balance, never lose occupancy for nothing,
      // and must gain something.
      keep = (s.predicted_occupancy_pct >= r.theoretical_occupancy_pct || reachable > reachable_now) &&
             BlockSizeGains(c, device, s.block_size, new_grid, reachable_now, reachable);
    } else if (s.kind != "grid_size") {
      reachable = ReachableOccupancyPct(grid, s.predicted_blocks_per_sm, r.warps_per_block,
                                        device.num_sms, r.max_warps_per_sm);
      keep = reachable > reachable_now + 1e-9;
    }
    if (!keep) continue;
    occtrace::Suggestion* added = out.add_suggestions();
    ToProto(s, added);
    if (s.kind == "block_size" && !triton) ShapeBlockSuggestion(c, device.num_sms, added);
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
