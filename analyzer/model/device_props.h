// DeviceProps: the device limits the occupancy model (occupancy.h) takes, which the architecture
// table (arch_table.h) and a trace's device rows provide.
#pragma once

#include <string>

namespace occ {

// Device limits the model needs. Filled from a trace's device row or from the built-in
// architecture table (arch_table.h). Field meanings follow cudaOccDeviceProp.
struct DeviceProps {
  std::string name;                  // "NVIDIA H100 80GB HBM3"; informational
  int cc_major = 0;
  int cc_minor = 0;
  int num_sms = 0;
  int warp_size = 32;
  int max_threads_per_block = 1024;  // device limit
  int max_threads_per_sm = 0;
  int regs_per_block = 0;
  int regs_per_sm = 0;
  int smem_per_block = 0;            // default per-block limit (48 KiB)
  int smem_per_block_optin = 0;      // opt-in limit, excludes the reserve (H100: 232448)
  int smem_per_sm = 0;               // maximum carveout (H100: 233472)
  int reserved_smem_per_block = 0;   // driver reserve per block (1024 on cc >= 8.0)
};

}  // namespace occ
