// What launch_hook_fake_driver.cc (the stand-in libcuda.so.1) and launch_hook_fake_client.cc
// (a library calling it through a cuGetProcAddress-filled table) export to the hook's tests.
#pragma once

extern "C" {
// Calls that reached the stand-in driver, and the last launch's arguments.
struct FakeDriverCalls {
  int classic, classic_ptsz, cooperative, cooperative_ptsz, ex, ex_ptsz, graph, graph_ptsz;
  void* last_function;
  unsigned last_grid[3];
  unsigned last_block[3];
  unsigned last_shared;
  void* last_stream;
  const void* last_config;
  void* last_graph;
  int instantiate_flags, instantiate_params, instantiate_params_ptsz, module_unloads, library_unloads;
};
extern FakeDriverCalls fake_driver_calls;

int client_init();
int client_launch(bool per_thread, void* f, unsigned grid_x, unsigned block_x, unsigned shared, void* stream);
int client_launch_cooperative(void* f, unsigned grid_x, void* stream);
int client_launch_ex(const void* config, void* f);
int client_graph_launch(void* exec, void* stream);
int client_graph_instantiate(void** exec, void* graph);
int client_module_unload(void* module);
void* client_lookup(const char* symbol);
}
