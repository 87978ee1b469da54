#include "injector/achieved/replay/achieved_launch_path.h"

#include <cupti.h>  // also brings generated_cuda_meta.h (launch parameter structs)

#include <utility>

#include "injector/achieved/achieved_launch.h"
#include "injector/achieved/achieved_policy.h"

namespace occ::inj {

struct PendingLaunch {
  std::shared_ptr<ContextState> context;
  std::unique_lock<std::timed_mutex> lock;  // after `context`: released before it is dropped
  bool measuring = false;
  LaunchSignature signature;
  AchievedSample sample;
  int64_t start_ns = 0;
  int64_t started_ns = 0;  // when the profiler's Start returned
};

// Contexts a thread launched into recently. A program uses a handful of contexts (one per
// device, green contexts); a thread driving more than this takes the table's mutex on misses.
constexpr size_t kCachedContexts = 4;

struct LaunchThreadState {
  struct CachedContext {
    CUcontext ctx = nullptr;
    std::shared_ptr<ContextState> state;  // keeps it alive while cached (DestroyContext erases)
  };

  // Valid while equal to the owning profiler's contexts_version_. Versions come from one
  // process-wide counter, so a cache filled by another profiler instance never matches.
  uint64_t contexts_version = 0;
  std::array<CachedContext, kCachedContexts> contexts;
  size_t next_context_slot = 0;
  AchievedPolicy::ThreadCache exhausted;
  OuterCorrelation correlation;
  bool in_launch = false;
  PendingLaunch pending;
};

namespace {

thread_local LaunchThreadState t_thread;

}  // namespace

AchievedLaunchPath::AchievedLaunchPath(AchievedSink sink, AchievedConfig config,
                                       std::unique_ptr<ProfilerDevice> device, NanoClock clock,
                                       int64_t start_ns)
    : AchievedParking(config, std::move(device), std::move(clock), start_ns),
      sink_(std::move(sink)),
      policy_name_(AchievedModeName(config.mode)) {}

void AchievedLaunchPath::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                    const void* cbdata) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
      if (IsRuntimeLaunchCbid(cbid)) {
        OnRuntimeLaunch(static_cast<const CUpti_CallbackData*>(cbdata));
      }
      break;
    case CUPTI_CB_DOMAIN_DRIVER_API:
      if (IsKernelLaunchCbid(cbid)) {
        OnKernelLaunch(cbid, static_cast<const CUpti_CallbackData*>(cbdata));
      } else if (IsGraphLaunchCbid(cbid)) {
        OnGraphLaunch(static_cast<const CUpti_CallbackData*>(cbdata));
      }
      break;
    case CUPTI_CB_DOMAIN_RESOURCE: {
      const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        if (!status_.disabled()) OnContextCreated(resource->context);
      } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        DestroyContext(resource->context);
      }
      break;
    }
    default:
      break;
  }
}

void AchievedLaunchPath::OnRuntimeLaunch(const CUpti_CallbackData* data) {
  LaunchThreadState& thread = t_thread;
  thread.correlation.OnRuntimeLaunch(data->callbackSite == CUPTI_API_ENTER,
                                     data->correlationId);
}

uint32_t AchievedLaunchPath::CorrelationId(const CUpti_CallbackData* data) const {
  if (policy_.config().light_tracing) return data->correlationId;
  return t_thread.correlation.ForDriverLaunch(data->correlationId);
}

void AchievedLaunchPath::OnKernelLaunch(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  LaunchThreadState& thread = t_thread;
  if (data->callbackSite == CUPTI_API_ENTER) {
    // A pending launch whose EXIT never came keeps in_launch set: this thread's ENTERs are
    // then ignored and its next EXIT closes the pending one (releasing its context).
    if (thread.in_launch || status_.disabled()) return;
    thread.in_launch = true;
    OnKernelLaunchEnter(&thread, cbid, data);
  } else if (thread.in_launch) {
    thread.in_launch = false;
    OnKernelLaunchExit(data, &thread.pending);
  }
}

void AchievedLaunchPath::GiveUpSample(const LaunchSignature& signature, int64_t profiling_ns,
                                      const ProfilerError& error) {
  if (error.result == CUPTI_ERROR_HARDWARE_BUSY) {
    policy_.Release(signature);
  } else {
    policy_.Finish(signature, profiling_ns, false);
  }
}

void AchievedLaunchPath::OnKernelLaunchEnter(LaunchThreadState* thread, CUpti_CallbackId cbid,
                                             const CUpti_CallbackData* data) {
  const std::shared_ptr<ContextState>* cached = ContextForLaunch(thread, data->context);
  if (cached == nullptr) return;
  ContextState* state = cached->get();
  const LaunchArgs args = ReadLaunchArgs(cbid, data->functionParams);
  const LaunchSignature signature = SignatureOf(data->context, args);
  std::unique_lock<std::timed_mutex> lock;
  AchievedPolicy::Decision decision;
  if (!DecideAndLock(*cached, signature, thread, &lock, &decision)) return;

  AchievedSample sample;
  sample.correlation_id = CorrelationId(data);
  sample.context_id = data->contextUid;
  sample.policy = policy_name_;
  sample.sample_index = decision.sample_index;

  // Starting the profiler while the stream captures breaks the capture (the app's
  // cudaStreamEndCapture fails): never measure a capturing launch. The sample is given back:
  // the kernel may still run eagerly later.
  if (device_->StreamMayBeCapturing(args.stream)) {
    policy_.Release(signature);
    sample.status = "capturing";
    Emit(std::move(sample), /*measured=*/false);
    if (state->profiler) HoldUntilExit(*cached, std::move(lock), &thread->pending);
    return;
  }
  StartMeasurement(*cached, signature, std::move(sample), std::move(lock), data->context, &thread->pending);
}

bool AchievedLaunchPath::DecideAndLock(const std::shared_ptr<ContextState>& context,
                                       const LaunchSignature& signature, LaunchThreadState* thread,
                                       std::unique_lock<std::timed_mutex>* lock,
                                       AchievedPolicy::Decision* decision) {
  ContextState* state = context.get();
  // While the profiler is enabled, every launch in the context holds its mutex until EXIT, so
  // no launch from another thread lands in a measured range. A parked context has nothing
  // to protect: only a launch that is to be measured takes the mutex (and re-enables).
  bool decided = false;
  if (!state->parked.load(std::memory_order_acquire)) {
    *lock = LockContext(state);
    if (!lock->owns_lock()) return false;  // a stuck holder: go ahead unmeasured (LockContext)
    if (!state->parked.load(std::memory_order_relaxed)) {
      if (!state->profiler) return false;  // failed, or its context is being destroyed
      *decision = policy_.Decide(signature, &thread->exhausted);
      decided = true;
      if (!decision->measure) {
        if (ShouldPark()) {
          Park(state);
          return false;
        }
        HoldUntilExit(context, std::move(*lock), &thread->pending);
        return false;
      }
    } else {
      lock->unlock();  // parked while this launch waited
    }
  }
  if (!decided) {
    *decision = policy_.Decide(signature, &thread->exhausted);
    if (!decision->measure) return false;
    if (!BusyWaitOver(*state)) {  // another process holds the GPU's profiler: not yet
      policy_.Release(signature);
      return false;
    }
    *lock = LockContext(state);
    if (!lock->owns_lock()) {
      policy_.Release(signature);
      return false;
    }
  }
  return true;
}

void AchievedLaunchPath::StartMeasurement(const std::shared_ptr<ContextState>& context,
                                          const LaunchSignature& signature, AchievedSample sample,
                                          std::unique_lock<std::timed_mutex> lock, CUcontext ctx,
                                          PendingLaunch* pending) {
  ContextState* state = context.get();
  // Re-enabling a parked profiler is part of this sample's cost (charged to the budget).
  const int64_t start_ns = clock_();
  ProfilerError error;
  // A setup that failed while this launch waited for the lock (the setup thread's) has
  // stopped measurement: one attempt per run, not another one here.
  if (status_.disabled()) {
    policy_.Release(signature);
    return;
  }
  if (state->parked.load(std::memory_order_relaxed)) {
    if (!BusyWaitOver(*state)) {  // found busy while this launch waited for the lock
      policy_.Release(signature);
      return;
    }
    if (!Unpark(state, ctx, &error)) {
      GiveUpSample(signature, clock_() - start_ns, error);
      FailContext(state, error);
      return;
    }
  }
  if (!state->profiler) {
    policy_.Release(signature);
    return;
  }
  const int64_t before_start_ns = clock_();
  if (!state->profiler->Start(&error)) {
    GiveUpSample(signature, clock_() - start_ns, error);
    FailContext(state, error);
    return;
  }
  const int64_t started_ns = clock_();
  phase_ns_[kPhaseStart].fetch_add(started_ns - before_start_ns, std::memory_order_relaxed);
  HoldUntilExit(context, std::move(lock), pending);
  pending->measuring = true;
  pending->signature = signature;
  pending->sample = std::move(sample);
  pending->start_ns = start_ns;
  pending->started_ns = started_ns;
}

void AchievedLaunchPath::HoldUntilExit(const std::shared_ptr<ContextState>& state,
                                       std::unique_lock<std::timed_mutex> lock,
                                       PendingLaunch* pending) {
  // Its own reference, so that the pending launch does not depend on what the thread's
  // context cache keeps; taken while the lock serializes the context's launches, so the
  // reference count is not contended.
  pending->context = state;
  pending->lock = std::move(lock);
  pending->measuring = false;
}

void AchievedLaunchPath::OnKernelLaunchExit(const CUpti_CallbackData* data,
                                            PendingLaunch* pending) {
  if (!pending->context) return;
  std::shared_ptr<ContextState> state = std::move(pending->context);
  std::unique_lock<std::timed_mutex> lock = std::move(pending->lock);
  if (!pending->measuring) return;
  pending->measuring = false;
  AchievedSample sample = std::move(pending->sample);
  if (!state->profiler) return;

  ContextProfiler::Measurement measurement;
  ProfilerError error;
  const int64_t exit_ns = clock_();
  const bool decoded = state->profiler->StopAndDecode(&measurement, &error);
  const int64_t profiling_ns = clock_() - pending->start_ns;
  phase_ns_[kPhaseLaunch].fetch_add(exit_ns - pending->started_ns, std::memory_order_relaxed);
  phase_ns_[kPhaseStop].fetch_add(measurement.stop_ns, std::memory_order_relaxed);
  phase_ns_[kPhaseDecode].fetch_add(measurement.decode_ns, std::memory_order_relaxed);
  phase_ns_[kPhaseEvaluate].fetch_add(measurement.evaluate_ns, std::memory_order_relaxed);
  phase_ns_[kPhaseReset].fetch_add(measurement.reset_ns, std::memory_order_relaxed);
  const CUresult launch_result = data->functionReturnValue != nullptr
                                     ? *static_cast<const CUresult*>(data->functionReturnValue)
                                     : CUDA_SUCCESS;
  bool measured = false;
  if (!decoded) {
    sample.status = "error";
  } else if (launch_result != CUDA_SUCCESS) {
    sample.status = "launch-failed";
  } else if (measurement.num_ranges == 0) {
    sample.status = "no-range";
  } else if (measurement.num_ranges > 1) {
    // Another kernel ran in the context between Start and Stop (a launch without callback,
    // or one that raced a re-enable): the ranges cannot be told apart.
    sample.status = "multi-range";
  } else if (measurement.occupancy_pct < 0) {
    sample.status = "no-value";
  } else {
    measured = true;
    sample.status = "measured";
    sample.achieved_occupancy_pct = measurement.occupancy_pct;
    sample.warps_active_per_cycle = measurement.warps_per_cycle;
    sample.sm_cycles_active = measurement.cycles_active;
    sample.gpu_time_ns = measurement.gpu_time_ns;
    sample.dram_throughput_pct = measurement.dram_throughput_pct;
    sample.l2_throughput_pct = measurement.l2_throughput_pct;
    sample.l1_throughput_pct = measurement.l1_throughput_pct;
    sample.issue_slots_pct = measurement.issue_slots_pct;
    sample.tensor_pipe_pct = measurement.tensor_pipe_pct;
  }
  policy_.Finish(pending->signature, profiling_ns, measured);
  Emit(std::move(sample), measured);
  if (!decoded) FailContext(state.get(), error);
}

void AchievedLaunchPath::OnGraphLaunch(const CUpti_CallbackData* data) {
  if (data->callbackSite != CUPTI_API_ENTER || status_.disabled()) return;
  // Start/Stop around cuGraphLaunch yields no range (docs/achieved.md, Limitations): graph kernels are
  // recorded as not measured, one row per graph launch the policy picks.
  const auto* params = static_cast<const cuGraphLaunch_params*>(data->functionParams);
  LaunchSignature signature;
  signature.context = reinterpret_cast<uintptr_t>(data->context);
  signature.function = reinterpret_cast<uintptr_t>(params != nullptr ? params->hGraph : nullptr);
  signature.grid_x = signature.grid_y = signature.grid_z = 0;  // never a kernel's grid
  AchievedPolicy::Decision decision = policy_.Decide(signature, &t_thread.exhausted);
  if (!decision.measure) return;
  policy_.Finish(signature, 0, false);
  AchievedSample sample;
  sample.correlation_id = CorrelationId(data);
  sample.context_id = data->contextUid;
  sample.status = "graph";
  sample.policy = policy_name_;
  sample.sample_index = decision.sample_index;
  Emit(std::move(sample), false);
}

void AchievedLaunchPath::Emit(AchievedSample&& sample, bool measured) {
  if (!measured) not_measured_.fetch_add(1, std::memory_order_relaxed);
  sink_(std::move(sample));
}

const std::shared_ptr<ContextState>* AchievedLaunchPath::ContextForLaunch(
    LaunchThreadState* thread, CUcontext ctx) {
  if (ctx == nullptr) return nullptr;
  if (thread->contexts_version == contexts_version_.load(std::memory_order_acquire)) {
    for (const LaunchThreadState::CachedContext& cached : thread->contexts) {
      if (cached.ctx == ctx) return &cached.state;
    }
  }
  uint64_t version = 0;
  std::shared_ptr<ContextState> state = FindOrCreateContext(ctx, &version);
  if (!state) return nullptr;
  if (thread->contexts_version != version) {
    thread->contexts = {};
    thread->next_context_slot = 0;
    thread->contexts_version = version;
  }
  LaunchThreadState::CachedContext& slot = thread->contexts[thread->next_context_slot];
  thread->next_context_slot = (thread->next_context_slot + 1) % kCachedContexts;
  slot.ctx = ctx;
  slot.state = std::move(state);
  return &slot.state;
}

}  // namespace occ::inj
