// Light tracing (OCCTRACE_MODE=light): every kernel launch as the launch callback sees it, handed
// from the launching threads to the writer thread without locks.
//
// A launch callback fills one LaunchCall (configuration, ids, the function's facts) and appends
// it to its thread's stream: a chain of fixed-size chunks that only that thread writes and only
// the writer thread reads (single producer, single consumer per thread). Appending is a copy and
// a release store; a full chunk links a fresh one. The writer drains every thread's stream each
// time it wakes, before it reads CUPTI's buffers, so a launch always reaches it before the
// kernel record a timing window may produce for it. Chunks are bounded (max_chunks): when the
// writer falls that far behind, calls are dropped and counted, never blocked on.
//
// Per-function and per-graph facts are read once (light_tracer.cc) and never freed while the
// process runs, so a LaunchCall may point at them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace occ::inj {

// What a kernel's activity record would say about its function, read with cuFuncGetName /
// cuFuncGetAttribute at its first launch.
struct FunctionFacts {
  std::string mangled_name;
  int32_t registers_per_thread = 0;      // CU_FUNC_ATTRIBUTE_NUM_REGS
  int32_t static_shared_memory = 0;      // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  int32_t local_memory_per_thread = 0;   // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
  int32_t max_dynamic_shared_memory = 0; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int32_t carveout_pct = -1;             // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT; -1: none
  uint32_t required_cluster[3] = {0, 0, 0};  // CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*; 0: none
};

// One kernel node of an instantiated graph (CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED).
struct GraphKernelNode {
  const FunctionFacts* function = nullptr;
  uint64_t node_id = 0;  // cuptiGetGraphNodeId, as kernel records carry it
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_memory = 0;
};

struct GraphExecFacts {
  uint32_t graph_id = 0;  // cuptiGetGraphId of the graph it was instantiated from
  std::vector<GraphKernelNode> kernels;
  uint32_t other_nodes = 0;   // nodes that launch no kernel occtrace can name (memcpy, host...)
  bool complete = true;       // false: a node could not be read; its kernels are missing
};

// One launch API call. Trivially copyable: appended by value.
struct LaunchCall {
  const FunctionFacts* function = nullptr;  // kernel launches
  const GraphExecFacts* graph = nullptr;    // graph launches (function is then null)
  uint64_t api_start_ns = 0;                // cuptiGetTimestamp when the launch API returned
  uint32_t correlation_id = 0;              // the outermost API's, as the kernel record carries
  uint32_t context_id = 0;                  // CUPTI context id
  uint32_t device_id = 0;
  uint32_t stream_id = 0;                   // CUPTI stream id
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_memory = 0;
  uint32_t cluster[3] = {0, 0, 0};
  uint32_t cluster_scheduling_policy = 0;
  int32_t launch_type = 0;                  // CUpti_ActivityLaunchType
  uint32_t unknown_graph = 0;               // a graph launch whose instantiation was not seen
};

class LaunchCallStreams {
 public:
  static constexpr size_t kCallsPerChunk = 1024;

  // At most `max_chunks` chunks exist at once over all threads (~90 KB each).
  explicit LaunchCallStreams(size_t max_chunks = 512);
  ~LaunchCallStreams();
  LaunchCallStreams(const LaunchCallStreams&) = delete;
  LaunchCallStreams& operator=(const LaunchCallStreams&) = delete;

  // Any thread. False when the chunk cap is reached: the call is dropped and counted.
  bool Append(const LaunchCall& call);

  // The writer thread only. Visits every call appended since the last Drain, each thread's in
  // its order, and frees what it finished reading. Returns the number visited.
  size_t Drain(const std::function<void(const LaunchCall&)>& visit);

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Threads that appended at least once and whose streams are not yet freed.
  size_t threads() const;

  struct ThreadStream;

 private:
  ThreadStream* StreamOfThisThread();

  const size_t max_chunks_;
  const uint64_t instance_id_;
  std::atomic<size_t> live_chunks_{0};
  std::atomic<uint64_t> dropped_{0};
  mutable std::mutex streams_mutex_;  // guards streams_ (registration; the writer's walk)
  std::vector<std::shared_ptr<ThreadStream>> streams_;
};

}  // namespace occ::inj
