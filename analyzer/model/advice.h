// Launch-configuration advice on top of the occupancy model, all at once for calc and the judge:
// the occupancy, the limiter in words (limiter_words.h), waves (waves.h), the block size
// (block_size_advice.h), the register cap (register_advice.h) and the shared-memory budget
// (shared_memory_advice.h) that reach the next occupancy step, fewer named barriers, a larger
// grid, and the caveats. occupancy_curves.h has the curves. Formulas: docs/occupancy.md
// ("Advice") and occupancy-model.md §10. Every result states what it assumes; no advice ever
// echoes the current configuration (it says "no better option" instead). A grid that fits in
// one wave gets no advice to fit more blocks per SM: every block is resident at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/block_size_advice.h"
#include "analyzer/model/occupancy.h"
#include "analyzer/model/register_advice.h"
#include "analyzer/model/shared_memory_advice.h"
#include "base/status.h"
#include "analyzer/model/suggestion.h"
#include "analyzer/model/waves.h"

namespace occ {

struct AdviceInputs {
  int64_t grid_blocks = 0;            // 0 = unknown
  int local_memory_per_thread = 0;    // > 0: spills or stack; register caps get a warning
  bool barrier_count_known = true;    // false: add the "barrier count unknown" note
};
struct LaunchAdvice {
  OccupancyResult occupancy;
  std::string limiter_sentence;
  std::string primary_limiter;
  std::optional<Waves> waves;          // when the grid is known
  BlockSizeAdvice block_size;
  RegisterAdvice registers;
  SharedMemAdvice shared_memory;
  std::vector<Suggestion> suggestions; // best first; never the current configuration
  std::vector<std::string> notes;      // caveats (tail, small grid, unknown barriers, spills)
};
StatusOr<LaunchAdvice> AdviseLaunch(const DeviceProps& device, const LaunchParams& launch,
                                    const AdviceInputs& inputs);

}  // namespace occ
