#include "analyzer/model/limiter_words.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/message_text.h"

namespace occ {

uint32_t RealLimiters(const OccupancyResult& r) {
  const std::pair<uint32_t, int> limits[] = {
      {kLimitWarps, r.block_limit_warps},       {kLimitRegisters, r.block_limit_registers},
      {kLimitSharedMemory, r.block_limit_shared_mem}, {kLimitBlocks, r.block_limit_blocks},
      {kLimitBarriers, r.block_limit_barriers}, {kLimitVirtual, r.block_limit_virtual}};
  int lowest = kNoLimit;
  for (const auto& [bit, value] : limits) lowest = std::min(lowest, value);
  uint32_t bits = 0;
  for (const auto& [bit, value] : limits) {
    if (value == lowest) bits |= bit;
  }
  return bits;
}

std::string PrimaryLimiter(const OccupancyResult& r) {
  if (r.active_blocks_per_sm == 0) return "cannot_run";
  if (r.active_warps_per_sm >= r.max_warps_per_sm) return "none";
  const uint32_t bits = RealLimiters(r);
  // Ties: the hardware's fixed caps first. When the blocks-per-SM or warp limit allows no more
  // blocks than registers or shared memory do, freeing those resources gains nothing (e.g. a
  // 1-thread kernel in a 32 KiB executed carveout: 32 blocks by shared memory and by the SM).
  const std::pair<uint32_t, const char*> order[] = {
      {kLimitBlocks, "blocks"},       {kLimitWarps, "warps"},
      {kLimitRegisters, "registers"}, {kLimitSharedMemory, "shared_memory"},
      {kLimitBarriers, "barriers"},   {kLimitVirtual, "virtual"}};
  for (const auto& [bit, name] : order) {
    if ((bits & bit) != 0) return name;
  }
  return "none";
}

namespace {

std::string LimiterDetail(uint32_t bit, const DeviceProps& d, const LaunchParams& l,
                          const OccupancyResult& r, const ArchConstants* arch) {
  const std::string arrow = " → " + BlocksPerSm(r.active_blocks_per_sm);
  switch (bit) {
    case kLimitRegisters:
      return std::to_string(l.regs_per_thread) + " regs/thread" +
             (r.allocated_registers_per_thread != l.regs_per_thread
                  ? " (" + std::to_string(r.allocated_registers_per_thread) + " allocated)"
                  : std::string()) +
             " × " + std::to_string(l.block_threads) + " threads" + arrow;
    case kLimitSharedMemory:
      return FormatBytes(r.allocated_shared_mem_per_block) + " shared memory/block" +
             (d.reserved_smem_per_block > 0
                  ? " (incl. " + FormatBytes(d.reserved_smem_per_block) + " driver reserve)"
                  : std::string()) +
             " in a " + FormatBytes(r.shared_mem_config_bytes) + " carveout" + arrow;
    case kLimitWarps:
      return std::to_string(r.warps_per_block) + " warps/block (" +
             std::to_string(l.block_threads) + " threads) of " +
             std::to_string(r.max_warps_per_sm) + " warps/SM" + arrow;
    case kLimitBlocks:
      return "at most " + std::to_string(r.block_limit_blocks) + " blocks/SM on " +
             CcLabel(d.cc_major, d.cc_minor) + ", × " + std::to_string(r.warps_per_block) +
             " warps/block";
    case kLimitBarriers:
      return std::to_string(l.num_block_barriers) + " named barriers/block from a pool of " +
             std::to_string(arch != nullptr ? r.block_limit_blocks * arch->barriers_per_block_slot
                                            : 0) +
             arrow;
    case kLimitVirtual:
      return std::to_string(l.virtual_resource_count) + " virtual resources/block of " +
             std::to_string(arch != nullptr ? arch->virtual_resources_per_sm : 0) + arrow;
    default: return "";
  }
}

const char* LimiterWords(uint32_t bit) {
  switch (bit) {
    case kLimitRegisters: return "registers";
    case kLimitSharedMemory: return "shared memory";
    case kLimitWarps: return "warps";
    case kLimitBlocks: return "the blocks-per-SM limit";
    case kLimitBarriers: return "named barriers";
    case kLimitVirtual: return "virtual resources";
    default: return "?";
  }
}

// Why a resource admits no block at all.
std::string CannotRunReason(uint32_t bit, const DeviceProps& d, const LaunchParams& l,
                            const OccupancyResult& r) {
  switch (bit) {
    case kLimitRegisters:
      return std::to_string(l.regs_per_thread) + " regs/thread × " +
             std::to_string(l.block_threads) + " threads needs " +
             std::to_string(r.allocated_registers_per_block) + " registers (" +
             std::to_string(r.allocated_registers_per_thread) + " allocated/thread), more than the " +
             std::to_string(d.regs_per_block) + " a block may use";
    case kLimitSharedMemory:
      return FormatBytes(r.allocated_shared_mem_per_block) +
             " of shared memory per block exceeds the per-block limit";
    case kLimitWarps:
      return std::to_string(l.block_threads) + " threads exceed the device's " +
             std::to_string(d.max_threads_per_block) + " threads per block";
    default: return LimiterWords(bit);
  }
}

constexpr uint32_t kOrderedBits[] = {kLimitRegisters, kLimitSharedMemory, kLimitBarriers,
                                     kLimitWarps,     kLimitBlocks,       kLimitVirtual};

}  // namespace

std::string LimiterSentence(const DeviceProps& d, const LaunchParams& l, const OccupancyResult& r) {
  const ArchConstants* arch = nullptr;
  if (auto found = FindArchConstants(d.cc_major, d.cc_minor); found.ok()) arch = *found;
  const uint32_t bits = RealLimiters(r);
  if (r.active_blocks_per_sm == 0) {
    std::string s = "cannot run: ";
    bool first = true;
    for (uint32_t bit : kOrderedBits) {
      if ((bits & bit) == 0) continue;
      s += (first ? "" : "; ") + CannotRunReason(bit, d, l, r);
      first = false;
    }
    return s;
  }
  if (r.active_warps_per_sm >= r.max_warps_per_sm) {
    return "full occupancy: " + BlocksPerSm(r.active_blocks_per_sm) + " × " +
           std::to_string(r.warps_per_block) + " warps = " + std::to_string(r.active_warps_per_sm) +
           " of " + std::to_string(r.max_warps_per_sm) + " warps/SM";
  }
  std::vector<uint32_t> present;
  for (uint32_t bit : kOrderedBits) {
    if ((bits & bit) != 0) present.push_back(bit);
  }
  std::string names, details;
  for (size_t i = 0; i < present.size(); ++i) {
    if (i > 0) names += (i + 1 == present.size()) ? " and " : ", ";
    names += LimiterWords(present[i]);
    if (i > 0) details += "; ";
    details += LimiterDetail(present[i], d, l, r, arch);
  }
  return "limited by " + names + ": " + details + " (of " + std::to_string(r.block_limit_blocks) +
         ")";
}

}  // namespace occ
