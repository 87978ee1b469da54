// Register-cap advice (__launch_bounds__(B, N) / __maxnreg__ / -maxrregcount): each higher block
// count per SM that capping registers alone reaches, the registers to spare without losing a
// block, and the next step as a Suggestion.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/occupancy.h"
#include "base/status.h"
#include "analyzer/model/suggestion.h"

namespace occ {

// -maxrregcount, said with its reach (%d: the cap). It is a compiler flag for a whole
// translation unit, so advice for a kernel the user did not write drops it
// (measured_evidence.cc, PhraseForOwner).
inline constexpr std::string_view kMaxrregcountReach =
    " (-maxrregcount=%d caps every kernel in the translation unit; prefer __launch_bounds__ on this kernel)";

struct RegisterStep {
  int max_registers_per_thread = 0;   // the largest register count reaching this step
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
};
struct RegisterAdvice {
  int registers_per_thread = 0;
  int allocated_registers_per_thread = 0;
  int active_blocks_per_sm = 0;
  std::vector<RegisterStep> steps;    // each higher block count reachable by capping registers alone
  int headroom_registers = 0;         // registers/thread usable without losing a block (>= current)
  bool spill_warning = false;         // the kernel already uses local memory
  std::optional<Suggestion> suggestion;  // the next step, empty if registers do not limit
  std::string verdict;
};
StatusOr<RegisterAdvice> AdviseRegisterCap(const DeviceProps& device, const LaunchParams& launch,
                                           int local_memory_per_thread);

}  // namespace occ
