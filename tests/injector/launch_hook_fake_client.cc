// A library that reaches the (stand-in) driver the way the CUDA runtime does: it asks
// cuGetProcAddress for the launch entry points once and calls them through a table in its own
// .bss (launch_hook_driver_test). Built twice: linked into the test (OCC_CLIENT_PREFIX client_)
// and as a module the test loads after the hook is installed (late_).
#include <cstdint>

#define OCC_JOIN2(a, b) a##b
#define OCC_JOIN(a, b) OCC_JOIN2(a, b)
#define OCC_NAME(name) OCC_JOIN(OCC_CLIENT_PREFIX, name)

extern "C" {
int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status);

namespace {
using Classic = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                        void**);
using Cooperative = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**);
using Ex = int (*)(const void*, void*, void**, void**);
using Graph = int (*)(void*, void*);
struct Table {
  void* classic = nullptr;
  void* classic_per_thread = nullptr;
  void* cooperative = nullptr;
  void* ex = nullptr;
  void* graph = nullptr;
  void* instantiate = nullptr;
  void* module_unload = nullptr;
};
Table g_table;
}  // namespace

__attribute__((visibility("default"))) int OCC_NAME(init)() {
  int status = 0;
  int failed = 0;
  failed |= cuGetProcAddress_v2("cuLaunchKernel", &g_table.classic, 13000, 1, &status);
  failed |= cuGetProcAddress_v2("cuLaunchKernel", &g_table.classic_per_thread, 13000, 2, &status);
  failed |= cuGetProcAddress_v2("cuLaunchCooperativeKernel", &g_table.cooperative, 13000, 1, &status);
  failed |= cuGetProcAddress_v2("cuLaunchKernelEx", &g_table.ex, 13000, 1, &status);
  failed |= cuGetProcAddress_v2("cuGraphLaunch", &g_table.graph, 13000, 1, &status);
  failed |= cuGetProcAddress_v2("cuGraphInstantiateWithFlags", &g_table.instantiate, 13000, 1, &status);
  failed |= cuGetProcAddress_v2("cuModuleUnload", &g_table.module_unload, 13000, 1, &status);
  return failed;
}

__attribute__((visibility("default"))) int OCC_NAME(launch)(bool per_thread, void* f, unsigned grid_x,
                                                            unsigned block_x, unsigned shared, void* stream) {
  auto launch = reinterpret_cast<Classic>(per_thread ? g_table.classic_per_thread : g_table.classic);
  return launch(f, grid_x, 2, 3, block_x, 1, 1, shared, stream, nullptr, nullptr);
}

__attribute__((visibility("default"))) int OCC_NAME(launch_cooperative)(void* f, unsigned grid_x, void* stream) {
  return reinterpret_cast<Cooperative>(g_table.cooperative)(f, grid_x, 1, 1, 64, 1, 1, 0, stream, nullptr);
}

__attribute__((visibility("default"))) int OCC_NAME(launch_ex)(const void* config, void* f) {
  return reinterpret_cast<Ex>(g_table.ex)(config, f, nullptr, nullptr);
}

__attribute__((visibility("default"))) int OCC_NAME(graph_launch)(void* exec, void* stream) {
  return reinterpret_cast<Graph>(g_table.graph)(exec, stream);
}

__attribute__((visibility("default"))) int OCC_NAME(graph_instantiate)(void** exec, void* graph) {
  return reinterpret_cast<int (*)(void**, void*, unsigned long long)>(g_table.instantiate)(exec, graph, 0);
}

// What the driver answers now for `symbol` (legacy stream), through this library's import.
__attribute__((visibility("default"))) void* OCC_NAME(lookup)(const char* symbol) {
  void* pfn = nullptr;
  int status = 0;
  return cuGetProcAddress_v2(symbol, &pfn, 13000, 1, &status) == 0 ? pfn : nullptr;
}

__attribute__((visibility("default"))) int OCC_NAME(module_unload)(void* module) {
  return reinterpret_cast<int (*)(void*)>(g_table.module_unload)(module);
}

}  // extern "C"
