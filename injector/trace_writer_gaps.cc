// TraceWriter's re-attach gaps (trace_writer.h, EnableGapCalls): launches a full trace has no
// kernel record of, because CUPTI was finalized and attached again around them
// (cupti_reattach.cc), stored from the launch hook's calls as OCC_LAUNCH_CALL rows.
#include "injector/trace_writer.h"

namespace occ::inj {

void TraceWriter::EnableGapCalls() {
  if (gap_calls_enabled_ || failed_) return;
  gap_calls_enabled_ = true;
  if (light_mode_) return;  // light tracing stores every call already
  // The same OCC_LAUNCH_CALL inserts as light tracing's (SetLightMode).
  if (!Prepare(&insert_call_, CallInsertSql(1)) || !Prepare(&insert_call_batch_, CallInsertSql(kLaunchBatchRows))) Fail();
}

void TraceWriter::NoteRecordShape(const ActivityKernel& kernel, const KernelConfigKey& key, int64_t config_id) {
  // The first configuration of the shape.
  record_configs_by_shape_.try_emplace(RecordShape(kernel, key.mangled_name_id), config_id);  // the first configuration of the shape
}

void TraceWriter::BeginGapCalls(uint32_t epoch) {
  if (!gap_calls_enabled_) return;
  gap_calls_open_ = true;
  gap_epoch_ = epoch;
}

void TraceWriter::AddGapCall(const LaunchCall& call) {
  if (!gap_calls_enabled_ || failed_) return;
  // A call after ResolveGapCalls (the hook's last appends race the end of recording) is held
  // for the next gap's resolution, or the final one.
  held_gap_calls_.push_back(call);
  ++stats_.gap_calls_held;
}

void TraceWriter::ResolveGapCalls() {
  for (const LaunchCall& call : held_gap_calls_) {
    if (failed_) break;
    if (call.correlation_id != 0 &&
        gap_record_correlations_.count(uint64_t{call.attach_epoch} << 32 | call.correlation_id) != 0) {
      ++stats_.gap_duplicates;
      continue;
    }
    if (!AcceptRecord()) continue;
    if (call.graph != nullptr) {
      for (const GraphKernelNode& node : call.graph->kernels) {
        AddGapLaunch(call, *node.function, node.grid, node.block, node.dynamic_shared_memory, call.graph->graph_id,
                     node.node_id);
      }
    } else if (call.function != nullptr) {
      AddGapLaunch(call, *call.function, call.grid, call.block, call.dynamic_shared_memory, 0, 0);
    } else {
      ++stats_.unknown_graph_launches;
    }
  }
  held_gap_calls_.clear();
  gap_record_correlations_.clear();
  gap_calls_open_ = false;
}

void TraceWriter::AddGapLaunch(const LaunchCall& call, const FunctionFacts& function, const uint32_t grid[3],
                               const uint32_t block[3], uint32_t dynamic_shared_memory, uint32_t graph_id,
                               uint64_t graph_node_id) {
  TimingKey shape;
  if (!CallShape(call, function, grid, block, dynamic_shared_memory, graph_node_id, &shape)) return;
  int64_t config_id = 0;
  if (auto found = record_configs_by_shape_.find(shape); found != record_configs_by_shape_.end()) {
    config_id = found->second;
  } else {
    // No kernel record of this shape yet: the configuration as its facts describe it (a
    // record's configuration of the same launch may then differ in the facts calls lack).
    config_id = InternConfig(ConfigKeyFromCall(call, function, shape, graph_id));
    if (failed_) return;
    record_configs_by_shape_.emplace(shape, config_id);
    ++stats_.gap_configs_from_calls;
  }
  pending_calls_.push_back(CallRow{static_cast<int64_t>(call.api_start_ns), config_id, call.stream_id,
                                   call.correlation_id});
  ++stats_.gap_launches;
  ++uncommitted_launches_;
  if (pending_calls_.size() == kLaunchBatchRows) FlushLaunchCalls();
}

}  // namespace occ::inj
