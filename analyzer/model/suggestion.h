// What every advisor (block_size_advice.h, register_advice.h, shared_memory_advice.h, advice.h)
// gives, and its proto form for reports and calc JSON.
#pragma once

#include <string>

namespace occtrace {
class Suggestion;
}

namespace occ {

// A suggestion, with what it predicts and assumes (mirrors occtrace.Suggestion in report.proto).
struct Suggestion {
  std::string kind;                   // "block_size", "register_cap", "shared_memory", "barriers", "grid_size"
  std::string text;                   // one sentence with the numbers
  double predicted_occupancy_pct = 0;
  int predicted_blocks_per_sm = 0;
  double predicted_waves_per_sm = 0;  // 0 when the grid is unknown
  int block_size = 0;                 // block_size / grid_size suggestions
  int registers_per_thread = 0;       // register_cap suggestions: the cap
  int shared_mem_per_block = 0;       // shared_memory suggestions: user bytes per block (static + dynamic)
  std::string assumptions;
};

// The same suggestion as the occtrace.Suggestion message that reports and calc JSON carry.
void ToProto(const Suggestion& suggestion, occtrace::Suggestion* out);

}  // namespace occ
