// What the launch hook's tests against the stand-in driver share: stand-in handles, the hook's
// OCC_META rows as a map, and the light tracer options of a full trace's re-attach role.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <string>

#include "injector/tracer/cupti_controller.h"
#include "injector/tracer/launch_hook.h"
#include "injector/light/light_tracer.h"

namespace occ::inj::hook_testing {

// A CUfunction, stream or graph handle the stand-in driver takes as it is.
inline void* Fake(uintptr_t value) { return reinterpret_cast<void*>(value); }

// A controller's Seam that calls no CUPTI: every call succeeds, and the launch-callback
// switches are appended to *switched.
inline CuptiController::Seam StandInSeam(std::vector<bool>* switched) {
  CuptiController::Seam seam;
  seam.records = [](bool) -> uint64_t { return 0; };
  seam.flush = [] {};
  seam.request_detach = [] { return true; };
  seam.cancel_detach = [] {};
  seam.finalize = [] { return true; };
  seam.attach = [](std::string*) { return true; };
  seam.launch_callbacks = [switched](bool on, std::string*) {
    switched->push_back(on);
    return true;
  };
  return seam;
}

inline std::map<std::string, std::string> MetaOf(const LaunchHook& hook) {
  std::map<std::string, std::string> meta;
  for (const auto& [name, value] : hook.Meta()) meta[name] = value;
  return meta;
}

// The stand-in client library built a second time with the prefix late_ (OCC_LATE_CLIENT_PATH),
// loaded after the hook was installed: it fills its own table through cuGetProcAddress, as a
// library loaded mid-run does. Null members when it could not be loaded (dlerror() says why).
struct LateClient {
  int (*init)() = nullptr;
  int (*launch)(bool per_thread, void* f, unsigned grid_x, unsigned block_x, unsigned shared, void* stream) = nullptr;
};

inline LateClient LoadLateClient(const char* path) {
  LateClient client;
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return client;
  client.init = reinterpret_cast<decltype(client.init)>(dlsym(library, "late_init"));
  client.launch = reinterpret_cast<decltype(client.launch)>(dlsym(library, "late_launch"));
  return client;
}

}  // namespace occ::inj::hook_testing
