#include "injector/achieved/replay/achieved_status.h"

#include "injector/common/errors.h"

namespace occ::inj {

void AchievedStatus::Fail(const ProfilerError& error) {
  std::string status;
  std::string message;
  if (error.insufficient_privileges()) {
    status = "no-permission: " + error.Message();
    message =
        "achieved occupancy not measured: no permission to read GPU performance "
        "counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); tracing continues. To enable: run as "
        "root or with CAP_PERFMON / CAP_SYS_ADMIN, or load the nvidia module with "
        "NVreg_RestrictProfilingToAdminUsers=0 "
        "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
  } else if (error.result == CUPTI_ERROR_NOT_SUPPORTED ||
             error.result == CUPTI_ERROR_NOT_COMPATIBLE) {
    status = "unsupported: " + error.Message();
    message = "achieved occupancy not measured on this device: " + error.Message() +
              "; tracing continues";
  } else {
    status = "error: " + error.Message();
    message = "achieved occupancy measurement stopped: " + error.Message() +
              "; tracing continues";
  }
  disabled_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!status_.empty()) return;  // one line per run
  status_ = status;
  LogLine("%s", message.c_str());
}

void AchievedStatus::FailWith(const std::string& status) {
  disabled_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_.empty()) {
    status_ = status;
    LogLine("achieved occupancy not measured: %s", status.c_str());
  }
}

void AchievedStatus::SetProfiler(const std::string& chip,
                                 const std::vector<const char*>& metrics) {
  std::lock_guard<std::mutex> lock(mutex_);
  chip_ = chip;
  metrics_.clear();
  for (const char* metric : metrics) {
    if (!metrics_.empty()) metrics_ += ",";
    metrics_ += metric;
  }
}

AchievedStatus::Snapshot AchievedStatus::Read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Snapshot{status_, metrics_, chip_};
}

}  // namespace occ::inj
