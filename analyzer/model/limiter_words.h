// What limits a launch's occupancy, as a bit set, as one name for grouping and as the sentence
// reports and calc print. Takes the occupancy model's result for a launch.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/model/occupancy.h"

namespace occ {

// The limiters recomputed from the block limits (the minimum, ties included; barriers only when
// they bind), unlike the header's bitfield, which keeps WARPS when barriers lower the result.
uint32_t RealLimiters(const OccupancyResult& result);
// One name for grouping ("registers", "shared_memory", "warps", "blocks", "barriers",
// "virtual", "none" at 100 %, "cannot_run"). Ties name the hardware's fixed caps first: blocks,
// warps, then registers, shared_memory, barriers, virtual.
std::string PrimaryLimiter(const OccupancyResult& result);
// "limited by registers: 44 regs/thread x 256 threads -> 5 blocks/SM (of 32)"; ties joined
// with "and"; "cannot run: ..." when no block fits.
std::string LimiterSentence(const DeviceProps& device, const LaunchParams& launch,
                            const OccupancyResult& result);

}  // namespace occ
