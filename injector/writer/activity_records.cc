#include "injector/writer/activity_records.h"

namespace occ::inj {

size_t ForEachActivity(uint8_t* buffer, size_t valid_size,
                       const std::function<void(const CUpti_Activity&)>& fn) {
  size_t count = 0;
  CUpti_Activity* record = nullptr;
  // Any status other than SUCCESS ends the walk: MAX_LIMIT_REACHED is the normal end,
  // INVALID_KIND a record this CUPTI cannot size (nothing after it is readable).
  while (valid_size > 0 && cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    fn(*record);
    ++count;
  }
  return count;
}

size_t KernelConfigKeyHash::operator()(const KernelConfigKey& key) const {
  uint64_t words[sizeof(KernelConfigKey) / 8];
  std::memcpy(words, &key, sizeof(words));
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (uint64_t w : words) {
    h ^= w;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return static_cast<size_t>(h);
}

KernelConfigKey MakeKernelConfigKey(const ActivityKernel& kernel) {
  KernelConfigKey key;
  key.graph_node_id = kernel.graphNodeId;
  key.local_memory_total = kernel.localMemoryTotal_v2;
  key.device_id = kernel.deviceId;
  key.context_id = kernel.contextId;
  key.launch_type = kernel.launchType;
  key.cache_config = kernel.cacheConfig.config.requested;
  key.registers_per_thread = kernel.registersPerThread;
  key.grid[0] = kernel.gridX;
  key.grid[1] = kernel.gridY;
  key.grid[2] = kernel.gridZ;
  key.block[0] = kernel.blockX;
  key.block[1] = kernel.blockY;
  key.block[2] = kernel.blockZ;
  key.static_shared_memory = kernel.staticSharedMemory;
  key.dynamic_shared_memory = kernel.dynamicSharedMemory;
  key.local_memory_per_thread = kernel.localMemoryPerThread;
  key.shared_memory_executed = kernel.sharedMemoryExecuted;
  key.shared_memory_limit_config = static_cast<int32_t>(kernel.shmemLimitConfig);
  key.shared_memory_requested_pct =
      kernel.isSharedMemoryCarveoutRequested != 0 ? kernel.sharedMemoryCarveoutRequested : -1;
  key.graph_id = kernel.graphId;
  key.cluster[0] = kernel.clusterX;
  key.cluster[1] = kernel.clusterY;
  key.cluster[2] = kernel.clusterZ;
  key.cluster_scheduling_policy = kernel.clusterSchedulingPolicy;
  key.max_potential_cluster_size = kernel.maxPotentialClusterSize;
  key.max_active_clusters = kernel.maxActiveClusters;
  key.is_device_launched = kernel.isDeviceLaunched;
  return key;
}

}  // namespace occ::inj
