// The theoretical occupancy model: a bit-exact port of NVIDIA's cuda_occupancy.h (CUDA 13.0)
// extended with what a trace knows and the header does not (executed carveout, clusters), plus
// Nsight Compute's display variants. Pure C++: no CUDA needed. See docs/occupancy.md.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analyzer/model/device_props.h"
#include "base/status.h"

namespace occ {

enum class CacheConfig { kPreferNone = 0, kPreferShared = 1, kPreferL1 = 2, kPreferEqual = 3 };
enum class ShmemLimitConfig { kDefault = 0, kOptIn = 1 };
enum class PartitionedGlobalCaching { kOff = 0, kOn = 1, kOnStrict = 2 };

// One launch (or a hypothetical one). Field meanings follow cudaOccFuncAttributes +
// cudaOccDeviceState + the launch's block and dynamic shared memory.
struct LaunchParams {
  int block_threads = 0;                  // bx * by * bz
  int regs_per_thread = 0;
  int static_smem = 0;                    // bytes
  int dynamic_smem = 0;                   // bytes
  int func_max_threads_per_block = INT_MAX;  // only used by the block-size search
  ShmemLimitConfig shmem_limit_config = ShmemLimitConfig::kDefault;
  int max_dynamic_smem = 0;               // cudaFuncAttributeMaxDynamicSharedMemorySize
  int carveout_pct = -1;                  // requested carveout %, -1 = none requested
  CacheConfig cache_config = CacheConfig::kPreferNone;
  int num_block_barriers = 1;             // named barriers; 0 skips the barrier limit
  PartitionedGlobalCaching gc = PartitionedGlobalCaching::kOff;
  int virtual_resource_count = 0;
  int executed_smem_config = 0;           // bytes the driver configured (CUPTI sharedMemoryExecuted); 0 = unknown
  int cluster_size = 1;                   // blocks per cluster (cx*cy*cz)
};

// Bits as in cudaOccLimitingFactor, reproduced exactly (ties set several bits; BARRIERS is
// added without clearing earlier bits).
enum LimitingFactor : uint32_t {
  kLimitWarps = 0x01,
  kLimitRegisters = 0x02,
  kLimitSharedMemory = 0x04,
  kLimitBlocks = 0x08,
  kLimitBarriers = 0x10,
  kLimitVirtual = 0x20,
};

constexpr int kNoLimit = INT_MAX;

struct OccupancyResult {
  int active_blocks_per_sm = 0;
  int active_warps_per_sm = 0;
  double theoretical_occupancy_pct = 0;   // active warps / max warps per SM * 100
  uint32_t limiting_factors = 0;          // LimitingFactor bits, exactly as cuda_occupancy.h
  int block_limit_warps = 0;
  int block_limit_registers = 0;          // kNoLimit when the kernel uses no registers
  int block_limit_shared_mem = 0;         // kNoLimit when no shared memory is allocated
  int block_limit_blocks = 0;
  int block_limit_barriers = kNoLimit;    // kNoLimit when not applicable
  int block_limit_virtual = kNoLimit;
  int allocated_registers_per_block = 0;
  int allocated_shared_mem_per_block = 0;
  int allocated_registers_per_thread = 0; // ncu's "Registers Per Thread" (allocation-rounded)
  int shared_mem_config_bytes = 0;        // carveout the header assumes for this launch
  // Nsight Compute's display variants (docs/occupancy.md):
  int ncu_block_limit_shared_mem = 0;     // floor(executed carveout / alloc) when executed is known
  int ncu_block_limit_barriers = 0;       // min(barrier limit, block limit SM)
  int warps_per_block = 0;
  int max_warps_per_sm = 0;
  bool partitioned_gc_enabled = false;    // the header's result.partitionedGCConfig != OFF
};

// Returns the occupancy of `launch` on `device`, or InvalidArgument naming the bad value
// (block size 0 or above the device limit, registers > 255, shared memory above the limit...).
// A launch that is valid but cannot be resident (e.g. too many registers per block) is OK with
// active_blocks_per_sm == 0.
StatusOr<OccupancyResult> ComputeOccupancy(const DeviceProps& device, const LaunchParams& launch);

// The header's computation alone, for any input it accepts: no range validation beyond what
// cudaOccMaxActiveBlocksPerMultiprocessor itself checks (it returns InvalidArgument exactly where
// the header returns an error, e.g. block size <= 0 or a carveout above the largest supported
// size). A block larger than the device limit gives 0 blocks, as in the header. The Nsight
// Compute fields are filled too. Used by ComputeOccupancy and the differential test.
StatusOr<OccupancyResult> ComputeOccupancyUnchecked(const DeviceProps& device,
                                                    const LaunchParams& launch);

// Checks `launch` against the device's limits: what ComputeOccupancy rejects.
Status ValidateLaunch(const DeviceProps& device, const LaunchParams& launch);

// cudaOccMaxPotentialOccupancyBlockSize(VariableSMem): the block size (a multiple of the warp
// size, or the function limit) maximising resident threads per SM, ties keeping the larger block,
// and the grid that fills the GPU once. `dynamic_smem_for_block` (may be empty) replaces
// launch.dynamic_smem per block size. No range validation beyond the header's, like
// ComputeOccupancyUnchecked.
struct BlockSizeSearch {
  int block_size = 0;      // 0 if no block size can run
  int min_grid_size = 0;   // active blocks per SM x SMs at that block size
};
StatusOr<BlockSizeSearch> MaxPotentialBlockSize(
    const DeviceProps& device, const LaunchParams& launch,
    const std::function<int(int block_size)>& dynamic_smem_for_block = {});

// cudaOccAvailableDynamicSMemPerBlock: dynamic shared memory per block that still lets
// `num_blocks` blocks of `launch.block_threads` reside. Like the header it does NOT subtract the
// driver reserve per block (feeding the answer back can give fewer blocks on sm_80+); advice
// uses its own budget (advice.h). InvalidArgument where the header returns an error, e.g. when
// `num_blocks` blocks cannot reside even without dynamic shared memory.
StatusOr<int> AvailableDynamicSmemPerBlock(const DeviceProps& device, const LaunchParams& launch,
                                           int num_blocks);

// The kernel's max threads per block as the driver derives it from registers
// (cudaFuncAttributes::maxThreadsPerBlock without __launch_bounds__): the largest block passing
// the hardware register check, i.e. sub-partitions x warp size x
// floor(regs_per_block / (allocated registers per warp x sub-partitions)), capped at the device
// limit. Measured on H100: 65 regs -> 896, 96 -> 640, 100 -> 512, 168 -> 384, 250 -> 256.
StatusOr<int> FunctionMaxThreadsPerBlock(const DeviceProps& device, int regs_per_thread);

// Human-readable names of the bits ("warps", "registers", "shared_memory", "blocks",
// "barriers", "virtual"), in that order.
std::vector<std::string> LimitingFactorNames(uint32_t factors);

}  // namespace occ
