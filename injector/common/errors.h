// The one place where CUPTI, CUDA driver and SQLite calls are checked. Each macro stringizes
// the call, adds file:line and the API's own error string, and forwards failures to one
// out-of-line function, so every failure message has the same shape:
//   occtrace: cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE) failed at cupti_tracer.cc:88: CUPTI_ERROR_... (code 1)
// SQLite is reached through occ::sql (sqlite_db.h), whose failures are Status values that
// already name the file, what failed and sqlite3_errmsg: OCC_SQL_* report those (no code).
// Nothing here throws: a tracer must never take the traced program down, so callers turn a
// failure into "tracing off" (the *_CHECK forms return false from the enclosing bool
// function; the *_LOG forms only log, for callbacks and destructors).
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <utility>

#include "base/status.h"

namespace occ::inj {

// Prints one "occtrace: ..." line to stderr (at most a few per process, so a broken
// environment cannot flood the program's output). Async-signal-unsafe.
// `consequence` (may be null) ends the line, e.g. "tracing off", so that one failure is one line.
// `code` 0: none to print (a Status, whose message says it all).
[[gnu::cold]] void ReportCallFailure(const char* call, const char* file, int line, long code,
                                     const char* message, const char* consequence);

// Every user-visible line goes through here: "occtrace: " + text + "\n" in one write(2).
void LogLine(const char* format, ...) __attribute__((format(printf, 1, 2)));

// The CUDA driver is not linked (the driver loads us; tests run without it): its entry points
// are resolved at run time from the already-loaded libcuda.so.1. Null when absent.
struct DriverApi {
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuDeviceGetPCIBusId) cuDeviceGetPCIBusId = nullptr;
  decltype(&::cuStreamIsCapturing) cuStreamIsCapturing = nullptr;
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent = nullptr;
  // Light tracing (light_tracer.cc): per-function facts and graph kernel nodes.
  decltype(&::cuFuncGetName) cuFuncGetName = nullptr;
  decltype(&::cuFuncGetAttribute) cuFuncGetAttribute = nullptr;
  decltype(&::cuGraphGetNodes) cuGraphGetNodes = nullptr;
  decltype(&::cuGraphNodeGetType) cuGraphNodeGetType = nullptr;
  decltype(&::cuGraphKernelNodeGetParams) cuGraphKernelNodeGetParams = nullptr;  // _v2
  decltype(&::cuGraphChildGraphNodeGetGraph) cuGraphChildGraphNodeGetGraph = nullptr;
  decltype(&::cuKernelGetFunction) cuKernelGetFunction = nullptr;
  // Light tracing with CUPTI detached (cupti_controller.h): ids without CUPTI.
  decltype(&::cuCtxGetId) cuCtxGetId = nullptr;
  decltype(&::cuCtxGetDevice_v2) cuCtxGetDevice = nullptr;  // _v2: of a given context
  decltype(&::cuStreamGetId) cuStreamGetId = nullptr;
  bool Loaded() const { return cuDeviceGet != nullptr && cuDeviceGetAttribute != nullptr; }
};
// Resolved once, on first use (thread-safe).
const DriverApi& Driver();

namespace detail {
inline bool CheckCupti(CUptiResult result, const char* call, const char* file, int line,
                       const char* consequence = nullptr) {
  if (result == CUPTI_SUCCESS) [[likely]] return true;
  const char* message = nullptr;
  if (cuptiGetResultString(result, &message) != CUPTI_SUCCESS) message = "unknown CUPTI error";
  ReportCallFailure(call, file, line, static_cast<long>(result), message, consequence);
  return false;
}
inline bool CheckCu(CUresult result, const char* call, const char* file, int line) {
  if (result == CUDA_SUCCESS) [[likely]] return true;
  const char* message = nullptr;
  if (Driver().cuGetErrorString == nullptr ||
      Driver().cuGetErrorString(result, &message) != CUDA_SUCCESS || message == nullptr) {
    message = "unknown CUDA driver error";
  }
  ReportCallFailure(call, file, line, static_cast<long>(result), message, nullptr);
  return false;
}
// A failed SQLite call always turns the writer off (TraceWriter::Fail): the boundary where
// occ::sql's Status becomes the injector's "report once, trace no more".
inline bool CheckStatus(const Status& status, const char* call, const char* file, int line) {
  if (status.ok()) [[likely]] return true;
  ReportCallFailure(call, file, line, 0, status.message().c_str(), "tracing off");
  return false;
}
template <typename T>
bool TakeValue(StatusOr<T>&& result, T* out, const char* call, const char* file, int line) {
  if (!CheckStatus(result.status(), call, file, line)) return false;
  *out = std::move(result).value();
  return true;
}
}  // namespace detail

}  // namespace occ::inj

// Expressions: true on success, false (after logging) on failure.
#define OCC_CUPTI_OK(call) ::occ::inj::detail::CheckCupti((call), #call, __FILE__, __LINE__)
#define OCC_CU_OK(call) ::occ::inj::detail::CheckCu((call), #call, __FILE__, __LINE__)
// `call` returns an occ::Status.
#define OCC_SQL_OK(call) ::occ::inj::detail::CheckStatus((call), #call, __FILE__, __LINE__)
// `call` returns an occ::StatusOr<T>: on success its value is moved into `lhs` (a T).
#define OCC_SQL_ASSIGN(lhs, call) ::occ::inj::detail::TakeValue((call), &(lhs), #call, __FILE__, __LINE__)

// In functions returning bool: log and return false on failure.
// (CUPTI: the caller gives up tracing, so the line says so.)
#define OCC_CUPTI_CHECK(call)                                                                   \
  do {                                                                                          \
    if (!::occ::inj::detail::CheckCupti((call), #call, __FILE__, __LINE__, "tracing off")) \
      return false;                                                                             \
  } while (false)
#define OCC_CU_CHECK(call) \
  do { if (!OCC_CU_OK(call)) return false; } while (false)

// Log and continue (callbacks, destructors, best-effort teardown).
#define OCC_CUPTI_LOG(call) static_cast<void>(OCC_CUPTI_OK(call))
#define OCC_CU_LOG(call) static_cast<void>(OCC_CU_OK(call))
