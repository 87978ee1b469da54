// Block-size advice: every block size ranked for the same total work (grid x block threads),
// by SM balance, occupancy, waves and idle lanes (docs/occupancy.md, "Block size"), and the
// best one as a Suggestion unless the current block is already among the best.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/occupancy.h"
#include "base/status.h"
#include "analyzer/model/suggestion.h"
#include "analyzer/model/waves.h"

namespace occ {

struct BlockSizeCandidate {
  int block_size = 0;
  int64_t grid_blocks = 0;            // ceil(T / block_size)
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
  uint32_t limiting_factors = 0;
  Waves waves;
  double warp_waste_pct = 0;          // idle lanes: 1 - b / (32 x ceil(b / 32)), in %
};
struct BlockSizeAdvice {
  BlockSizeCandidate current;
  std::vector<BlockSizeCandidate> ranked;  // every candidate, best first (current included)
  std::optional<Suggestion> suggestion;    // empty: no better option than the current block
  std::string verdict;                     // the suggestion's text, or "no better option: ..."
  std::string assumptions;
};
// grid_blocks <= 0: the grid is unknown; candidates are ranked by occupancy and warp waste only.
StatusOr<BlockSizeAdvice> AdviseBlockSize(const DeviceProps& device, const LaunchParams& launch,
                                          int64_t grid_blocks);

}  // namespace occ
