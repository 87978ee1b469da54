#include "analyzer/model/block_size_advice.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analyzer/model/message_text.h"
#include "analyzer/model/what_if_launch.h"

namespace occ {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How evenly a grid spreads over the SMs: blocks per SM / ceil(blocks per SM). The busiest SM
// runs ceil(grid / SMs) blocks while the average runs grid / SMs, so this is the share of the
// busiest SM's time the average SM is busy (1 = even; 64 blocks on 132 SMs: 0.48).
double SmBalance(int64_t grid_blocks, int num_sms) {
  if (grid_blocks <= 0 || num_sms <= 0) return 0;
  const double per_sm = static_cast<double>(grid_blocks) / num_sms;
  return per_sm / std::ceil(per_sm);
}

// Higher is better, compared lexicographically (docs/occupancy.md, "Block size").
struct BlockScore {
  int runnable = 0;
  double balance = 0;        // SmBalance, 1 when >= 0.9 (grid known)
  double occupancy = 0;
  int wave_ok = 0;           // >= 4 waves or wave efficiency >= 0.9; 1 below one wave (grid known)
  double no_waste = 0;       // 100 - warp waste %
  int two_blocks = 0;        // >= 2 resident blocks hide __syncthreads() stalls
  auto Key() const { return std::make_tuple(runnable, balance, occupancy, wave_ok, no_waste, two_blocks); }
};

BlockScore Score(const BlockSizeCandidate& c, int num_sms, bool grid_known) {
  BlockScore s;
  s.runnable = c.active_blocks_per_sm > 0 ? 1 : 0;
  s.occupancy = c.occupancy_pct;
  s.no_waste = std::round((100.0 - c.warp_waste_pct) * 100.0) / 100.0;
  s.two_blocks = c.active_blocks_per_sm >= 2 ? 1 : 0;
  if (grid_known && s.runnable) {
    const double balance = SmBalance(c.grid_blocks, num_sms);
    s.balance = balance >= 0.9 ? 1.0 : std::round(balance * 100.0) / 100.0;
    // Below one wave every block is resident at once: the balance above is what counts.
    s.wave_ok = (c.waves.waves_per_sm < 1.0 || c.waves.waves_per_sm >= 4.0 ||
                 c.waves.wave_efficiency >= 0.9)
                    ? 1
                    : 0;
  }
  return s;
}

BlockSizeCandidate Candidate(const DeviceProps& d, const OccupancyResult& r, int b,
                             int64_t total_threads, int64_t grid_blocks_if_unknown) {
  BlockSizeCandidate c;
  c.block_size = b;
  c.grid_blocks = total_threads > 0 ? CeilDiv(total_threads, b) : grid_blocks_if_unknown;
  c.active_blocks_per_sm = r.active_blocks_per_sm;
  c.occupancy_pct = r.theoretical_occupancy_pct;
  c.limiting_factors = r.limiting_factors;
  c.waves = ComputeWaves(c.grid_blocks, r.active_blocks_per_sm, d.num_sms);
  const double lanes = static_cast<double>(d.warp_size) * static_cast<double>(CeilDiv(b, d.warp_size));
  c.warp_waste_pct = 100.0 * (1.0 - b / lanes);
  return c;
}

// Every block size from one warp up to the limit, in warp steps, and the current one.
StatusOr<std::vector<BlockSizeCandidate>> Candidates(const DeviceProps& d, const LaunchParams& l,
                                                     bool grid_known, int64_t total_threads,
                                                     const BlockSizeCandidate& current) {
  std::vector<BlockSizeCandidate> all;
  LaunchParams t = WhatIf(l);
  bool current_listed = false;
  for (int b = d.warp_size; b <= BlockSizeLimit(d, l); b += d.warp_size) {
    // A block larger than all the work (e.g. grid 1 x block 1) only adds idle lanes.
    if (grid_known && b > total_threads && b != l.block_threads) continue;
    t.block_threads = b;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, t));
    all.push_back(b == l.block_threads ? current : Candidate(d, r, b, total_threads, 0));
    current_listed = current_listed || b == l.block_threads;
  }
  if (!current_listed) all.push_back(current);
  return all;
}

// Whether `x` ranks above `y`: by score, then Nsight Compute's "128-256 threads as a start",
// then the smaller block (more blocks balance better).
bool RanksAbove(const BlockSizeCandidate& x, const BlockSizeCandidate& y, int num_sms, bool grid_known) {
  auto kx = Score(x, num_sms, grid_known).Key();
  auto ky = Score(y, num_sms, grid_known).Key();
  if (kx != ky) return kx > ky;
  auto off_range = [](int b) { return b < 128 ? 128 - b : (b > 256 ? b - 256 : 0); };
  if (off_range(x.block_size) != off_range(y.block_size)) {
    return off_range(x.block_size) < off_range(y.block_size);
  }
  return x.block_size < y.block_size;
}

// Every block of the grid is resident at once: the occupancy limit is never reached.
bool FitsOneWave(const BlockSizeCandidate& c) {
  return c.active_blocks_per_sm > 0 && c.waves.blocks_per_wave > 0 && c.grid_blocks <= c.waves.blocks_per_wave;
}

// What `best` gains over `current`, in the order the score weighs it: "busy SMs 64 → 132 of
// 132, theoretical occupancy 50% → 100%, ...". Where both grids fit in one wave, occupancy,
// waves and blocks per SM cannot matter (every block is resident anyway) and are not named;
// empty when nothing else is gained.
std::string Gains(const DeviceProps& d, const BlockSizeCandidate& best,
                  const BlockSizeCandidate& current, bool grid_known) {
  const bool resident_anyway = grid_known && FitsOneWave(best) && FitsOneWave(current);
  std::string why;
  auto add = [&why](const std::string& part) { why += (why.empty() ? "" : ", ") + part; };
  const BlockScore bs = Score(best, d.num_sms, grid_known);
  const BlockScore cs = Score(current, d.num_sms, grid_known);
  auto busy_sms = [&](const BlockSizeCandidate& c) {
    return c.active_blocks_per_sm > 0 ? std::min<int64_t>(c.grid_blocks, d.num_sms) : 0;
  };
  if (bs.balance > cs.balance && busy_sms(current) > 0) {
    // Fewer busy SMs can come with a better balance (e.g. 132 -> 124 SMs, each one full); only
    // a rise is worth naming as a gain.
    if (busy_sms(best) > busy_sms(current)) {
      add("busy SMs " + std::to_string(busy_sms(current)) + " → " +
          std::to_string(busy_sms(best)) + " of " + std::to_string(d.num_sms));
    }
    add("SM load balance " + Pct(100.0 * SmBalance(current.grid_blocks, d.num_sms)) + " → " +
        Pct(100.0 * SmBalance(best.grid_blocks, d.num_sms)));
  }
  if (best.occupancy_pct != current.occupancy_pct && !resident_anyway) {
    add("theoretical occupancy " + Pct(current.occupancy_pct) + " → " + Pct(best.occupancy_pct));
  }
  if (grid_known && current.active_blocks_per_sm > 0 && !resident_anyway &&
      std::fabs(best.waves.waves_per_sm - current.waves.waves_per_sm) >= 0.005) {
    add("waves " + Fixed(current.waves.waves_per_sm, 2) + " → " + Fixed(best.waves.waves_per_sm, 2));
  }
  if (best.warp_waste_pct < current.warp_waste_pct) {
    add("idle lanes " + Pct(current.warp_waste_pct) + " → " + Pct(best.warp_waste_pct));
  }
  if (bs.two_blocks > cs.two_blocks && !resident_anyway) add("≥ 2 blocks/SM");
  return why;
}

}  // namespace

StatusOr<BlockSizeAdvice> AdviseBlockSize(const DeviceProps& d, const LaunchParams& l,
                                          int64_t grid_blocks) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  const bool grid_known = grid_blocks > 0;
  const int64_t total_threads = grid_known ? grid_blocks * l.block_threads : 0;
  BlockSizeAdvice advice;
  advice.assumptions =
      (grid_known ? "same total work: " + std::to_string(total_threads) +
                        " threads (grid × block, one per work item), grid = ceil(work / block); "
                  : std::string("grid unknown: ranked by occupancy and warp use only; ")) +
      HeldFixed(l) + "; the kernel must accept the new block size (indexing, __launch_bounds__)";
  advice.current = Candidate(d, current, l.block_threads, total_threads, 0);
  if (grid_known) advice.current.grid_blocks = grid_blocks;
  advice.current.waves = ComputeWaves(advice.current.grid_blocks, current.active_blocks_per_sm, d.num_sms);

  OCC_ASSIGN_OR_RETURN(std::vector<BlockSizeCandidate> all,
                       Candidates(d, l, grid_known, total_threads, advice.current));
  std::stable_sort(all.begin(), all.end(), [&](const BlockSizeCandidate& x, const BlockSizeCandidate& y) {
    return RanksAbove(x, y, d.num_sms, grid_known);
  });
  advice.ranked = all;

  const BlockSizeCandidate& best = all.front();
  const auto best_key = Score(best, d.num_sms, grid_known).Key();
  const auto current_key = Score(advice.current, d.num_sms, grid_known).Key();
  const std::string gains = Gains(d, best, advice.current, grid_known);
  if (best.block_size == l.block_threads || !(best_key > current_key) || gains.empty()) {
    advice.verdict = "no better option: " + std::to_string(l.block_threads) +
                     " threads per block is already among the best block sizes (" +
                     Pct(current.theoretical_occupancy_pct) + " theoretical occupancy" +
                     (grid_known ? ", " + Fixed(advice.current.waves.waves_per_sm, 2) + " waves"
                                 : std::string()) +
                     ")";
    return advice;
  }
  Suggestion s;
  s.kind = "block_size";
  s.block_size = best.block_size;
  s.predicted_occupancy_pct = best.occupancy_pct;
  s.predicted_blocks_per_sm = best.active_blocks_per_sm;
  s.predicted_waves_per_sm = grid_known ? best.waves.waves_per_sm : 0;
  s.assumptions = advice.assumptions;
  s.text = "Use " + std::to_string(best.block_size) + " threads per block" +
           (grid_known ? " (grid " + std::to_string(best.grid_blocks) + ")" : std::string()) +
           ": " + gains;
  advice.verdict = s.text;
  advice.suggestion = s;
  return advice;
}

}  // namespace occ
