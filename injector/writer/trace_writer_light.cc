// TraceWriter's light-tracing half (trace_writer.h, SetLightMode): launch calls into
// OCC_LAUNCH_CALL, and kernel records from timing windows attached to their configurations.
#include <algorithm>
#include <functional>

#include "injector/common/errors.h"
#include "injector/writer/trace_writer.h"

namespace occ::inj {
namespace {

void Bind(sql::Stmt& stmt, int index, int64_t value) { static_cast<void>(stmt.BindInt64(index, value)); }

}  // namespace

TraceWriter::TimingKey TraceWriter::RecordShape(const ActivityKernel& kernel, int64_t name_id) {
  TimingKey shape;
  shape.mangled_name_id = name_id;
  shape.graph_node_id = kernel.graphNodeId;
  shape.context_id = kernel.contextId;
  const int32_t grid[3] = {kernel.gridX, kernel.gridY, kernel.gridZ};
  const int32_t block[3] = {kernel.blockX, kernel.blockY, kernel.blockZ};
  CopyShape(grid, block, shape.grid, shape.block);
  shape.dynamic_shared_memory = kernel.dynamicSharedMemory;
  return shape;
}

bool TraceWriter::CallShape(const LaunchCall& call, const FunctionFacts& function, const uint32_t grid[3],
                            const uint32_t block[3], uint32_t dynamic_shared_memory, uint64_t graph_node_id,
                            TimingKey* shape) {
  shape->mangled_name_id = InternKernelName(function.mangled_name.c_str());
  if (failed_) return false;
  shape->graph_node_id = graph_node_id;
  shape->context_id = call.context_id;
  CopyShape(grid, block, shape->grid, shape->block);
  shape->dynamic_shared_memory = static_cast<int32_t>(dynamic_shared_memory);
  return true;
}

std::string TraceWriter::CallInsertSql(size_t rows) {
  std::string sql = "INSERT INTO OCC_LAUNCH_CALL(apiStart,configId,streamId,correlationId) VALUES ";
  for (size_t i = 0; i < rows; ++i) sql += i == 0 ? "(?,?,?,?)" : ",(?,?,?,?)";
  return sql;
}

size_t TraceWriter::TimingKeyHash::operator()(const TimingKey& key) const {
  static_assert(sizeof(TimingKey) == 48, "TimingKey must have no padding");
  // FNV-1a over the bytes: no padding (static_assert above).
  const auto* bytes = reinterpret_cast<const unsigned char*>(&key);
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof(key); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return static_cast<size_t>(hash);
}

void TraceWriter::SetLightMode() {
  if (light_mode_ || failed_) return;
  light_mode_ = true;
  pending_calls_.reserve(kLaunchBatchRows);
  const bool ok = Prepare(&insert_call_, CallInsertSql(1)) &&
                  Prepare(&insert_call_batch_, CallInsertSql(kLaunchBatchRows)) &&
                  Prepare(&update_config_from_record_,
                          "UPDATE OCC_KERNEL_CONFIG SET sharedMemoryExecuted=?,cacheConfig=?,"
                          "localMemoryTotal=?,maxPotentialClusterSize=?,maxActiveClusters=?,"
                          "sharedMemoryLimitConfig=? WHERE id=?");
  if (!ok) {
    Fail();
    return;
  }
  SetMeta("trace_mode", "light");
}

void TraceWriter::AddLaunchCall(const LaunchCall& call) {
  if (!light_mode_ || !AcceptRecord()) return;
  if (call.graph != nullptr || call.unknown_graph != 0) {
    ++stats_.graph_launches;
    if (call.graph == nullptr) {
      ++stats_.unknown_graph_launches;
      return;
    }
    for (const GraphKernelNode& node : call.graph->kernels) {
      AddLightLaunch(call, *node.function, node.grid, node.block, node.dynamic_shared_memory,
                     call.graph->graph_id, node.node_id);
      if (failed_) return;
    }
    return;
  }
  if (call.function == nullptr) return;
  AddLightLaunch(call, *call.function, call.grid, call.block, call.dynamic_shared_memory, 0, 0);
}

KernelConfigKey TraceWriter::ConfigKeyFromCall(const LaunchCall& call, const FunctionFacts& function,
                                               const TimingKey& timing, uint32_t graph_id) {
  // The configuration as a kernel record would describe it, from what the launch and the
  // function's attributes say; the record's own facts (executed carveout, cache config,
  // cluster occupancy) are not known from the call.
  KernelConfigKey key;
  key.mangled_name_id = timing.mangled_name_id;
  key.graph_node_id = timing.graph_node_id;
  key.graph_id = graph_id;
  key.device_id = call.device_id;
  key.context_id = call.context_id;
  auto green = green_contexts_.find(call.context_id);
  if (green != green_contexts_.end() && green->second) key.is_green_context = 1;
  key.launch_type = call.launch_type;
  key.registers_per_thread = function.registers_per_thread;
  for (int i = 0; i < 3; ++i) {
    key.grid[i] = timing.grid[i];
    key.block[i] = timing.block[i];
    key.cluster[i] = timing.graph_node_id == 0 ? call.cluster[i] : function.required_cluster[i];
  }
  key.cluster_scheduling_policy = call.cluster_scheduling_policy;
  key.static_shared_memory = function.static_shared_memory;
  key.dynamic_shared_memory = timing.dynamic_shared_memory;
  key.local_memory_per_thread = static_cast<uint32_t>(function.local_memory_per_thread);
  if (key.local_memory_per_thread == 0) {
    auto cubin = cubin_local_memory_.find(key.mangled_name_id);
    if (cubin != cubin_local_memory_.end()) key.local_memory_per_thread = static_cast<uint32_t>(cubin->second);
  }
  // Opt-in shared memory: the function was allowed more than the default 48 KiB per block.
  key.shared_memory_limit_config =
      function.static_shared_memory + function.max_dynamic_shared_memory > 48 * 1024 ? 1 : 0;
  key.shared_memory_requested_pct = function.carveout_pct;
  return key;
}

void TraceWriter::AddLightLaunch(const LaunchCall& call, const FunctionFacts& function,
                                 const uint32_t grid[3], const uint32_t block[3],
                                 uint32_t dynamic_shared_memory, uint32_t graph_id,
                                 uint64_t graph_node_id) {
  TimingKey timing;
  if (!CallShape(call, function, grid, block, dynamic_shared_memory, graph_node_id, &timing)) return;
  auto found = light_configs_.find(timing);
  if (found == light_configs_.end()) {
    // The record's own facts fill in once a timing window records one of its launches.
    const KernelConfigKey key = ConfigKeyFromCall(call, function, timing, graph_id);
    const int64_t id = InternConfig(key);
    if (failed_) return;
    found = light_configs_.emplace(timing, LightConfig{id, false, 0}).first;
    TimingKey any_node = timing;
    any_node.graph_node_id = 0;
    light_configs_any_node_.emplace(any_node, &found->second);
  }
  if (found->second.timed < kWellTimedLaunches) ++stats_.under_timed_launch_calls;
  pending_calls_.push_back(CallRow{static_cast<int64_t>(call.api_start_ns), found->second.id,
                                   call.stream_id, call.correlation_id});
  ++stats_.launch_calls;
  ++uncommitted_launches_;
  if (pending_calls_.size() == kLaunchBatchRows) FlushLaunchCalls();
}

bool TraceWriter::InsideOneRecordsWindow(uint64_t start, uint64_t end) const {
  // The last window opened at or before the kernel's start.
  auto after = std::upper_bound(records_windows_.begin(), records_windows_.end(), start,
                                [](uint64_t ns, const RecordsWindow& window) { return ns < window.on_ns; });
  if (after == records_windows_.begin()) return false;
  return end < std::prev(after)->off_ns;
}

bool TraceWriter::AddTimedLaunch(const ActivityKernel& kernel) {
  const bool has_end = kernel.end >= kernel.start && (kernel.end != 0 || kernel.start == 0);
  // Neither timed nor stored: outside one window its duration is not the kernel's, and a record
  // without an end (a forced flush handed it back while the kernel ran: at the end of a window
  // when CUPTI detaches, or a stale buffer) has none.
  if (!has_end || !InsideOneRecordsWindow(kernel.start, kernel.end)) {
    ++stats_.timed_dropped_at_switch;
    return true;
  }
  const int64_t name_id = InternKernelName(kernel.name);
  if (failed_) return true;
  TimingKey timing = RecordShape(kernel, name_id);
  LightConfig* light = nullptr;
  bool exact = true;
  if (auto it = light_configs_.find(timing); it != light_configs_.end()) {
    light = &it->second;
  } else {
    timing.graph_node_id = 0;
    auto any = light_configs_any_node_.find(timing);
    if (any == light_configs_any_node_.end()) {
      ++stats_.timed_unmatched;
      return false;
    }
    light = any->second;
    exact = false;
  }
  const int64_t config_id = light->id;
  ++light->timed;
  if (pm_join_) pm_join_->AddKernel(kernel.deviceId, kernel.start, kernel.end, config_id);
  if (exact && !light->record_facts_filled) {
    light->record_facts_filled = true;
    const KernelConfigKey record = MakeKernelConfigKey(kernel);
    sql::Stmt& s = update_config_from_record_;
    int i = 0;
    Bind(s, ++i, record.shared_memory_executed);
    Bind(s, ++i, record.cache_config);
    Bind(s, ++i, static_cast<int64_t>(record.local_memory_total));
    Bind(s, ++i, record.max_potential_cluster_size);
    Bind(s, ++i, record.max_active_clusters);
    Bind(s, ++i, record.shared_memory_limit_config);
    Bind(s, ++i, config_id);
    if (!OCC_SQL_OK(s.Run())) {
      Fail();
      return true;
    }
  }
  if (!has_end) ++stats_.incomplete_kernels;
  const int64_t duration = has_end ? static_cast<int64_t>(kernel.end - kernel.start) : 0;
  pending_launches_.push_back(LaunchRow{static_cast<int64_t>(kernel.start), duration, config_id,
                                        kernel.streamId, kernel.correlationId});
  ++stats_.launches;
  ++stats_.timed_launches;
  ++uncommitted_launches_;
  if (pending_launches_.size() == kLaunchBatchRows) FlushLaunches();
  return true;
}

void TraceWriter::FlushLaunchCalls() {
  if (failed_ || pending_calls_.empty()) {
    pending_calls_.clear();
    return;
  }
  InsertBatched<CallRow>(&pending_calls_, insert_call_batch_, insert_call_,
                         [](sql::Stmt& stmt, int* i, const CallRow& row) {
                           Bind(stmt, ++*i, row.api_start);
                           Bind(stmt, ++*i, row.config_id);
                           Bind(stmt, ++*i, row.stream_id);
                           Bind(stmt, ++*i, row.correlation_id);
                         });
}

}  // namespace occ::inj
