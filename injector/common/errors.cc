#include "injector/common/errors.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace occ::inj {
namespace {
// A broken environment (say, SQLite on a full disk) fails every call: keep stderr readable.
constexpr int kMaxFailureLines = 5;
std::atomic<int> g_failure_lines{0};

template <typename Fn>
void Resolve(void* handle, const char* name, Fn* out) {
  void* symbol = dlsym(handle, name);
  // POSIX allows converting a data pointer from dlsym to a function pointer.
  std::memcpy(out, &symbol, sizeof(symbol));
}
}  // namespace

void LogLine(const char* format, ...) {
  char line[1024] = "occtrace: ";
  constexpr size_t kPrefix = sizeof("occtrace: ") - 1;
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(line + kPrefix, sizeof(line) - kPrefix - 1, format, args);
  va_end(args);
  size_t length = kPrefix + (n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof(line) - kPrefix - 2));
  line[length++] = '\n';
  // One write(2): lines from several processes (torchrun ranks) do not interleave.
  ssize_t ignored = write(STDERR_FILENO, line, length);
  static_cast<void>(ignored);
}

void ReportCallFailure(const char* call, const char* file, int line, long code,
                       const char* message, const char* consequence) {
  if (g_failure_lines.fetch_add(1) >= kMaxFailureLines) return;
  const char* base = std::strrchr(file, '/');
  char code_text[32] = "";
  if (code != 0) std::snprintf(code_text, sizeof(code_text), " (code %ld)", code);
  LogLine("%s failed at %s:%d: %s%s%s%s", call, base != nullptr ? base + 1 : file, line,
          message != nullptr ? message : "?", code_text, consequence != nullptr ? "; " : "",
          consequence != nullptr ? consequence : "");
}

const DriverApi& Driver() {
  static const DriverApi api = [] {
    DriverApi loaded;
    // RTLD_NOLOAD: use the libcuda.so.1 the program already loaded, never load one ourselves.
    void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return loaded;
    Resolve(handle, "cuGetErrorString", &loaded.cuGetErrorString);
    Resolve(handle, "cuDriverGetVersion", &loaded.cuDriverGetVersion);
    Resolve(handle, "cuDeviceGet", &loaded.cuDeviceGet);
    Resolve(handle, "cuDeviceGetAttribute", &loaded.cuDeviceGetAttribute);
    Resolve(handle, "cuDeviceGetPCIBusId", &loaded.cuDeviceGetPCIBusId);
    // The legacy-stream entry point; a per-thread default stream is passed as
    // CU_STREAM_PER_THREAD, which every stream API accepts.
    Resolve(handle, "cuStreamIsCapturing", &loaded.cuStreamIsCapturing);
    Resolve(handle, "cuCtxPushCurrent_v2", &loaded.cuCtxPushCurrent);
    Resolve(handle, "cuCtxPopCurrent_v2", &loaded.cuCtxPopCurrent);
    Resolve(handle, "cuFuncGetName", &loaded.cuFuncGetName);
    Resolve(handle, "cuFuncGetAttribute", &loaded.cuFuncGetAttribute);
    Resolve(handle, "cuGraphGetNodes", &loaded.cuGraphGetNodes);
    Resolve(handle, "cuGraphNodeGetType", &loaded.cuGraphNodeGetType);
    Resolve(handle, "cuGraphKernelNodeGetParams_v2", &loaded.cuGraphKernelNodeGetParams);
    Resolve(handle, "cuGraphChildGraphNodeGetGraph", &loaded.cuGraphChildGraphNodeGetGraph);
    Resolve(handle, "cuKernelGetFunction", &loaded.cuKernelGetFunction);
    Resolve(handle, "cuCtxGetId", &loaded.cuCtxGetId);
    Resolve(handle, "cuCtxGetDevice_v2", &loaded.cuCtxGetDevice);
    Resolve(handle, "cuStreamGetId", &loaded.cuStreamGetId);  // legacy entry, as cuStreamIsCapturing
    return loaded;
  }();
  return api;
}

}  // namespace occ::inj
