// What "the same function" means wherever launches of one function are compared or folded:
// the measured-faster configurations (measured_evidence.h) and one action per function
// (run_figures.h). Kept here alone so that the definition changes in one place.
//
// A function is one compiled piece of code on one device: the same mangled name compiled with
// other registers, static shared memory or local memory per thread is other code (XLA's
// autotuning variants, Triton's configs, #29), never compared with it.
#pragma once

#include <string>
#include <tuple>

#include "schema/report.pb.h"

namespace occ {

struct FunctionKey {
  std::string mangled_name;
  int device_id = 0;
  int registers_per_thread = 0;
  int static_shared_mem = 0;
  int local_mem_per_thread = 0;

  auto Tie() const {
    return std::tie(mangled_name, device_id, registers_per_thread, static_shared_mem, local_mem_per_thread);
  }
  bool operator<(const FunctionKey& o) const { return Tie() < o.Tie(); }
  bool operator==(const FunctionKey& o) const { return Tie() == o.Tie(); }
  // Stable text for reports (Action.function_key): "name@device/regs/smem/lmem".
  std::string Text() const {
    return mangled_name + "@" + std::to_string(device_id) + "/" + std::to_string(registers_per_thread) + "r/" +
           std::to_string(static_shared_mem) + "s/" + std::to_string(local_mem_per_thread) + "l";
  }
};

// Traces without mangled names (torch.profiler's) name a function by its name: an empty
// mangled name would make every kernel with the same registers "one function", and one
// kernel's speed a measured alternative of another's.
inline FunctionKey FunctionKeyOf(const occtrace::KernelGroup& g) {
  return {g.mangled_name().empty() ? g.name() : g.mangled_name(), g.device_id(), g.registers_per_thread(),
          g.static_shared_mem(), g.local_mem_per_thread()};
}

}  // namespace occ
