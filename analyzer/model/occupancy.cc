// A port of cudaOccMaxActiveBlocksPerMultiprocessor (cuda_occupancy.h, CUDA 13.0) in which the
// header's per-arch switches are replaced by the architecture table (arch_table.h). The
// differential test (tests/model/occupancy_differential_test.cc) compares both on a million random
// launches: every quirk below is there because the header does it.
#include "analyzer/model/occupancy.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "analyzer/model/arch_table.h"

namespace occ {
namespace {

using i64 = int64_t;

i64 DivideRoundUp(i64 x, i64 y) { return (x + (y - 1)) / y; }
i64 RoundUp(i64 x, i64 y) { return y * DivideRoundUp(x, y); }
int ClampToInt(i64 v) { return v > INT_MAX ? INT_MAX : static_cast<int>(v); }

std::string Bytes(i64 b) { return std::to_string(b) + " B"; }
std::string CcName(const DeviceProps& d) {
  return "sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
}

// cudaOccAlignUpShmemSizeVoltaPlus: the next supported carveout at or above `size`; an error
// above the largest (the header returns CUDA_OCC_ERROR_INVALID_INPUT).
StatusOr<i64> AlignUpCarveout(i64 size, const ArchConstants& arch) {
  if (arch.carveout_sizes.empty()) {
    return InvalidArgument("sm_" + std::to_string(arch.cc_major) + std::to_string(arch.cc_minor) +
                           " has no configurable shared memory carveout");
  }
  for (int supported : arch.carveout_sizes) {
    if (size <= supported) return static_cast<i64>(supported);
  }
  return InvalidArgument("shared memory carveout " + Bytes(size) + " exceeds the largest " +
                         "supported carveout of " + Bytes(arch.carveout_sizes.back()) + " on sm_" +
                         std::to_string(arch.cc_major) + std::to_string(arch.cc_minor));
}

// cudaOccSMemPerMultiprocessor: the shared memory per SM the user's preference asks for.
StatusOr<i64> SmemPreference(const DeviceProps& d, const LaunchParams& l, const ArchConstants& arch) {
  if (!arch.configurable_carveout) {
    // Maxwell and Pascal have dedicated shared memory: the cache config does not matter.
    return static_cast<i64>(d.smem_per_sm);
  }
  // The carveout the driver configured for the launch, when the trace reports it, is the SM's
  // shared memory for that launch, whatever was requested: Nsight Compute's "Block Limit Shared
  // Mem" divides it too. A request (or the cache config) only decides it for a launch not seen.
  if (l.executed_smem_config > 0) return static_cast<i64>(l.executed_smem_config);
  // The carveout (CUDA 9) takes precedence over the older cache config, which maps onto it.
  int pref = l.carveout_pct;
  if (pref < -1 || pref > 100) {
    return InvalidArgument("shared memory carveout " + std::to_string(pref) +
                           "% is outside -1 (none) .. 100");
  }
  if (pref == -1) {
    switch (l.cache_config) {
      case CacheConfig::kPreferL1: pref = 0; break;
      case CacheConfig::kPreferShared: pref = 100; break;
      case CacheConfig::kPreferEqual: pref = 50; break;
      case CacheConfig::kPreferNone: break;
    }
  }
  i64 size = pref == -1 ? d.smem_per_sm : static_cast<i64>(pref) * d.smem_per_sm / 100;
  return AlignUpCarveout(size, arch);
}

struct RegsLimit {
  i64 blocks = 0;
  i64 allocated_per_block = 0;
  i64 allocated_per_warp = 0;
};

// cudaOccMaxBlocksPerSMRegsLimit. `gc` may be switched off, as the hardware does when a block
// does not fit in half an SM (unless ON_STRICT).
RegsLimit RegistersLimit(const DeviceProps& d, const LaunchParams& l, const ArchConstants& arch,
                         int sub_partitions, PartitionedGlobalCaching* gc) {
  RegsLimit r;
  const i64 warps_per_block = DivideRoundUp(l.block_threads, d.warp_size);
  r.allocated_per_warp = RoundUp(static_cast<i64>(l.regs_per_thread) * d.warp_size,
                                 arch.reg_alloc_unit_per_warp);
  r.allocated_per_block = r.allocated_per_warp * warps_per_block;
  // The hardware check assumes every sub-partition receives the block's warps at once, so the
  // warp count is rounded up to the number of sub-partitions.
  const i64 assumed_per_block = r.allocated_per_warp * RoundUp(warps_per_block, sub_partitions);
  if (d.regs_per_block < assumed_per_block || d.regs_per_block < r.allocated_per_block ||
      l.regs_per_thread > arch.max_regs_per_thread) {
    r.blocks = 0;
    return r;
  }
  if (r.allocated_per_warp == 0) {
    r.blocks = kNoLimit;
    return r;
  }
  const i64 warps_per_sub_partition = (d.regs_per_sm / sub_partitions) / r.allocated_per_warp;
  if (*gc != PartitionedGlobalCaching::kOff) {
    // With partitioned global caching a block lives in half an SM.
    const i64 warps_per_half = warps_per_sub_partition * (sub_partitions / 2);
    r.blocks = (warps_per_half / warps_per_block) * 2;
  }
  if (r.blocks == 0 && *gc != PartitionedGlobalCaching::kOnStrict) {
    *gc = PartitionedGlobalCaching::kOff;
    r.blocks = warps_per_sub_partition * sub_partitions / warps_per_block;
  }
  return r;
}

i64 WarpsLimit(const DeviceProps& d, const LaunchParams& l, PartitionedGlobalCaching gc) {
  if (l.block_threads > d.max_threads_per_block) return 0;
  const i64 max_warps = d.max_threads_per_sm / d.warp_size;
  const i64 warps_per_block = DivideRoundUp(l.block_threads, d.warp_size);
  if (gc != PartitionedGlobalCaching::kOff) return (max_warps / 2 / warps_per_block) * 2;
  return max_warps / warps_per_block;
}

struct SmemLimit {
  i64 blocks = 0;
  i64 allocated_per_block = 0;
  i64 sm_capacity = 0;  // the carveout the header divides by
};

// cudaOccMaxBlocksPerSMSmemLimit.
StatusOr<SmemLimit> SharedMemLimit(const DeviceProps& d, const LaunchParams& l,
                                   const ArchConstants& arch) {
  SmemLimit s;
  OCC_ASSIGN_OR_RETURN(const i64 preference, SmemPreference(d, l, arch));
  // The driver reserve is added on every architecture (it is 0 before sm_80).
  const i64 static_smem = static_cast<i64>(l.static_smem) + d.reserved_smem_per_block;
  const i64 total = static_smem + l.dynamic_smem;
  s.allocated_per_block = RoundUp(total, arch.smem_alloc_granularity);
  const i64 max_usage = static_smem + l.max_dynamic_smem;

  const bool optin = l.shmem_limit_config != ShmemLimitConfig::kDefault;
  const bool dynamic_exceeded = optin && l.dynamic_smem > l.max_dynamic_smem;
  // cudaOccSMemPerBlock: the opt-in limit applies only when the function's maximum needs it.
  i64 per_block_limit = d.smem_per_block;
  if (arch.configurable_carveout && optin && max_usage > d.smem_per_block) {
    per_block_limit = d.smem_per_block_optin;
  }
  if (d.cc_major >= 8) per_block_limit += d.reserved_smem_per_block;  // Ampere+: the reserve

  s.sm_capacity = preference;
  if (dynamic_exceeded || s.allocated_per_block > per_block_limit) {
    s.blocks = 0;
    return s;
  }
  // A preference below one block's need is overridden: on Volta+ the carveout grows to the
  // smallest supported size holding one block, earlier GPUs use the whole SM.
  if (preference < s.allocated_per_block) {
    if (arch.configurable_carveout) {
      OCC_ASSIGN_OR_RETURN(s.sm_capacity, AlignUpCarveout(s.allocated_per_block, arch));
    } else {
      s.sm_capacity = d.smem_per_sm;
    }
  }
  s.blocks = s.allocated_per_block > 0 ? s.sm_capacity / s.allocated_per_block : kNoLimit;
  return s;
}

Status CheckDevice(const DeviceProps& d) {
  struct Field { const char* name; int value; };
  const Field fields[] = {{"max_threads_per_block", d.max_threads_per_block},
                          {"max_threads_per_sm", d.max_threads_per_sm},
                          {"regs_per_block", d.regs_per_block},
                          {"regs_per_sm", d.regs_per_sm},
                          {"warp_size", d.warp_size},
                          {"smem_per_block", d.smem_per_block},
                          {"smem_per_sm", d.smem_per_sm},
                          {"num_sms", d.num_sms}};
  for (const Field& f : fields) {
    if (f.value <= 0) {
      return InvalidArgument("device " + CcName(d) + ": " + f.name + " must be positive, got " +
                             std::to_string(f.value));
    }
  }
  if (d.smem_per_block_optin < 0 || d.reserved_smem_per_block < 0) {
    return InvalidArgument("device " + CcName(d) + ": negative shared memory limit");
  }
  return OkStatus();
}

// What cudaOccMaxActiveBlocksPerMultiprocessor and cudaOccInputCheck reject.
Status CheckOccupancyInputs(const DeviceProps& d, const LaunchParams& l) {
  if (l.block_threads <= 0) {
    return InvalidArgument("block size " + std::to_string(l.block_threads) +
                           " is invalid: a block needs at least 1 thread");
  }
  OCC_RETURN_IF_ERROR(CheckDevice(d));
  if (l.func_max_threads_per_block <= 0) {
    return InvalidArgument("the kernel's max threads per block must be positive, got " +
                           std::to_string(l.func_max_threads_per_block));
  }
  if (l.regs_per_thread < 0) {
    return InvalidArgument("registers per thread must be >= 0, got " +
                           std::to_string(l.regs_per_thread));
  }
  if (l.static_smem < 0 || l.dynamic_smem < 0 || l.max_dynamic_smem < 0) {
    return InvalidArgument("shared memory sizes must be >= 0");
  }
  return OkStatus();
}

}  // namespace

StatusOr<OccupancyResult> ComputeOccupancyUnchecked(const DeviceProps& d, const LaunchParams& l) {
  OCC_RETURN_IF_ERROR(CheckOccupancyInputs(d, l));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch_ptr, FindArchConstants(d.cc_major, d.cc_minor));
  const ArchConstants& arch = *arch_ptr;

  PartitionedGlobalCaching gc = arch.partitioned_gc ? l.gc : PartitionedGlobalCaching::kOff;
  RegsLimit regs = RegistersLimit(d, l, arch, arch.sub_partitions, &gc);
  if (arch.recheck_sub_partitions > 0 && regs.blocks != 0) {
    // GP100 has 2 sub-partitions, GP10x 4: what cannot run on GP10x is not reported as runnable
    // on GP100 either (forward compatibility within Pascal).
    PartitionedGlobalCaching gc_recheck = gc;
    RegsLimit recheck = RegistersLimit(d, l, arch, arch.recheck_sub_partitions, &gc_recheck);
    if (recheck.blocks == 0) regs.blocks = 0;
  }
  const i64 warps = WarpsLimit(d, l, gc);
  const i64 blocks = arch.max_blocks_per_sm;
  OCC_ASSIGN_OR_RETURN(const SmemLimit smem, SharedMemLimit(d, l, arch));
  const i64 virt = (arch.virtual_resources_per_sm <= 0 || l.virtual_resource_count <= 0)
                       ? kNoLimit
                       : arch.virtual_resources_per_sm / l.virtual_resource_count;

  i64 limit = std::min({regs.blocks, smem.blocks, warps, blocks, virt});
  uint32_t factors = 0;
  if (limit == warps) factors |= kLimitWarps;
  if (limit == regs.blocks) factors |= kLimitRegisters;
  if (limit == smem.blocks) factors |= kLimitSharedMemory;
  if (limit == blocks) factors |= kLimitBlocks;
  if (limit == virt) factors |= kLimitVirtual;
  // Barriers are applied last and their bit is added without clearing the others, so a launch
  // held by barriers still reports e.g. WARPS (the header's behaviour, measured on H100).
  i64 barriers = kNoLimit;
  if (arch.barrier_limit_applies && l.num_block_barriers > 0) {
    barriers = (blocks * arch.barriers_per_block_slot) / l.num_block_barriers;
    limit = std::min(limit, barriers);
    if (limit == barriers) factors |= kLimitBarriers;
  }

  OccupancyResult r;
  r.active_blocks_per_sm = ClampToInt(limit);
  r.limiting_factors = factors;
  r.block_limit_warps = ClampToInt(warps);
  r.block_limit_registers = ClampToInt(regs.blocks);
  r.block_limit_shared_mem = ClampToInt(smem.blocks);
  r.block_limit_blocks = ClampToInt(blocks);
  r.block_limit_barriers = ClampToInt(barriers);
  r.block_limit_virtual = ClampToInt(virt);
  r.allocated_registers_per_block = ClampToInt(regs.allocated_per_block);
  r.allocated_shared_mem_per_block = ClampToInt(smem.allocated_per_block);
  r.allocated_registers_per_thread = ClampToInt(regs.allocated_per_warp / d.warp_size);
  r.shared_mem_config_bytes = ClampToInt(smem.sm_capacity);
  r.partitioned_gc_enabled = gc != PartitionedGlobalCaching::kOff;
  r.warps_per_block = ClampToInt(DivideRoundUp(l.block_threads, d.warp_size));
  r.max_warps_per_sm = d.max_threads_per_sm / d.warp_size;
  r.active_warps_per_sm = ClampToInt(static_cast<i64>(r.active_blocks_per_sm) * r.warps_per_block);
  r.theoretical_occupancy_pct =
      r.max_warps_per_sm > 0 ? 100.0 * r.active_warps_per_sm / r.max_warps_per_sm : 0.0;

  // Nsight Compute divides the carveout the driver actually configured (CUPTI
  // sharedMemoryExecuted), not the header's maximum, and shows the barrier row capped by the
  // block limit even for kernels without barriers (docs/occupancy.md).
  r.ncu_block_limit_shared_mem = r.block_limit_shared_mem;
  if (l.executed_smem_config > 0 && smem.blocks != 0) {
    r.ncu_block_limit_shared_mem =
        smem.allocated_per_block > 0
            ? ClampToInt(l.executed_smem_config / smem.allocated_per_block)
            : kNoLimit;
  }
  r.ncu_block_limit_barriers = ClampToInt(std::min(barriers, blocks));
  return r;
}

Status ValidateLaunch(const DeviceProps& d, const LaunchParams& l) {
  OCC_RETURN_IF_ERROR(CheckDevice(d));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(d.cc_major, d.cc_minor));
  const std::string on = " on " + CcName(d);
  if (l.block_threads <= 0) {
    return InvalidArgument("block size " + std::to_string(l.block_threads) +
                           " is invalid: a block needs 1 to " +
                           std::to_string(d.max_threads_per_block) + " threads");
  }
  if (l.block_threads > d.max_threads_per_block) {
    return InvalidArgument("block size " + std::to_string(l.block_threads) +
                           " exceeds the device limit of " +
                           std::to_string(d.max_threads_per_block) + " threads per block" + on);
  }
  if (l.func_max_threads_per_block <= 0) {
    return InvalidArgument("the kernel's max threads per block must be positive, got " +
                           std::to_string(l.func_max_threads_per_block));
  }
  if (l.block_threads > l.func_max_threads_per_block) {
    return InvalidArgument("block size " + std::to_string(l.block_threads) +
                           " exceeds the kernel's limit of " +
                           std::to_string(l.func_max_threads_per_block) +
                           " threads per block (__launch_bounds__ or register use)");
  }
  if (l.regs_per_thread < 0 || l.regs_per_thread > 255) {
    return InvalidArgument("registers per thread " + std::to_string(l.regs_per_thread) +
                           " is outside 0..255 (255 is the per-thread maximum)");
  }
  if (l.static_smem < 0 || l.dynamic_smem < 0 || l.max_dynamic_smem < 0) {
    return InvalidArgument("shared memory sizes must be >= 0 (static " +
                           std::to_string(l.static_smem) + ", dynamic " +
                           std::to_string(l.dynamic_smem) + ")");
  }
  if (l.static_smem > d.smem_per_block) {
    return InvalidArgument("static shared memory " + Bytes(l.static_smem) +
                           " exceeds the static limit of " + Bytes(d.smem_per_block) +
                           " per block" + on);
  }
  const i64 user = static_cast<i64>(l.static_smem) + l.dynamic_smem;
  const i64 hardware_max = arch->configurable_carveout
                               ? std::max(d.smem_per_block, d.smem_per_block_optin)
                               : d.smem_per_block;
  if (user > hardware_max) {
    return InvalidArgument("shared memory per block " + Bytes(user) + " (static " +
                           std::to_string(l.static_smem) + " + dynamic " +
                           std::to_string(l.dynamic_smem) + ") exceeds the maximum of " +
                           Bytes(hardware_max) + " per block" + on);
  }
  const bool optin = l.shmem_limit_config == ShmemLimitConfig::kOptIn;
  if (!optin && user > d.smem_per_block) {
    return InvalidArgument("shared memory per block " + Bytes(user) + " exceeds the default limit of " +
                           Bytes(d.smem_per_block) + " without the opt-in " +
                           "(cudaFuncAttributeMaxDynamicSharedMemorySize; --opt-in)");
  }
  if (optin && l.dynamic_smem > l.max_dynamic_smem) {
    return InvalidArgument("dynamic shared memory " + Bytes(l.dynamic_smem) +
                           " exceeds the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize of " +
                           Bytes(l.max_dynamic_smem));
  }
  if (l.carveout_pct < -1 || l.carveout_pct > 100) {
    return InvalidArgument("shared memory carveout " + std::to_string(l.carveout_pct) +
                           "% is outside 0..100 (or -1 for none)");
  }
  if (l.num_block_barriers < 0 || l.num_block_barriers > 16) {
    return InvalidArgument("named barriers per block " + std::to_string(l.num_block_barriers) +
                           " is outside 0..16");
  }
  if (l.virtual_resource_count < 0) {
    return InvalidArgument("virtual resource count must be >= 0, got " +
                           std::to_string(l.virtual_resource_count));
  }
  if (l.executed_smem_config < 0 || l.executed_smem_config > d.smem_per_sm) {
    return InvalidArgument("executed shared memory configuration " +
                           Bytes(l.executed_smem_config) + " is outside 0.." +
                           Bytes(d.smem_per_sm) + on);
  }
  if (l.cluster_size < 1) {
    return InvalidArgument("cluster size must be >= 1, got " + std::to_string(l.cluster_size));
  }
  return OkStatus();
}

StatusOr<OccupancyResult> ComputeOccupancy(const DeviceProps& device, const LaunchParams& launch) {
  OCC_RETURN_IF_ERROR(ValidateLaunch(device, launch));
  return ComputeOccupancyUnchecked(device, launch);
}

std::vector<std::string> LimitingFactorNames(uint32_t factors) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kLimitWarps, "warps"},   {kLimitRegisters, "registers"}, {kLimitSharedMemory, "shared_memory"},
      {kLimitBlocks, "blocks"}, {kLimitBarriers, "barriers"},   {kLimitVirtual, "virtual"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames) {
    if ((factors & bit) != 0) names.emplace_back(name);
  }
  return names;
}

}  // namespace occ

namespace occ {

StatusOr<BlockSizeSearch> MaxPotentialBlockSize(
    const DeviceProps& device, const LaunchParams& launch,
    const std::function<int(int block_size)>& dynamic_smem_for_block) {
  OCC_RETURN_IF_ERROR(CheckDevice(device));
  if (launch.func_max_threads_per_block <= 0 || launch.regs_per_thread < 0) {
    return InvalidArgument("the kernel's max threads per block must be positive and its "
                           "registers per thread >= 0");
  }
  const int occupancy_limit = device.max_threads_per_sm;
  const int granularity = device.warp_size;
  const int block_limit = std::min(device.max_threads_per_block, launch.func_max_threads_per_block);
  const i64 block_limit_aligned = RoundUp(block_limit, granularity);
  BlockSizeSearch best;
  i64 best_threads = 0;
  LaunchParams trial = launch;
  for (i64 aligned = block_limit_aligned; aligned > 0; aligned -= granularity) {
    trial.block_threads = static_cast<int>(std::min<i64>(block_limit, aligned));
    if (dynamic_smem_for_block) trial.dynamic_smem = dynamic_smem_for_block(trial.block_threads);
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(device, trial));
    const i64 threads = static_cast<i64>(trial.block_threads) * r.active_blocks_per_sm;
    // Strictly greater: among equal thread counts the larger block (tried first) wins.
    if (threads > best_threads) {
      best.block_size = trial.block_threads;
      best.min_grid_size = r.active_blocks_per_sm;
      best_threads = threads;
    }
    if (best_threads == occupancy_limit) break;
  }
  best.min_grid_size = ClampToInt(static_cast<i64>(best.min_grid_size) * device.num_sms);
  return best;
}

StatusOr<int> AvailableDynamicSmemPerBlock(const DeviceProps& device, const LaunchParams& launch,
                                           int num_blocks) {
  if (num_blocks <= 0) {
    return InvalidArgument("number of blocks must be positive, got " + std::to_string(num_blocks));
  }
  LaunchParams no_dynamic = launch;
  no_dynamic.dynamic_smem = 0;
  OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(device, no_dynamic));
  if (r.active_blocks_per_sm < num_blocks) {
    return InvalidArgument(std::to_string(num_blocks) + " blocks of " +
                           std::to_string(launch.block_threads) +
                           " threads cannot reside on one SM (at most " +
                           std::to_string(r.active_blocks_per_sm) + ")");
  }
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(device.cc_major, device.cc_minor));
  // cudaOccSMemPerBlock called with the SM size as the function's need: the opt-in limit
  // whenever the function opted in.
  i64 limit_per_block = device.smem_per_block;
  if (arch->configurable_carveout && launch.shmem_limit_config == ShmemLimitConfig::kOptIn &&
      device.smem_per_sm > device.smem_per_block) {
    limit_per_block = device.smem_per_block_optin;
  }
  if (device.cc_major >= 8) limit_per_block += device.reserved_smem_per_block;
  OCC_ASSIGN_OR_RETURN(i64 preference, SmemPreference(device, launch, *arch));
  i64 per_sm = limit_per_block;
  if (num_blocks != 1) {
    if (preference == 0) {
      // A 0 KiB carveout preference counts as the smallest non-zero carveout here.
      OCC_ASSIGN_OR_RETURN(preference, AlignUpCarveout(1, *arch));
    }
    per_sm = preference;
  }
  i64 available = per_sm / num_blocks;
  available = (available / arch->smem_alloc_granularity) * arch->smem_alloc_granularity;
  available = std::min(available, limit_per_block);
  // The header subtracts in size_t: static above the share wraps around and is then capped by
  // the function's maximum dynamic size below.
  const uint64_t after_static =
      static_cast<uint64_t>(available) - static_cast<uint64_t>(launch.static_smem);
  const uint64_t capped = std::min<uint64_t>(after_static, static_cast<uint64_t>(launch.max_dynamic_smem));
  return static_cast<int>(capped);
}

}  // namespace occ

namespace occ {

StatusOr<int> FunctionMaxThreadsPerBlock(const DeviceProps& device, int regs_per_thread) {
  OCC_RETURN_IF_ERROR(CheckDevice(device));
  if (regs_per_thread < 0 || regs_per_thread > 255) {
    return InvalidArgument("registers per thread " + std::to_string(regs_per_thread) +
                           " is outside 0..255");
  }
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(device.cc_major, device.cc_minor));
  const i64 per_warp = RoundUp(static_cast<i64>(regs_per_thread) * device.warp_size,
                               arch->reg_alloc_unit_per_warp);
  if (per_warp == 0) return device.max_threads_per_block;
  const i64 groups = device.regs_per_block / (per_warp * arch->sub_partitions);
  const i64 threads = groups * arch->sub_partitions * device.warp_size;
  return ClampToInt(std::min<i64>(threads, device.max_threads_per_block));
}

}  // namespace occ
