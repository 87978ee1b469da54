// ConfigStats arithmetic shared by the read stage (partial scans of one file) and the group
// stage (configurations of several files): trace_rows.h.
#include "analyzer/read/trace_rows.h"

#include <sstream>

#include "analyzer/model/message_text.h"

namespace occ {

std::string KinetoKey(int64_t device, const std::string& name, const int64_t* grid,
                      const int64_t* block, int64_t registers, int64_t smem) {
  std::string key = std::to_string(device) + '|' + name;
  for (int i = 0; i < 3; ++i) key += '|' + std::to_string(grid[i]);
  for (int i = 0; i < 3; ++i) key += '|' + std::to_string(block[i]);
  return key + '|' + std::to_string(registers) + '|' + std::to_string(smem);
}

void MergeInto(ConfigStats* into, const ConfigStats& from) {
  const int64_t into_timed = into->launches - into->untimed_launches;
  const int64_t from_timed = from.launches - from.untimed_launches;
  if (from_timed > 0) {
    if (into_timed == 0) {
      into->min_ns = from.min_ns;
      into->max_ns = from.max_ns;
    } else {
      into->min_ns = std::min(into->min_ns, from.min_ns);
      into->max_ns = std::max(into->max_ns, from.max_ns);
    }
  }
  if (from.first_start_ns > 0 && (into->first_start_ns == 0 || from.first_start_ns < into->first_start_ns)) {
    into->first_start_ns = from.first_start_ns;
  }
  into->last_end_ns = std::max(into->last_end_ns, from.last_end_ns);
  if (from.tail_launches >= 0) into->tail_launches = std::max<int64_t>(0, into->tail_launches) + from.tail_launches;
  if (from.followed_by_name == into->followed_by_name) {
    into->followed_by_launches += from.followed_by_launches;
  } else if (from.followed_by_launches > into->followed_by_launches) {
    into->followed_by_name = from.followed_by_name;
    into->followed_by_launches = from.followed_by_launches;
  }
  into->launches += from.launches;
  into->untimed_launches += from.untimed_launches;
  into->time_estimated = into->time_estimated || from.time_estimated;
  into->estimate_samples += from.estimate_samples;
  into->estimate_variance += from.estimate_variance;
  into->total_ns = SaturatingAdd(into->total_ns, from.total_ns);
  if (from.achieved_samples > 0) {
    if (into->achieved_samples == 0) {
      into->achieved_min = from.achieved_min;
      into->achieved_max = from.achieved_max;
    } else {
      into->achieved_min = std::min(into->achieved_min, from.achieved_min);
      into->achieved_max = std::max(into->achieved_max, from.achieved_max);
    }
  }
  into->achieved_samples += from.achieved_samples;
  into->achieved_sum += from.achieved_sum;
  into->achieved_not_measured += from.achieved_not_measured;
  into->throughput.Merge(from.throughput);
  into->pm.Merge(from.pm);
  into->overlap.Merge(from.overlap);
  for (const auto& [reason, n] : from.not_measured_reasons) into->not_measured_reasons[reason] += n;
  if (into->graph_id == 0) into->graph_id = from.graph_id;
}

void ThroughputSums::AddLaunch(const double (&pct)[kThroughputUnits]) {
  bool any = false;
  for (int i = 0; i < kThroughputUnits; ++i) {
    if (!(pct[i] >= 0)) continue;
    sum[i] += pct[i];
    ++samples[i];
    any = true;
  }
  if (any) ++launches;
}

void ThroughputSums::Merge(const ThroughputSums& other) {
  for (int i = 0; i < kThroughputUnits; ++i) {
    sum[i] += other.sum[i];
    samples[i] += other.samples[i];
  }
  launches += other.launches;
}

std::string LaunchConfigKey(const ConfigStats& c, bool with_executed_carveout) {
  std::ostringstream key;
  key << DimsText(c.grid) << '|' << DimsText(c.block) << '|' << c.registers_per_thread << '|'
      << c.registers_known << '|' << c.static_smem << '|' << c.dynamic_smem << '|'
      << (with_executed_carveout ? c.smem_executed : -1) << '|' << c.smem_limit_config << '|'
      << c.carveout_pct << '|'
      << c.cache_config << '|' << DimsText(c.cluster) << '|' << c.local_mem_per_thread << '|'
      << c.name;
  return key.str();
}

namespace {
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxSmemBytes = 1 << 20;  // no GPU has a megabyte of shared memory per block
}  // namespace

// Why a recorded configuration cannot be a real launch, or "" if it can.
std::string AbsurdValue(const ConfigStats& c) {
  if (c.grid[0] < 1 || c.grid[0] > kMaxGridX || c.grid[1] < 1 || c.grid[1] > kMaxGridYZ ||
      c.grid[2] < 1 || c.grid[2] > kMaxGridYZ) {
    return "invalid grid " + DimsText(c.grid);
  }
  if (c.block[0] < 1 || c.block[0] > 1024 || c.block[1] < 1 || c.block[1] > 1024 ||
      c.block[2] < 1 || c.block[2] > 64 || c.block[0] * c.block[1] * c.block[2] > 1024) {
    return "invalid block " + DimsText(c.block);
  }
  if (c.registers_per_thread < 0 || c.registers_per_thread > 255) {
    return "invalid register count " + std::to_string(c.registers_per_thread) + " per thread";
  }
  if (c.static_smem < 0 || c.static_smem > kMaxSmemBytes || c.dynamic_smem < 0 ||
      c.dynamic_smem > kMaxSmemBytes) {
    return "invalid shared memory " + std::to_string(c.static_smem) + " B + " +
           std::to_string(c.dynamic_smem) + " B dynamic";
  }
  if (c.local_mem_per_thread < 0 || c.local_mem_per_thread > (int64_t{1} << 30)) {
    return "invalid local memory " + std::to_string(c.local_mem_per_thread) + " B per thread";
  }
  if (c.smem_executed < 0 || c.smem_executed > 2 * kMaxSmemBytes) {
    return "invalid executed shared memory configuration " + std::to_string(c.smem_executed);
  }
  for (int64_t d : c.cluster) {
    if (d < 0 || d > 1024) return "invalid cluster " + DimsText(c.cluster);
  }
  return "";
}

StatusOr<LaunchParams> LaunchParamsFor(const ConfigStats& c, const DeviceProps& device,
                                       bool on_traced_gpu) {
  std::string absurd = AbsurdValue(c);
  if (!absurd.empty()) return InvalidArgument(absurd);
  LaunchParams p;
  p.block_threads = static_cast<int>(BlockThreads(c));
  if (p.block_threads > device.max_threads_per_block) {
    return InvalidArgument("block of " + std::to_string(p.block_threads) + " threads exceeds " +
                           device.name + "'s limit of " +
                           std::to_string(device.max_threads_per_block));
  }
  p.regs_per_thread = static_cast<int>(c.registers_per_thread);
  p.static_smem = static_cast<int>(c.static_smem);
  p.dynamic_smem = static_cast<int>(c.dynamic_smem);
  // A launch that ran with more than the default per-block limit must have opted in, whatever
  // the recorded limit config says (older records lack it).
  bool opt_in = c.smem_limit_config == 1 || c.static_smem + c.dynamic_smem > device.smem_per_block;
  p.shmem_limit_config = opt_in ? ShmemLimitConfig::kOptIn : ShmemLimitConfig::kDefault;
  // The launch succeeded, so its dynamic size was allowed: the attribute is at least that, and
  // for opt-in launches whatever the device allows (occupancy-model.md §9).
  p.max_dynamic_smem = opt_in ? std::max<int>(p.dynamic_smem,
                                              device.smem_per_block_optin - p.static_smem)
                              : p.dynamic_smem;
  p.carveout_pct = (c.carveout_pct >= 0 && c.carveout_pct <= 100) ? static_cast<int>(c.carveout_pct)
                                                                  : -1;
  int64_t cache = c.cache_config & 0xF;
  p.cache_config = cache <= 3 ? static_cast<CacheConfig>(cache) : CacheConfig::kPreferNone;
  // Not in CUPTI records: from the cubin (OCC_FUNCTION) when recorded, else 1 (noted in the report).
  p.num_block_barriers = c.barrier_count >= 0 ? static_cast<int>(c.barrier_count) : 1;
  if (c.func_max_threads > 0) p.func_max_threads_per_block = static_cast<int>(c.func_max_threads);
  p.executed_smem_config = on_traced_gpu ? static_cast<int>(c.smem_executed) : 0;
  int64_t cluster = std::max<int64_t>(1, c.cluster[0]) * std::max<int64_t>(1, c.cluster[1]) *
                    std::max<int64_t>(1, c.cluster[2]);
  p.cluster_size = static_cast<int>(std::min<int64_t>(cluster, 1024));
  return p;
}

}  // namespace occ
