#include "analyzer/model/what_if_launch.h"

#include <algorithm>
#include <cstdint>

#include "analyzer/model/message_text.h"

namespace occ {

int BlockSizeLimit(const DeviceProps& d, const LaunchParams& l) {
  return std::min(d.max_threads_per_block, l.func_max_threads_per_block);
}

std::string HeldFixed(const LaunchParams& l) {
  return std::to_string(l.regs_per_thread) + " registers/thread and " +
         FormatBytes(static_cast<int64_t>(l.static_smem) + l.dynamic_smem) +
         " of shared memory per block unchanged";
}

LaunchParams WhatIf(const LaunchParams& l) {
  LaunchParams t = l;
  t.executed_smem_config = 0;
  return t;
}

LaunchParams WithUserSmem(const DeviceProps& d, const LaunchParams& l, int user) {
  LaunchParams t = WhatIf(l);
  t.static_smem = std::min(l.static_smem, user);
  t.dynamic_smem = user - t.static_smem;
  if (t.shmem_limit_config == ShmemLimitConfig::kOptIn) {
    t.max_dynamic_smem = std::max(t.max_dynamic_smem, std::max(0, d.smem_per_block_optin - t.static_smem));
  }
  return t;
}

int MaxUserSmem(const DeviceProps& d, const LaunchParams& l, const ArchConstants& arch) {
  if (l.shmem_limit_config == ShmemLimitConfig::kOptIn && arch.configurable_carveout) {
    return std::max(d.smem_per_block, d.smem_per_block_optin);
  }
  return d.smem_per_block;
}

}  // namespace occ
