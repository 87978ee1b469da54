// The built-in architecture table (schema/arch_table.textproto, compiled in and parsed once):
// per-compute-capability constants the occupancy model needs, and named GPUs with SM counts.
// Sources and confirmation status are kept per entry; docs/occupancy.md lists them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/device_props.h"
#include "base/status.h"

namespace occ {

// Constants of one compute capability (mirrors occtrace.ArchConstants in schema/arch.proto).
struct ArchConstants {
  int cc_major = 0;
  int cc_minor = 0;
  std::string architecture;            // "Hopper"
  std::string reference_gpu;           // GPU whose SM count "sm_90" alone stands for
  // Device limits (cudaDeviceProp), used to build DeviceProps.
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;
  int regs_per_block = 0;
  int regs_per_sm = 0;
  int smem_per_block = 0;
  int smem_per_block_optin = 0;
  int smem_per_sm = 0;
  int reserved_smem_per_block = 0;
  // Architecture rules (the per-arch switches of cuda_occupancy.h).
  int max_blocks_per_sm = 0;
  int max_regs_per_thread = 0;         // the header's check (255; "256" on cc >= 7)
  int reg_alloc_unit_per_warp = 256;   // registers are allocated per warp in these units
  int sub_partitions = 4;              // warp allocation granularity of the register check
  int recheck_sub_partitions = 0;      // GP100: re-run the register limit with 4 (GP10x); 0 = no
  int smem_alloc_granularity = 0;
  bool configurable_carveout = false;  // cc >= 7: carveout preference and supported sizes
  std::vector<int> carveout_sizes;     // bytes, ascending (0 allowed)
  bool barrier_limit_applies = false;  // cc >= 9: numBlockBarriers limits blocks
  int barriers_per_block_slot = 0;     // pool = max_blocks_per_sm x this
  int virtual_resources_per_sm = 0;
  bool partitioned_gc = false;         // 5.2, 5.3, 6.1, 6.2
  std::vector<std::string> sources;    // "cuda_occupancy.h 13.0", "CUDA Programming Guide 13 Table 30", ...
  std::vector<std::string> unconfirmed;  // names of fields whose value is not confirmed
};

// A named GPU (mirrors occtrace.NamedGpu).
struct NamedGpu {
  std::string name;                    // "NVIDIA H100 SXM"
  std::vector<std::string> aliases;    // "H100", "h100-sxm", ...
  int cc_major = 0;
  int cc_minor = 0;
  int num_sms = 0;
  bool num_sms_confirmed = true;
};

// All entries, in table order. Parsing happens once; a malformed embedded table is a build
// defect and aborts with a message (the table is covered by unit tests).
const std::vector<ArchConstants>& AllArchConstants();
const std::vector<NamedGpu>& AllNamedGpus();

// Constants for a compute capability, or InvalidArgument listing the known ones.
StatusOr<const ArchConstants*> FindArchConstants(int cc_major, int cc_minor);

// DeviceProps for a compute capability from the table. num_sms <= 0 takes the reference GPU's.
StatusOr<DeviceProps> DevicePropsForCc(int cc_major, int cc_minor, int num_sms);

// "H100", "h100-sxm", "NVIDIA H100 80GB HBM3" (case-insensitive, spaces/dashes/underscores
// ignored), or "sm_90" / "9.0" / "90" / "sm90a" -> DeviceProps. Unknown names ->
// InvalidArgument naming the closest known GPUs. num_sms_override > 0 replaces the SM count
// (MIG / green contexts, or a compute capability without a reference GPU such as sm_88).
StatusOr<DeviceProps> LookupGpu(std::string_view name_or_cc, int num_sms_override = 0);

// Fills every zero field of `device` (other than name, cc and num_sms) from the table for its
// compute capability and appends the names of the fields it filled to `defaulted` (may be
// null). InvalidArgument if the compute capability is not in the table.
Status FillMissingDeviceFields(DeviceProps* device, std::vector<std::string>* defaulted);

// "sm_90 (Hopper)" style label.
std::string CcLabel(int cc_major, int cc_minor);

}  // namespace occ
