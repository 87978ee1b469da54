#include "injector/achieved/profiler_host.h"

#include <cupti_target.h>

#include <mutex>
#include <utility>

#include "injector/common/errors.h"

namespace occ::inj {
namespace {

const char* SupportLevelName(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    default: return "unknown";
  }
}

std::mutex& InitMutex() {
  static std::mutex mutex;
  return mutex;
}
int g_profiler_users = 0;  // guarded by InitMutex()

}  // namespace

std::string ProfilerError::Message() const {
  if (ok()) return "ok";
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "?";
  std::string message = call + " failed: " + text;
  if (!detail.empty()) message += " (" + detail + ")";
  return message;
}

bool CheckCupti(CUptiResult result, const char* call, ProfilerError* error) {
  if (result == CUPTI_SUCCESS) return true;
  error->call = call;
  error->result = result;
  return false;
}

bool ProfilerHost::InitializeProfiler(ProfilerError* error) {
  std::lock_guard<std::mutex> lock(InitMutex());
  if (g_profiler_users > 0) {
    ++g_profiler_users;
    return true;
  }
  CUpti_Profiler_Initialize_Params params{CUpti_Profiler_Initialize_Params_STRUCT_SIZE, nullptr};
  if (!CheckCupti(cuptiProfilerInitialize(&params), "cuptiProfilerInitialize", error)) {
    return false;
  }
  g_profiler_users = 1;
  return true;
}

void ProfilerHost::DeinitializeProfiler() {
  std::lock_guard<std::mutex> lock(InitMutex());
  if (g_profiler_users == 0 || --g_profiler_users > 0) return;
  CUpti_Profiler_DeInitialize_Params params{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE,
                                            nullptr};
  cuptiProfilerDeInitialize(&params);
}

bool ProfilerHost::DeviceSupported(uint32_t device_index, CUpti_Profiler_API api, ProfilerError* error) {
  CUdevice device = 0;
  if (Driver().cuDeviceGet == nullptr ||
      Driver().cuDeviceGet(&device, static_cast<int>(device_index)) != CUDA_SUCCESS) {
    error->call = "cuDeviceGet";
    error->result = CUPTI_ERROR_UNKNOWN;
    return false;
  }
  CUpti_Profiler_DeviceSupported_Params supported{};
  supported.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  supported.cuDevice = device;
  supported.api = api;
  if (!CheckCupti(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported",
                  error)) {
    return false;
  }
  if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    error->call = "cuptiProfilerDeviceSupported";
    error->result = CUPTI_ERROR_NOT_SUPPORTED;
    error->detail = "device " + std::to_string(device_index) + ": architecture " +
                    SupportLevelName(supported.architecture) + ", sli " + SupportLevelName(supported.sli) +
                    ", vGpu " + SupportLevelName(supported.vGpu) + ", confidentialCompute " +
                    SupportLevelName(supported.confidentialCompute) + ", cmp " + SupportLevelName(supported.cmp) +
                    ", wsl " + SupportLevelName(supported.wsl);
    return false;
  }
  return true;
}

bool ProfilerHost::ChipName(uint32_t device_index, std::string* chip_name, ProfilerError* error) {
  CUpti_Device_GetChipName_Params chip{};
  chip.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  chip.deviceIndex = device_index;
  if (!CheckCupti(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", error)) return false;
  *chip_name = chip.pChipName != nullptr ? chip.pChipName : "";
  return true;
}

std::unique_ptr<ProfilerHost> ProfilerHost::Create(CUpti_ProfilerType type, const std::string& chip_name,
                                                   const std::vector<uint8_t>& counter_availability,
                                                   ProfilerError* error) {
  CUpti_Profiler_Host_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  init.profilerType = type;
  init.pChipName = chip_name.c_str();
  init.pCounterAvailabilityImage = counter_availability.data();
  if (!CheckCupti(cuptiProfilerHostInitialize(&init), "cuptiProfilerHostInitialize", error)) return nullptr;
  return std::unique_ptr<ProfilerHost>(new ProfilerHost(init.pHostObject));
}

ProfilerHost::~ProfilerHost() {
  CUpti_Profiler_Host_Deinitialize_Params deinit{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE, nullptr,
                                                 host_};
  cuptiProfilerHostDeinitialize(&deinit);
}

bool ProfilerHost::AddMetrics(std::vector<const char*> metrics, ProfilerError* error) {
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
  add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  add.pHostObject = host_;
  add.ppMetricNames = metrics.data();
  add.numMetrics = metrics.size();
  if (!CheckCupti(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics", error)) {
    return false;
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params image_size{};
  image_size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  image_size.pHostObject = host_;
  if (!CheckCupti(cuptiProfilerHostGetConfigImageSize(&image_size), "cuptiProfilerHostGetConfigImageSize",
                  error)) {
    return false;
  }
  config_image_bytes_ = image_size.configImageSize;
  return true;
}

bool ProfilerHost::ConfigImage(std::vector<uint8_t>* image, size_t* passes, ProfilerError* error) {
  image->assign(config_image_bytes_, 0);
  CUpti_Profiler_Host_GetConfigImage_Params get_image{};
  get_image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  get_image.pHostObject = host_;
  get_image.configImageSize = image->size();
  get_image.pConfigImage = image->data();
  if (!CheckCupti(cuptiProfilerHostGetConfigImage(&get_image), "cuptiProfilerHostGetConfigImage", error)) {
    return false;
  }
  CUpti_Profiler_Host_GetNumOfPasses_Params num_passes{};
  num_passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
  num_passes.configImageSize = image->size();
  num_passes.pConfigImage = image->data();
  if (!CheckCupti(cuptiProfilerHostGetNumOfPasses(&num_passes), "cuptiProfilerHostGetNumOfPasses", error)) {
    return false;
  }
  *passes = num_passes.numOfPasses;
  return true;
}

bool ProfilerHost::Evaluate(const std::vector<uint8_t>& counter_data, size_t range_index,
                            std::span<const char*> metrics, std::span<double> values, ProfilerError* error) {
  if (values.size() < metrics.size()) {
    // CUPTI would write past `values`: refused before the call.
    error->call = "cuptiProfilerHostEvaluateToGpuValues";
    error->result = CUPTI_ERROR_INVALID_PARAMETER;
    error->detail = std::to_string(metrics.size()) + " metrics, values for " + std::to_string(values.size());
    return false;
  }
  CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{};
  evaluate.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
  evaluate.pHostObject = host_;
  evaluate.pCounterDataImage = counter_data.data();
  evaluate.counterDataImageSize = counter_data.size();
  evaluate.rangeIndex = range_index;
  evaluate.ppMetricNames = metrics.data();
  evaluate.numMetrics = metrics.size();
  evaluate.pMetricValues = values.data();
  return CheckCupti(cuptiProfilerHostEvaluateToGpuValues(&evaluate), "cuptiProfilerHostEvaluateToGpuValues", error);
}

}  // namespace occ::inj
