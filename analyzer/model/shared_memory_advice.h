// Shared-memory advice: each higher block count per SM that using less shared memory per block
// reaches (with the carveout it needs), the bytes to spare without losing a block, and whether
// a carveout preference rather than the hardware holds occupancy down.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/occupancy.h"
#include "base/status.h"
#include "analyzer/model/suggestion.h"

namespace occ {

struct SharedMemStep {
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
  int max_user_smem_per_block = 0;    // static + dynamic bytes (the driver reserve subtracted)
  int carveout_bytes = 0;             // smallest supported carveout holding that many blocks
};
struct SharedMemAdvice {
  int user_smem_per_block = 0;        // static + dynamic
  int allocated_smem_per_block = 0;   // with reserve and granularity
  int active_blocks_per_sm = 0;
  std::vector<SharedMemStep> steps;   // each higher block count reachable by using less smem
  int headroom_bytes = 0;             // user smem per block that can be added without losing a block
  bool carveout_preference_caps = false;  // a requested carveout, not the hardware, limits
  std::optional<Suggestion> suggestion;
  std::string verdict;
};
StatusOr<SharedMemAdvice> AdviseSharedMemory(const DeviceProps& device, const LaunchParams& launch);

}  // namespace occ
