// A stand-in for libcuda.so.1 in launch_hook_driver_test (built as libcuda.so.1 in its own
// folder, linked only by that test): the launch entry points the hook wraps, cuGetProcAddress as
// the CUDA runtime uses it, cuCtxGetCurrent, and (for light tracing with CUPTI detached) graph
// instantiation, module unload and the ids the launch path asks the driver for. Each entry point counts its calls and keeps the
// arguments of the last one, so the test can see what reached the "driver". A grid of 0 fails
// with CUDA_ERROR_INVALID_VALUE, as the real driver does.
//
// The real driver runs only on a GPU machine, where tests/gpu/light_hook.sh checks the hook end
// to end; this checks the redirect and the wrappers' plumbing on every CI run.
#include <cstdint>
#include <cstring>

extern "C" {

struct FakeDriverCalls {
  int classic = 0, classic_ptsz = 0, cooperative = 0, cooperative_ptsz = 0;
  int ex = 0, ex_ptsz = 0, graph = 0, graph_ptsz = 0;
  void* last_function = nullptr;
  unsigned last_grid[3] = {0, 0, 0};
  unsigned last_block[3] = {0, 0, 0};
  unsigned last_shared = 0;
  void* last_stream = nullptr;
  const void* last_config = nullptr;
  void* last_graph = nullptr;
  int instantiate_flags = 0, instantiate_params = 0, instantiate_params_ptsz = 0, module_unloads = 0, library_unloads = 0;
};
__attribute__((visibility("default"))) FakeDriverCalls fake_driver_calls;

namespace {
constexpr int kInvalidValue = 1;  // CUDA_ERROR_INVALID_VALUE

int Classic(int* counter, void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
            unsigned shared, void* stream) {
  ++*counter;
  FakeDriverCalls& calls = fake_driver_calls;
  calls.last_function = f;
  calls.last_grid[0] = gx, calls.last_grid[1] = gy, calls.last_grid[2] = gz;
  calls.last_block[0] = bx, calls.last_block[1] = by, calls.last_block[2] = bz;
  calls.last_shared = shared;
  calls.last_stream = stream;
  return gx == 0 ? kInvalidValue : 0;
}
}  // namespace

__attribute__((visibility("default"))) int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                          unsigned by, unsigned bz, unsigned shared, void* stream,
                                                          void**, void**) {
  return Classic(&fake_driver_calls.classic, f, gx, gy, gz, bx, by, bz, shared, stream);
}
__attribute__((visibility("default"))) int cuLaunchKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz,
                                                               unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                                               void* stream, void**, void**) {
  return Classic(&fake_driver_calls.classic_ptsz, f, gx, gy, gz, bx, by, bz, shared, stream);
}
__attribute__((visibility("default"))) int cuLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz,
                                                                     unsigned bx, unsigned by, unsigned bz,
                                                                     unsigned shared, void* stream, void**) {
  return Classic(&fake_driver_calls.cooperative, f, gx, gy, gz, bx, by, bz, shared, stream);
}
__attribute__((visibility("default"))) int cuLaunchCooperativeKernel_ptsz(void* f, unsigned gx, unsigned gy,
                                                                          unsigned gz, unsigned bx, unsigned by,
                                                                          unsigned bz, unsigned shared, void* stream,
                                                                          void**) {
  return Classic(&fake_driver_calls.cooperative_ptsz, f, gx, gy, gz, bx, by, bz, shared, stream);
}
__attribute__((visibility("default"))) int cuLaunchKernelEx(const void* config, void* f, void**, void**) {
  ++fake_driver_calls.ex;
  fake_driver_calls.last_config = config;
  fake_driver_calls.last_function = f;
  return 0;
}
__attribute__((visibility("default"))) int cuLaunchKernelEx_ptsz(const void* config, void* f, void**, void**) {
  ++fake_driver_calls.ex_ptsz;
  fake_driver_calls.last_config = config;
  fake_driver_calls.last_function = f;
  return 0;
}
__attribute__((visibility("default"))) int cuGraphLaunch(void* exec, void* stream) {
  ++fake_driver_calls.graph;
  fake_driver_calls.last_graph = exec;
  fake_driver_calls.last_stream = stream;
  return exec == nullptr ? kInvalidValue : 0;
}
__attribute__((visibility("default"))) int cuGraphLaunch_ptsz(void* exec, void* stream) {
  ++fake_driver_calls.graph_ptsz;
  fake_driver_calls.last_graph = exec;
  fake_driver_calls.last_stream = stream;
  return 0;
}
__attribute__((visibility("default"))) int cuCtxGetCurrent(void** context) {
  *context = reinterpret_cast<void*>(0x1000);
  return 0;
}

// Graph instantiation: the exec handle is the graph's + 1; a null graph fails.
__attribute__((visibility("default"))) int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  ++fake_driver_calls.instantiate_flags;
  if (graph == nullptr) return kInvalidValue;
  *exec = static_cast<char*>(graph) + 1;
  return 0;
}
__attribute__((visibility("default"))) int cuGraphInstantiateWithParams(void** exec, void* graph, void*) {
  ++fake_driver_calls.instantiate_params;
  if (graph == nullptr) return kInvalidValue;
  *exec = static_cast<char*>(graph) + 1;
  return 0;
}
__attribute__((visibility("default"))) int cuGraphInstantiateWithParams_ptsz(void** exec, void* graph, void*) {
  ++fake_driver_calls.instantiate_params_ptsz;
  if (graph == nullptr) return kInvalidValue;
  *exec = static_cast<char*>(graph) + 1;
  return 0;
}
__attribute__((visibility("default"))) int cuModuleUnload(void*) {
  ++fake_driver_calls.module_unloads;
  return 0;
}
__attribute__((visibility("default"))) int cuLibraryUnload(void*) {
  ++fake_driver_calls.library_unloads;
  return 0;
}
// Ids without CUPTI (light_tracer.cc, cupti_free): context 0x1000 is id 5 on device 0; a
// stream's id is its handle's low bits + 100.
__attribute__((visibility("default"))) int cuCtxGetId(void* context, unsigned long long* id) {
  if (context == nullptr) return kInvalidValue;
  *id = 5;
  return 0;
}
__attribute__((visibility("default"))) int cuCtxGetDevice_v2(int* device, void*) {
  *device = 0;
  return 0;
}
__attribute__((visibility("default"))) int cuStreamGetId(void* stream, unsigned long long* id) {
  *id = (reinterpret_cast<uintptr_t>(stream) & 0xff) + 100;
  return 0;
}
__attribute__((visibility("default"))) int cuStreamIsCapturing(void*, int* status) {
  *status = 0;  // CU_STREAM_CAPTURE_STATUS_NONE
  return 0;
}

// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2) answers with the per-thread version.
__attribute__((visibility("default"))) int cuGetProcAddress_v2(const char* symbol, void** pfn, int, uint64_t flags,
                                                               int* status) {
  struct Entry {
    const char* name;
    void* legacy;
    void* per_thread;
  };
  static const Entry kEntries[] = {
      {"cuLaunchKernel", reinterpret_cast<void*>(&cuLaunchKernel), reinterpret_cast<void*>(&cuLaunchKernel_ptsz)},
      {"cuLaunchCooperativeKernel", reinterpret_cast<void*>(&cuLaunchCooperativeKernel),
       reinterpret_cast<void*>(&cuLaunchCooperativeKernel_ptsz)},
      {"cuLaunchKernelEx", reinterpret_cast<void*>(&cuLaunchKernelEx), reinterpret_cast<void*>(&cuLaunchKernelEx_ptsz)},
      {"cuGraphLaunch", reinterpret_cast<void*>(&cuGraphLaunch), reinterpret_cast<void*>(&cuGraphLaunch_ptsz)},
      {"cuGraphInstantiateWithFlags", reinterpret_cast<void*>(&cuGraphInstantiateWithFlags),
       reinterpret_cast<void*>(&cuGraphInstantiateWithFlags)},
      {"cuGraphInstantiateWithParams", reinterpret_cast<void*>(&cuGraphInstantiateWithParams),
       reinterpret_cast<void*>(&cuGraphInstantiateWithParams_ptsz)},
      {"cuModuleUnload", reinterpret_cast<void*>(&cuModuleUnload), reinterpret_cast<void*>(&cuModuleUnload)},
      {"cuLibraryUnload", reinterpret_cast<void*>(&cuLibraryUnload), reinterpret_cast<void*>(&cuLibraryUnload)},
  };
  for (const Entry& entry : kEntries) {
    if (std::strcmp(entry.name, symbol) != 0) continue;
    *pfn = (flags & 2) != 0 ? entry.per_thread : entry.legacy;
    if (status != nullptr) *status = 0;  // CU_GET_PROC_ADDRESS_SUCCESS
    return 0;
  }
  *pfn = nullptr;
  if (status != nullptr) *status = 1;  // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
  return 500;                          // CUDA_ERROR_NOT_FOUND
}

}  // extern "C"
