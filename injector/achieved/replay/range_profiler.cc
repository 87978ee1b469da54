#include "injector/achieved/replay/range_profiler.h"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <chrono>
#include <string_view>

#include "injector/achieved/achieved_launch.h"
#include "injector/common/errors.h"

namespace occ::inj {
namespace {

// Per-launch Start/Stop holds one kernel; 2 leaves room for a launch the driver makes without
// a callback (CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API) so that ours is not dropped.
constexpr size_t kMaxRanges = 2;

// Makes `ctx` current on this thread for a scope. The setup and warm-up may run on occtrace's
// own setup thread, where no context is current; on an application thread the context is
// already current and this only pushes it once more.
class ScopedCurrentContext {
 public:
  explicit ScopedCurrentContext(CUcontext ctx) {
    const DriverApi& driver = Driver();
    if (ctx != nullptr && driver.cuCtxPushCurrent != nullptr && driver.cuCtxPopCurrent != nullptr) {
      pushed_ = driver.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
    }
  }
  ~ScopedCurrentContext() {
    CUcontext popped = nullptr;
    if (pushed_) Driver().cuCtxPopCurrent(&popped);
  }
  ScopedCurrentContext(const ScopedCurrentContext&) = delete;
  ScopedCurrentContext& operator=(const ScopedCurrentContext&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace

std::unique_ptr<ContextRangeProfiler> ContextRangeProfiler::Create(CUcontext ctx, ProfilerReplay replay,
                                                                   ProfilerError* error) {
  ScopedCurrentContext current(ctx);  // outlives `profiler`: a failed setup disables under it
  std::unique_ptr<ContextRangeProfiler> profiler(new ContextRangeProfiler(ctx, replay));
  if (!profiler->Setup(error)) return nullptr;
  return profiler;
}

bool ContextRangeProfiler::Setup(ProfilerError* error) {
  uint32_t device_index = 0;
  if (!CheckCupti(cuptiGetDeviceId(ctx_, &device_index), "cuptiGetDeviceId", error)) return false;
  if (!ProfilerHost::DeviceSupported(device_index, CUPTI_PROFILER_RANGE_PROFILING, error)) return false;
  if (!ProfilerHost::ChipName(device_index, &chip_name_, error)) return false;

  CUpti_Profiler_GetCounterAvailability_Params availability{};
  availability.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
  availability.ctx = ctx_;
  if (!CheckCupti(cuptiProfilerGetCounterAvailability(&availability),
                  "cuptiProfilerGetCounterAvailability", error)) {
    return false;
  }
  std::vector<uint8_t> availability_image(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = availability_image.data();
  if (!CheckCupti(cuptiProfilerGetCounterAvailability(&availability),
                  "cuptiProfilerGetCounterAvailability", error)) {
    return false;
  }

  if (!BuildConfig(availability_image, error)) return false;
  return EnableAndConfigure(error);
}

// With the configuration built (BuildConfig): the range profiler enabled on the context, its
// counter-data image allocated and the configuration set.
bool ContextRangeProfiler::EnableAndConfigure(ProfilerError* error) {
  CUpti_RangeProfiler_Enable_Params enable{};
  enable.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  enable.ctx = ctx_;
  if (!CheckCupti(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable", error)) {
    return false;
  }
  profiler_ = enable.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params size{};
  size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
  size.pRangeProfilerObject = profiler_;
  size.pMetricNames = metrics_.data();
  size.numMetrics = metrics_.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(kMaxRanges);
  if (!CheckCupti(cuptiRangeProfilerGetCounterDataSize(&size),
                  "cuptiRangeProfilerGetCounterDataSize", error)) {
    return false;
  }
  counter_data_.assign(size.counterDataSize, 0);
  if (!ResetCounterData(error)) return false;

  CUpti_RangeProfiler_SetConfig_Params config{};
  config.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  config.pRangeProfilerObject = profiler_;
  config.configSize = config_image_.size();
  config.pConfig = config_image_.data();
  config.counterDataImageSize = counter_data_.size();
  config.pCounterDataImage = counter_data_.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = replay_ == ProfilerReplay::kUser ? CUPTI_UserReplay : CUPTI_KernelReplay;
  config.maxRangesPerPass = kMaxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  return CheckCupti(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig", error);
}

bool ContextRangeProfiler::BuildConfig(const std::vector<uint8_t>& availability, ProfilerError* error) {
  // Try the full set first, then smaller ones, until one fits in a single pass: a second pass
  // would mean kernel replay with save/restore of device memory on the application's launch.
  const std::vector<std::vector<const char*>> candidates = {
      {kOccupancyMetric, kWarpsPerCycleMetric, kCyclesActiveMetric, kGpuTimeMetric,
       kDramThroughputMetric, kL2ThroughputMetric, kL1ThroughputMetric, kIssueSlotsMetric,
       kTensorPipeMetric},
      {kOccupancyMetric, kWarpsPerCycleMetric, kCyclesActiveMetric, kGpuTimeMetric},
      {kOccupancyMetric}};
  for (const std::vector<const char*>& metrics : candidates) {
    host_.reset();  // the previous candidate's, which needed more than one pass
    host_ = ProfilerHost::Create(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip_name_, availability, error);
    if (host_ == nullptr) return false;
    if (!host_->AddMetrics(metrics, error) || !host_->ConfigImage(&config_image_, &num_passes_, error)) {
      return false;
    }
    metrics_ = metrics;
    if (num_passes_ == 1) return true;
  }
  error->call = "cuptiProfilerHostGetNumOfPasses";
  error->result = CUPTI_ERROR_NOT_SUPPORTED;
  error->detail = std::string(kOccupancyMetric) + " needs " + std::to_string(num_passes_) +
                  " passes on " + chip_name_;
  return false;
}

bool ContextRangeProfiler::ResetCounterData(ProfilerError* error) {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
  init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  init.pRangeProfilerObject = profiler_;
  init.counterDataSize = counter_data_.size();
  init.pCounterData = counter_data_.data();
  return CheckCupti(cuptiRangeProfilerCounterDataImageInitialize(&init),
                    "cuptiRangeProfilerCounterDataImageInitialize", error);
}

bool ContextRangeProfiler::Start(ProfilerError* error) {
  CUpti_RangeProfiler_Start_Params start{};
  start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  start.pRangeProfilerObject = profiler_;
  if (!CheckCupti(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart", error)) return false;
  started_ = true;
  return true;
}

bool ContextRangeProfiler::StopAndDecode(Measurement* out, ProfilerError* error) {
  *out = Measurement{};
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto since = [&](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(now() - from).count();
  };
  auto phase = now();
  CUpti_RangeProfiler_Stop_Params stop{};
  stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  stop.pRangeProfilerObject = profiler_;
  started_ = false;
  if (!CheckCupti(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", error)) return false;
  if (replay_ == ProfilerReplay::kUser && stop.isAllPassSubmitted == 0) {
    // One pass was configured (BuildConfig): CUPTI asking for another is not something to
    // measure around a program's launch.
    error->call = "cuptiRangeProfilerStop";
    error->result = CUPTI_ERROR_NOT_SUPPORTED;
    error->detail = "user replay wants another pass";
    return false;
  }
  out->stop_ns = since(phase);
  phase = now();

  CUpti_RangeProfiler_DecodeData_Params decode{};
  decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  decode.pRangeProfilerObject = profiler_;
  if (!CheckCupti(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData",
                  error)) {
    return false;
  }
  out->ranges_dropped = decode.numOfRangeDropped;
  out->decode_ns = since(phase);
  phase = now();

  CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
  info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  if (!CheckCupti(cuptiRangeProfilerGetCounterDataInfo(&info),
                  "cuptiRangeProfilerGetCounterDataInfo", error)) {
    return false;
  }
  out->num_ranges = info.numTotalRanges;
  if (info.numTotalRanges > 0) {
    std::vector<double> values(metrics_.size(), -1.0);
    if (!host_->Evaluate(counter_data_, info.numTotalRanges - 1, metrics_, values, error)) return false;
    for (size_t i = 0; i < metrics_.size(); ++i) {
      const std::string_view name = metrics_[i];
      if (name == kOccupancyMetric) out->occupancy_pct = values[i];
      if (name == kWarpsPerCycleMetric) out->warps_per_cycle = values[i];
      if (name == kCyclesActiveMetric) out->cycles_active = values[i];
      if (name == kGpuTimeMetric) out->gpu_time_ns = values[i];
      if (name == kDramThroughputMetric) out->dram_throughput_pct = values[i];
      if (name == kL2ThroughputMetric) out->l2_throughput_pct = values[i];
      if (name == kL1ThroughputMetric) out->l1_throughput_pct = values[i];
      if (name == kIssueSlotsMetric) out->issue_slots_pct = values[i];
      if (name == kTensorPipeMetric) out->tensor_pipe_pct = values[i];
    }
  }
  out->evaluate_ns = since(phase);
  phase = now();
  const bool reset = ResetCounterData(error);
  out->reset_ns = since(phase);
  return reset;
}

bool ContextRangeProfiler::WarmUp(ProfilerError* error) {
  ScopedCurrentContext current(ctx_);
  Measurement discarded;
  return Start(error) && StopAndDecode(&discarded, error);
}

void ContextRangeProfiler::Disable() {
  if (profiler_ != nullptr) {
    if (started_) {
      CUpti_RangeProfiler_Stop_Params stop{};
      stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
      stop.pRangeProfilerObject = profiler_;
      cuptiRangeProfilerStop(&stop);
      started_ = false;
    }
    CUpti_RangeProfiler_Disable_Params disable{};
    disable.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
    disable.pRangeProfilerObject = profiler_;
    cuptiRangeProfilerDisable(&disable);
    profiler_ = nullptr;
  }
  host_.reset();
}

ContextRangeProfiler::~ContextRangeProfiler() { Disable(); }

namespace {

class CuptiProfilerDevice final : public ProfilerDevice {
 public:
  bool owns_launch_callbacks_ = true;
  ProfilerReplay replay_ = ProfilerReplay::kKernel;

  bool Initialize(ProfilerError* error) override { return ProfilerHost::InitializeProfiler(error); }
  void Deinitialize() override { ProfilerHost::DeinitializeProfiler(); }
  std::unique_ptr<ContextProfiler> CreateContextProfiler(CUcontext ctx,
                                                         ProfilerError* error) override {
    return ContextRangeProfiler::Create(ctx, replay_, error);
  }
  bool StreamMayBeCapturing(CUstream stream) override {
    const auto is_capturing = Driver().cuStreamIsCapturing;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    return is_capturing == nullptr || is_capturing(stream, &capture) != CUDA_SUCCESS ||
           capture != CU_STREAM_CAPTURE_STATUS_NONE;
  }
  bool EnableContextCallbacks(CUpti_SubscriberHandle subscriber, ProfilerError* error) override {
    return CheckCupti(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                          CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
                      "cuptiEnableCallback(CONTEXT_CREATED)", error) &&
           CheckCupti(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                          CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
                      "cuptiEnableCallback(CONTEXT_DESTROY_STARTING)", error);
  }
  bool SetLaunchCallbacks(CUpti_SubscriberHandle subscriber, bool on,
                          ProfilerError* error) override {
    if (!owns_launch_callbacks_) return true;
    const uint32_t enable = on ? 1 : 0;
    bool ok = true;
    for (CUpti_CallbackId cbid : kDriverLaunchCbids) {
      ok = ok && CheckCupti(cuptiEnableCallback(enable, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                            "cuptiEnableCallback(driver launch)", error);
    }
    for (CUpti_CallbackId cbid : kRuntimeLaunchCbids) {
      ok = ok && CheckCupti(cuptiEnableCallback(enable, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid),
                            "cuptiEnableCallback(runtime launch)", error);
    }
    return ok;
  }
};

}  // namespace

std::unique_ptr<ProfilerDevice> CreateCuptiProfilerDevice(bool owns_launch_callbacks, ProfilerReplay replay) {
  auto device = std::make_unique<CuptiProfilerDevice>();
  device->owns_launch_callbacks_ = owns_launch_callbacks;
  device->replay_ = replay;
  return device;
}

}  // namespace occ::inj
