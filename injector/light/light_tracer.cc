#include "injector/light/light_tracer.h"

#include <cupti.h>  // also brings generated_cuda_meta.h (launch parameter structs)

#include <time.h>

#include <array>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "injector/achieved/achieved_launch.h"
#include "injector/common/errors.h"

namespace occ::inj {
namespace {

// Facts and graphs live until the process ends: a LaunchCall in a stream may point at them
// long after the module or graph is gone. Both grow with the distinct functions and graphs a
// program instantiates, which is bounded by its code.
struct Registry {
  std::mutex mutex;
  std::deque<FunctionFacts> facts;
  std::unordered_map<CUfunction, const FunctionFacts*> by_function;
  std::deque<GraphExecFacts> graphs;
  std::unordered_map<CUgraphExec, const GraphExecFacts*> by_graph_exec;
};
Registry& TheRegistry() {
  static auto* registry = new Registry;  // leaked: callbacks may run during teardown
  return *registry;
}

// Bumped when a module unloads (its CUfunctions may be reused by a later module) and when a
// stream is destroyed (its handle may be reused): per-thread caches older than it are stale.
std::atomic<uint64_t> g_functions_epoch{1};
std::atomic<uint64_t> g_streams_epoch{1};

struct ThreadCaches {
  uint64_t functions_epoch = 0;
  std::unordered_map<CUfunction, const FunctionFacts*> functions;
  uint64_t streams_epoch = 0;
  struct StreamEntry {
    CUcontext context = nullptr;
    CUstream stream = nullptr;
    uint32_t id = 0;
  };
  std::array<StreamEntry, 8> streams{};
  size_t next_stream_slot = 0;
  CUcontext context = nullptr;
  uint32_t context_id = 0;
  uint32_t device_id = 0;
  // CUPTI detached between windows: what this thread's launch callbacks already told the
  // id translation (LearnIds).
  CUcontext learned_context = nullptr;
  uint64_t learned_streams_epoch = 0;
  std::array<std::pair<CUcontext, CUstream>, 8> learned_streams{};
  size_t next_learned_slot = 0;
};
thread_local ThreadCaches t_caches;

// The graph exec CUPTI's GRAPHEXEC_CREATED callback registered on this thread during the
// hooked instantiation in progress (LightTracer::BeginHookedInstantiation).
thread_local CUgraphExec t_graph_exec_from_callback = nullptr;

bool ReadFacts(CUfunction function, FunctionFacts* facts) {
  const DriverApi& driver = Driver();
  if (driver.cuFuncGetName == nullptr || driver.cuFuncGetAttribute == nullptr) return false;
  const char* name = nullptr;
  CUfunction queried = function;
  if (driver.cuFuncGetName(&name, queried) != CUDA_SUCCESS || name == nullptr) {
    // The runtime launches CUkernel handles (context-independent) through cuLaunchKernel,
    // which accepts either; the current context's CUfunction of that kernel answers instead.
    if (driver.cuKernelGetFunction == nullptr ||
        driver.cuKernelGetFunction(&queried, reinterpret_cast<CUkernel>(function)) != CUDA_SUCCESS ||
        driver.cuFuncGetName(&name, queried) != CUDA_SUCCESS || name == nullptr) {
      return false;
    }
  }
  facts->mangled_name = name;
  auto attribute = [&](CUfunction_attribute which, int fallback) {
    int value = fallback;
    if (driver.cuFuncGetAttribute(&value, which, queried) != CUDA_SUCCESS) value = fallback;
    return value;
  };
  facts->registers_per_thread = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 0);
  facts->static_shared_memory = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 0);
  facts->local_memory_per_thread = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 0);
  facts->max_dynamic_shared_memory = attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0);
  facts->carveout_pct = attribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1);
  facts->required_cluster[0] = static_cast<uint32_t>(attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 0));
  facts->required_cluster[1] = static_cast<uint32_t>(attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 0));
  facts->required_cluster[2] = static_cast<uint32_t>(attribute(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 0));
  return true;
}

// cuLaunchKernelEx's attributes that kernel records report: cluster shape and policy, and
// cooperative launches.
void ApplyLaunchAttributes(const CUlaunchConfig* config, LaunchCall* call) {
  if (config == nullptr || config->attrs == nullptr) return;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& attribute = config->attrs[i];
    switch (attribute.id) {
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        call->cluster[0] = attribute.value.clusterDim.x;
        call->cluster[1] = attribute.value.clusterDim.y;
        call->cluster[2] = attribute.value.clusterDim.z;
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        call->cluster_scheduling_policy = static_cast<uint32_t>(attribute.value.clusterSchedulingPolicyPreference);
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        if (attribute.value.cooperative != 0) call->launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
        break;
      default:
        break;
    }
  }
}

constexpr CUpti_CallbackId kCaptureBeginCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,          CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,       CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,   CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
};
constexpr CUpti_CallbackId kCaptureEndCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
};
bool IsCaptureBegin(CUpti_CallbackId cbid) {
  for (CUpti_CallbackId id : kCaptureBeginCbids) {
    if (id == cbid) return true;
  }
  return false;
}
bool IsCaptureEnd(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture || cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz;
}

bool Succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue == nullptr ||
         *static_cast<const CUresult*>(data->functionReturnValue) == CUDA_SUCCESS;
}

// Kernel nodes of `graph` and of the graphs its child-graph nodes hold. `cupti_ids`: ask CUPTI
// for node ids (only where CUPTI is attached: inside its callbacks).
void CollectKernelNodes(CUgraph graph, int depth, GraphExecFacts* out, bool cupti_ids) {
  const DriverApi& driver = Driver();
  if (depth > 16 || driver.cuGraphGetNodes == nullptr || driver.cuGraphNodeGetType == nullptr) {
    out->complete = false;
    return;
  }
  size_t count = 0;
  if (driver.cuGraphGetNodes(graph, nullptr, &count) != CUDA_SUCCESS) {
    out->complete = false;
    return;
  }
  std::vector<CUgraphNode> nodes(count);
  if (count > 0 && driver.cuGraphGetNodes(graph, nodes.data(), &count) != CUDA_SUCCESS) {
    out->complete = false;
    return;
  }
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type{};
    if (driver.cuGraphNodeGetType(node, &type) != CUDA_SUCCESS) {
      out->complete = false;
      continue;
    }
    if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
      CUgraph child = nullptr;
      if (driver.cuGraphChildGraphNodeGetGraph != nullptr &&
          driver.cuGraphChildGraphNodeGetGraph(node, &child) == CUDA_SUCCESS) {
        CollectKernelNodes(child, depth + 1, out, cupti_ids);
      } else {
        out->complete = false;
      }
      continue;
    }
    if (type != CU_GRAPH_NODE_TYPE_KERNEL) {
      ++out->other_nodes;
      continue;
    }
    CUDA_KERNEL_NODE_PARAMS params{};
    if (driver.cuGraphKernelNodeGetParams == nullptr ||
        driver.cuGraphKernelNodeGetParams(node, &params) != CUDA_SUCCESS) {
      out->complete = false;
      continue;
    }
    CUfunction function = params.func;
    if (function == nullptr && params.kern != nullptr) function = reinterpret_cast<CUfunction>(params.kern);
    GraphKernelNode kernel;
    kernel.function = function != nullptr ? FactsOfFunction(function) : nullptr;
    if (kernel.function == nullptr) {
      out->complete = false;
      continue;
    }
    kernel.grid[0] = params.gridDimX;
    kernel.grid[1] = params.gridDimY;
    kernel.grid[2] = params.gridDimZ;
    kernel.block[0] = params.blockDimX;
    kernel.block[1] = params.blockDimY;
    kernel.block[2] = params.blockDimZ;
    kernel.dynamic_shared_memory = params.sharedMemBytes;
    uint64_t node_id = 0;
    if (cupti_ids && cuptiGetGraphNodeId(node, &node_id) == CUPTI_SUCCESS) kernel.node_id = node_id;
    out->kernels.push_back(kernel);
  }
}

}  // namespace

// Where FactsOfFunction found the facts: this thread's cache, the registry, or a first read.
enum class FactsSource { kThreadCache, kRegistry, kNew };

static const FunctionFacts* LookUpFacts(CUfunction function, FactsSource* source) {
  ThreadCaches& caches = t_caches;
  const uint64_t epoch = g_functions_epoch.load(std::memory_order_acquire);
  if (caches.functions_epoch != epoch) {
    caches.functions.clear();
    caches.functions_epoch = epoch;
  }
  *source = FactsSource::kThreadCache;
  if (auto it = caches.functions.find(function); it != caches.functions.end()) return it->second;
  Registry& registry = TheRegistry();
  const FunctionFacts* facts = nullptr;
  *source = FactsSource::kRegistry;
  {
    std::lock_guard lock(registry.mutex);
    if (auto it = registry.by_function.find(function); it != registry.by_function.end()) facts = it->second;
  }
  if (facts == nullptr) {
    FunctionFacts read;
    if (!ReadFacts(function, &read)) return nullptr;
    std::lock_guard lock(registry.mutex);
    auto [it, inserted] = registry.by_function.emplace(function, nullptr);
    if (inserted) {
      it->second = &registry.facts.emplace_back(std::move(read));
      *source = FactsSource::kNew;
    }
    facts = it->second;
  }
  caches.functions.emplace(function, facts);
  return facts;
}

const FunctionFacts* FactsOfFunction(CUfunction function) {
  FactsSource source;
  return LookUpFacts(function, &source);
}

const FunctionFacts* LightTracer::Facts(CUfunction function) {
  FactsSource source;
  const FunctionFacts* facts = LookUpFacts(function, &source);
  if (source == FactsSource::kNew) {
    new_functions_.fetch_add(1, std::memory_order_relaxed);
    if (on_new_function_) on_new_function_();
  }
  return facts;
}

bool LightTracer::Capturing(CUstream stream) {
  // The legacy default stream is never captured: a capture cannot begin on it, and a launch
  // into it while another stream captures fails (it would synchronize with the capturing
  // stream), so it is not recorded. (ReadLaunchArgs turned a _ptsz launch's null stream into
  // CU_STREAM_PER_THREAD, which can be captured.) Most PyTorch launches go there, and asking the
  // driver costs a call per launch.
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return false;
  // Detached, the capture callbacks are gone for most of the run: ask the driver.
  if (!options_.cupti_free && active_captures_.load(std::memory_order_acquire) == 0) {
    return false;
  }
  const DriverApi& driver = Driver();
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (driver.cuStreamIsCapturing == nullptr || driver.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS) {
    return false;
  }
  if (status == CU_STREAM_CAPTURE_STATUS_NONE) return false;
  captured_launches_.fetch_add(1, std::memory_order_relaxed);
  graphs_seen_.store(true, std::memory_order_relaxed);
  return true;
}

bool LightTracer::EnableCallbacks(CUpti_SubscriberHandle subscriber) {
  for (CUpti_CallbackId cbid : kDriverLaunchCbids) {
    if (!OCC_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid))) return false;
  }
  for (CUpti_CallbackId cbid : kCaptureBeginCbids) {
    if (options_.cupti_free) break;
    if (!OCC_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid))) return false;
  }
  for (CUpti_CallbackId cbid : kCaptureEndCbids) {
    if (options_.cupti_free) break;
    if (!OCC_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid))) return false;
  }
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
                                CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING}) {
    if (!OCC_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid))) return false;
  }
  return true;
}

void LightTracer::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
    if (data->callbackSite != CUPTI_API_EXIT) return;
    if (IsCaptureEnd(cbid)) {
      // The capture ends even when cuStreamEndCapture fails (an invalidated capture).
      if (active_captures_.load(std::memory_order_relaxed) > 0) active_captures_.fetch_sub(1, std::memory_order_acq_rel);
      return;
    }
    if (!Succeeded(data)) return;
    if (IsCaptureBegin(cbid)) {
      active_captures_.fetch_add(1, std::memory_order_acq_rel);
      graphs_seen_.store(true, std::memory_order_relaxed);
      return;
    }
    const bool kernel = IsKernelLaunchCbid(cbid);
    if (!kernel && !IsGraphLaunchCbid(cbid)) return;
    if (options_.cupti_free && ids_ != nullptr) LearnIds(cbid, data);
    HookedLaunchThread& hooked = ThisThreadsHookedLaunch();
    if (hooked.depth > 0) {
      // The hook records it on return, with the driver call's correlation id.
      hooked.correlation = data->correlationId;
      return;
    }
    if (hook_installed_.load(std::memory_order_relaxed)) launches_outside_hook_.fetch_add(1, std::memory_order_relaxed);
    const uint32_t correlation = data->correlationId;
    if (kernel) {
      RecordKernelLaunch(cbid, data->functionParams, data->context, correlation);
    } else {
      RecordGraphLaunch(cbid, data->functionParams, data->context, correlation);
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
      OnGraphExecCreated(resource);
      break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING: {
      const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
      if (graph == nullptr) break;
      Registry& registry = TheRegistry();
      std::lock_guard lock(registry.mutex);
      registry.by_graph_exec.erase(graph->graphExec);
      break;
    }
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      OnHookedModuleUnload();
      break;
    case CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING:
      g_streams_epoch.fetch_add(1, std::memory_order_acq_rel);
      break;
    default:
      break;
  }
}

bool LightTracer::FillContext(CUcontext context, LaunchCall* call) {
  ThreadCaches& caches = t_caches;
  if (context != caches.context || context == nullptr) {
    uint32_t context_id = 0;
    uint32_t device_id = 0;
    if (context == nullptr) return false;
    if (options_.cupti_free) {
      const DriverApi& driver = Driver();
      unsigned long long driver_id = 0;
      CUdevice device = 0;
      if (driver.cuCtxGetId == nullptr || driver.cuCtxGetId(context, &driver_id) != CUDA_SUCCESS ||
          driver.cuCtxGetDevice == nullptr || driver.cuCtxGetDevice(&device, context) != CUDA_SUCCESS) {
        return false;
      }
      context_id = static_cast<uint32_t>(driver_id);  // translated by the writer
      device_id = static_cast<uint32_t>(device);      // the ordinal, as CUPTI's device id
    } else if (cuptiGetContextId(context, &context_id) != CUPTI_SUCCESS ||
               cuptiGetDeviceId(context, &device_id) != CUPTI_SUCCESS) {
      return false;
    }
    caches.context = context;
    caches.context_id = context_id;
    caches.device_id = device_id;
  }
  call->context_id = caches.context_id;
  call->device_id = caches.device_id;
  return true;
}

uint32_t LightTracer::StreamId(CUcontext context, CUstream stream) {
  ThreadCaches& caches = t_caches;
  const uint64_t epoch = g_streams_epoch.load(std::memory_order_acquire);
  if (caches.streams_epoch != epoch) {
    caches.streams.fill({});
    caches.streams_epoch = epoch;
  }
  for (const ThreadCaches::StreamEntry& entry : caches.streams) {
    if (entry.context == context && entry.stream == stream && entry.context != nullptr) return entry.id;
  }
  uint32_t id = 0;
  const bool per_thread = stream == CU_STREAM_PER_THREAD;
  if (options_.cupti_free) {
    const DriverApi& driver = Driver();
    unsigned long long driver_id = 0;
    if (driver.cuStreamGetId == nullptr || driver.cuStreamGetId(stream, &driver_id) != CUDA_SUCCESS) return 0;
    id = static_cast<uint32_t>(driver_id);  // translated by the writer
  } else if (cuptiGetStreamIdEx(context, per_thread ? nullptr : stream, per_thread ? 1 : 0, &id) != CUPTI_SUCCESS) {
    return 0;
  }
  caches.streams[caches.next_stream_slot] = {context, stream, id};
  caches.next_stream_slot = (caches.next_stream_slot + 1) % caches.streams.size();
  return id;
}

HookedLaunchThread& ThisThreadsHookedLaunch() {
  thread_local HookedLaunchThread state;
  return state;
}

void LightTracer::OnHookedKernelLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context,
                                       uint32_t correlation) {
  hooked_launches_.fetch_add(1, std::memory_order_relaxed);
  RecordKernelLaunch(cbid, params, context, correlation);
}

void LightTracer::OnHookedGraphLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context,
                                      uint32_t correlation) {
  hooked_launches_.fetch_add(1, std::memory_order_relaxed);
  RecordGraphLaunch(cbid, params, context, correlation);
}

void LightTracer::RecordKernelLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context,
                                     uint32_t correlation) {
  const LaunchArgs args = ReadLaunchArgs(cbid, params);
  if (args.function == nullptr) return;
  if (Capturing(args.stream)) return;
  LaunchCall call;
  call.function = Facts(args.function);
  if (call.function == nullptr) {
    functions_unreadable_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!FillContext(context, &call)) return;
  for (int i = 0; i < 3; ++i) {
    call.grid[i] = args.grid[i];
    call.block[i] = args.block[i];
    call.cluster[i] = call.function->required_cluster[i];
  }
  call.dynamic_shared_memory = args.dynamic_smem;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
      cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz) {
    call.launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
    ApplyLaunchAttributes(static_cast<const cuLaunchKernelEx_params*>(params)->config, &call);
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
    ApplyLaunchAttributes(static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config, &call);
  }
  call.stream_id = StreamId(context, args.stream);
  call.correlation_id = correlation;
  call.api_start_ns = Now();
  streams_->Append(call);
}

void LightTracer::RecordGraphLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context,
                                    uint32_t correlation) {
  CUgraphExec exec = nullptr;
  CUstream stream = nullptr;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) {
    const auto* graph_params = static_cast<const cuGraphLaunch_params*>(params);
    exec = graph_params->hGraph;
    stream = graph_params->hStream;
  } else {
    const auto* graph_params = static_cast<const cuGraphLaunch_ptsz_params*>(params);
    exec = graph_params->hGraphExec;
    stream = graph_params->hStream;
    if (stream == nullptr) stream = CU_STREAM_PER_THREAD;
  }
  if (Capturing(stream)) return;
  if (!graphs_seen_.load(std::memory_order_relaxed)) graphs_seen_.store(true, std::memory_order_relaxed);
  LaunchCall call;
  {
    Registry& registry = TheRegistry();
    std::lock_guard lock(registry.mutex);
    if (auto it = registry.by_graph_exec.find(exec); it != registry.by_graph_exec.end()) call.graph = it->second;
  }
  if (!FillContext(context, &call)) return;
  if (call.graph == nullptr) {
    unknown_graph_launches_.fetch_add(1, std::memory_order_relaxed);
    call.unknown_graph = 1;
  }
  call.stream_id = StreamId(context, stream);
  call.correlation_id = correlation;
  call.api_start_ns = Now();
  streams_->Append(call);
}

void LightTracer::OnGraphExecCreated(const CUpti_ResourceData* resource) {
  const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
  if (graph == nullptr || graph->graphExec == nullptr) return;
  GraphExecFacts facts;
  CUgraph source = graph->graph != nullptr ? graph->graph : graph->originalGraph;
  if (source == nullptr) {
    facts.complete = false;
  } else {
    uint32_t graph_id = 0;
    if (cuptiGetGraphId(source, &graph_id) == CUPTI_SUCCESS) facts.graph_id = graph_id;
    CollectKernelNodes(source, 0, &facts, /*cupti_ids=*/true);
  }
  t_graph_exec_from_callback = graph->graphExec;
  graphs_seen_.store(true, std::memory_order_relaxed);
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  registry.by_graph_exec[graph->graphExec] = &registry.graphs.emplace_back(std::move(facts));
}

void LightTracer::BeginHookedInstantiation() { t_graph_exec_from_callback = nullptr; }

void LightTracer::OnHookedGraphInstantiated(CUgraphExec exec, CUgraph graph) {
  if (exec == nullptr || t_graph_exec_from_callback == exec) return;  // CUPTI's callback read it
  // Read without CUPTI: no node ids (0), no graph id. Timed records of its kernels then match
  // the configuration by shape (trace_writer_light.cc).
  GraphExecFacts facts;
  if (graph == nullptr) {
    facts.complete = false;
  } else {
    CollectKernelNodes(graph, 0, &facts, /*cupti_ids=*/false);
  }
  graphs_read_by_hook_.fetch_add(1, std::memory_order_relaxed);
  graphs_seen_.store(true, std::memory_order_relaxed);
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  registry.by_graph_exec[exec] = &registry.graphs.emplace_back(std::move(facts));
}

void LightTracer::OnHookedModuleUnload() {
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  registry.by_function.clear();
  g_functions_epoch.fetch_add(1, std::memory_order_acq_rel);
}

uint64_t LightTracer::Now() const {
  if (options_.cupti_free) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(now.tv_nsec);
  }
  uint64_t now = 0;
  return cuptiGetTimestamp(&now) == CUPTI_SUCCESS ? now : 0;
}

// Inside a driver launch callback, so CUPTI is attached: CUPTI's ids and the driver's for the
// launch's context and stream, once per thread and stream.
void LightTracer::LearnIds(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  const DriverApi& driver = Driver();
  ThreadCaches& caches = t_caches;
  CUcontext context = data->context;
  if (context == nullptr || driver.cuCtxGetId == nullptr || driver.cuStreamGetId == nullptr) return;
  if (caches.learned_context != context) {
    uint32_t cupti_id = 0;
    unsigned long long driver_id = 0;
    if (cuptiGetContextId(context, &cupti_id) == CUPTI_SUCCESS && driver.cuCtxGetId(context, &driver_id) == CUDA_SUCCESS) {
      ids_->LearnContext(driver_id, cupti_id);
      caches.learned_context = context;
    }
  }
  CUstream stream = nullptr;
  if (IsKernelLaunchCbid(cbid)) {
    stream = ReadLaunchArgs(cbid, data->functionParams).stream;
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) {
    stream = static_cast<const cuGraphLaunch_params*>(data->functionParams)->hStream;
  } else {
    stream = static_cast<const cuGraphLaunch_ptsz_params*>(data->functionParams)->hStream;
    if (stream == nullptr) stream = CU_STREAM_PER_THREAD;
  }
  const uint64_t epoch = g_streams_epoch.load(std::memory_order_acquire);
  if (caches.learned_streams_epoch != epoch) {
    caches.learned_streams.fill({});
    caches.learned_streams_epoch = epoch;
  }
  for (const auto& [learned_context, learned_stream] : caches.learned_streams) {
    if (learned_context == context && learned_stream == stream) return;
  }
  const bool per_thread = stream == CU_STREAM_PER_THREAD;
  uint32_t cupti_id = 0;
  unsigned long long driver_id = 0;
  // Never ask for a capturing stream's id: cuStreamGetId is not allowed there, and the failed
  // call invalidates the program's capture (launch_matrix's cudaStreamEndCapture failed on an
  // H100, 2026-11-25). Learned at its next launch outside the capture.
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (driver.cuStreamIsCapturing == nullptr || driver.cuStreamIsCapturing(stream, &capture) != CUDA_SUCCESS ||
      capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    return;
  }
  if (cuptiGetStreamIdEx(context, per_thread ? nullptr : stream, per_thread ? 1 : 0, &cupti_id) != CUPTI_SUCCESS ||
      driver.cuStreamGetId(stream, &driver_id) != CUDA_SUCCESS) {
    return;
  }
  ids_->LearnStream(driver_id, cupti_id);
  caches.learned_streams[caches.next_learned_slot] = {context, stream};
  caches.next_learned_slot = (caches.next_learned_slot + 1) % caches.learned_streams.size();
}

}  // namespace occ::inj
