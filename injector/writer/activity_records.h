// CUPTI activity records as occtrace reads them. Records are PACKED_ALIGNMENT structs whose
// layout depends on the CUPTI version compiled against; we cast by `kind` to the version this
// build was compiled with (13.0: Kernel10, Device5, Context3) and read only its fields.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

namespace occ::inj {

using ActivityKernel = CUpti_ActivityKernel10;
using ActivityDevice = CUpti_ActivityDevice5;
using ActivityContext = CUpti_ActivityContext3;

// Calls fn(record) for every record of a completed buffer (cuptiActivityGetNextRecord, which
// needs no GPU). Returns the number of records visited.
size_t ForEachActivity(uint8_t* buffer, size_t valid_size,
                       const std::function<void(const CUpti_Activity&)>& fn);

// Everything of a kernel record that is the same for many launches: one OCC_KERNEL_CONFIG
// row per distinct value. Trivially copyable with no implicit padding, so equality and
// hashing work on the bytes.
struct KernelConfigKey {
  uint64_t graph_node_id = 0;
  uint64_t local_memory_total = 0;
  int64_t mangled_name_id = 0;  // StringIds.id of the mangled name
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  // greenContextId is the kernel's own contextId when that context is green, else NULL. A flag,
  // not a copy of the id: CUPTI's ids are uint32 and green contexts get large ones (an int32
  // copy turned ids >= 2^31 negative, i.e. NULL).
  uint32_t is_green_context = 0;
  int32_t launch_type = 0;
  int32_t cache_config = 0;        // requested CUfunc_cache
  int32_t registers_per_thread = 0;
  int32_t grid[3] = {};
  int32_t block[3] = {};
  int32_t static_shared_memory = 0;
  int32_t dynamic_shared_memory = 0;
  uint32_t local_memory_per_thread = 0;
  uint32_t shared_memory_executed = 0;
  int32_t shared_memory_limit_config = 0;
  int32_t shared_memory_requested_pct = -1;  // -1: no carveout requested (NULL)
  uint32_t graph_id = 0;
  uint32_t cluster[3] = {};
  uint32_t cluster_scheduling_policy = 0;
  uint32_t max_potential_cluster_size = 0;
  uint32_t max_active_clusters = 0;
  uint32_t is_device_launched = 0;

  bool operator==(const KernelConfigKey& other) const {
    return std::memcmp(this, &other, sizeof(*this)) == 0;
  }
};
static_assert(sizeof(KernelConfigKey) == 128, "KernelConfigKey must have no padding");

struct KernelConfigKeyHash {
  size_t operator()(const KernelConfigKey& key) const;
};

// Fills every field except mangled_name_id and is_green_context (the writer's interning and
// its context table).
KernelConfigKey MakeKernelConfigKey(const ActivityKernel& kernel);

}  // namespace occ::inj
