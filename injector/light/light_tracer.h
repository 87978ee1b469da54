// Light tracing's callback side (OCCTRACE_MODE=light): every kernel launch from CUPTI's launch
// callbacks instead of its kernel activity records, which stay off except in timing windows
// (kernel_windows.h).
//
// Per launch, on the launching thread: the driver launch callback's EXIT (only launches that
// succeeded count, as only those produce a kernel record) reads the configuration from the
// API's parameters, looks up the function's facts (read once per CUfunction with
// cuFuncGetName / cuFuncGetAttribute, cached per thread) and the CUPTI context and stream ids
// (cached per thread), and appends one LaunchCall to the thread's stream (launch_calls.h).
// Nothing else: parsing into rows and SQLite happen on the writer thread.
//
// Counting each launch once, and only launches that run: a launch into a stream being captured
// is a graph node, not a kernel run, and is skipped (its runs are the graph's launches).
// Counting each launch once: a runtime launch (cudaLaunchKernel, CUDA 13's __cudaLaunchKernel)
// reaches the driver's launch entry point beneath it, so only the driver callbacks record, with
// the driver call's correlation id (as the achieved-occupancy samples of a light trace do; the
// kernel record of a runtime launch carries the runtime call's). Graph launches record one call naming the
// instantiated graph, whose kernel nodes were read when it was instantiated
// (CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED); the writer expands it into one launch per node.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>

#include "injector/light/id_translation.h"
#include "injector/light/launch_calls.h"

namespace occ::inj {

// Light tracing takes the driver launch callbacks only: the runtime ones (for the outermost
// correlation id, the kernel record's) cost ~1 us per launch (H100, 2026-11-25), and timed
// launches find their configuration by shape. Stream-capture callbacks tell a launch into a capturing stream without a
// driver call per launch (attached only).
struct LightTracerOptions {
  // OCCTRACE_LIGHT_DETACH=1 (cupti_controller.h): CUPTI is finalized between timing windows,
  // so recording a launch calls no CUPTI function. Instead: the driver's context and stream
  // ids (the writer translates them to CUPTI's, id_translation.h), CLOCK_REALTIME (CUPTI's
  // clock on Linux, its header says; equal to cuptiGetTimestamp within 0.2 us on an H100,
  // 2026-11-25), the driver asked whether a stream is capturing (the capture callbacks are
  // gone while detached), and graphs read when the launch hook sees them instantiated.
  bool cupti_free = false;
};

// The launch hook's per-thread state (launch_hook.h): inside a hooked launch call, `depth` > 0;
// a CUPTI launch callback that fires inside it leaves the driver call's correlation id here
// instead of recording the launch itself.
struct HookedLaunchThread {
  int depth = 0;
  uint32_t correlation = 0;
};
HookedLaunchThread& ThisThreadsHookedLaunch();

class LightTracer {
 public:
  // `on_new_function`: called (on the launching thread) the first time a function is launched,
  // so that the writer can open a timing window while the new kernel runs. Must not block.
  LightTracer(LaunchCallStreams* streams, std::function<void()> on_new_function,
              LightTracerOptions options = {})
      : streams_(streams), on_new_function_(std::move(on_new_function)), options_(options) {}

  // Enables the launch, graph-instantiation, module-unload and stream-destroy callbacks.
  bool EnableCallbacks(CUpti_SubscriberHandle subscriber);
  // The launch hook (launch_hook.h) calls these after a hooked launch call succeeded, on the
  // launching thread; `params` is the driver callback's parameter struct for `cbid`.
  // `correlation`: the driver call's, when a CUPTI launch callback told it (else 0).
  void OnHookedKernelLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context, uint32_t correlation);
  void OnHookedGraphLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context, uint32_t correlation);
  // CUPTI detached between windows (LightTracerOptions::cupti_free): the launch hook's graph
  // instantiation and module unload entry points. BeginHookedInstantiation before the real
  // call; OnHookedGraphInstantiated after it succeeded reads the graph's kernel nodes unless
  // CUPTI's GRAPHEXEC_CREATED callback did during the call (attached: it knows node ids).
  static void BeginHookedInstantiation();
  void OnHookedGraphInstantiated(CUgraphExec exec, CUgraph graph);
  void OnHookedModuleUnload();
  // Where launch callbacks (attached) learn CUPTI's ids for the driver's (cupti_free only).
  void SetIdTranslation(IdTranslation* ids) { ids_ = ids; }
  uint64_t graphs_read_by_hook() const { return graphs_read_by_hook_.load(std::memory_order_relaxed); }
  // A CUDA graph was instantiated or a stream captured. Light tracing then stops detaching
  // CUPTI: the one torch.compile + CUDA graphs run that detached after graphs existed ended
  // in "unspecified launch failure" (H100, 2026-11-25), and graphs launched while CUPTI's
  // kernel records were on may keep what CUPTI set up for them.
  bool graphs_seen() const { return graphs_seen_.load(std::memory_order_relaxed); }
  // Functions launched for the first time so far (their facts read).
  uint64_t new_functions() const { return new_functions_.load(std::memory_order_relaxed); }
  // From now on, a launch callback outside a hooked call is a launch the hook missed: it is
  // recorded from the callback as before and counted.
  void SetHookInstalled() { hook_installed_.store(true, std::memory_order_release); }
  uint64_t launches_outside_hook() const { return launches_outside_hook_.load(std::memory_order_relaxed); }
  uint64_t hooked_launches() const { return hooked_launches_.load(std::memory_order_relaxed); }
  // Every callback of the subscriber; ignores what is not light tracing's.
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);

  uint64_t unknown_graph_launches() const { return unknown_graph_launches_.load(std::memory_order_relaxed); }
  uint64_t functions_unreadable() const { return functions_unreadable_.load(std::memory_order_relaxed); }
  // Launches into a stream being captured into a graph: they run only as the graph's nodes,
  // counted when the graph is launched.
  uint64_t captured_launches() const { return captured_launches_.load(std::memory_order_relaxed); }

 private:
  void RecordKernelLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context, uint32_t correlation);
  void RecordGraphLaunch(CUpti_CallbackId cbid, const void* params, CUcontext context, uint32_t correlation);
  void OnGraphExecCreated(const CUpti_ResourceData* resource);
  void LearnIds(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  uint64_t Now() const;
  bool FillContext(CUcontext context, LaunchCall* call);
  uint32_t StreamId(CUcontext context, CUstream stream);
  bool Capturing(CUstream stream);
  const FunctionFacts* Facts(CUfunction function);

  LaunchCallStreams* streams_;
  std::function<void()> on_new_function_;
  LightTracerOptions options_;
  // Stream captures in progress (cuStreamBeginCapture* .. cuStreamEndCapture*): only while one
  // is, a launch asks the driver whether its own stream is capturing.
  std::atomic<int> active_captures_{0};
  std::atomic<uint64_t> captured_launches_{0};
  std::atomic<uint64_t> unknown_graph_launches_{0};
  std::atomic<uint64_t> functions_unreadable_{0};
  std::atomic<bool> hook_installed_{false};
  std::atomic<uint64_t> launches_outside_hook_{0};
  std::atomic<uint64_t> hooked_launches_{0};
  std::atomic<uint64_t> graphs_read_by_hook_{0};
  std::atomic<bool> graphs_seen_{false};
  std::atomic<uint64_t> new_functions_{0};
  IdTranslation* ids_ = nullptr;
};

// The facts of `function`, read on first use and kept for the life of the process (null when
// the driver cannot name it). Thread-safe; cached per thread.
const FunctionFacts* FactsOfFunction(CUfunction function);

}  // namespace occ::inj
