// The cheapest possible CUPTI kernel tracing, as a benchmark baseline: an injection library that
// enables CONCURRENT_KERNEL activity and throws every buffer away. The distance between it and
// untraced runs is CUPTI's own cost (instrumentation, record generation), which no tracer built
// on the Activity API can avoid; the distance between it and libocctrace.so is occtrace's.
//
// To take CUPTI's cost apart (gpu_bench.py --variant):
//   BARE_CUPTI_MODE=inject   injected, CUPTI loaded, nothing enabled
//                  =attach   plus a subscriber with no callback enabled
//                  =kernel   CONCURRENT_KERNEL records (the default), no subscriber
//   BARE_CUPTI_SUBSCRIBE=1   kernel records and a subscriber with no callback enabled
//   BARE_CUPTI_HOST_PINNED=1 CUPTI's device-side buffers in pinned host memory
//   BARE_CUPTI_PER_THREAD=0  one shared activity buffer instead of per-thread ones
//   BARE_CUPTI_FLUSH_PERIOD_MS=N  cuptiActivityFlushPeriod(N): the worker thread on a fixed period
//                            instead of CUPTI's wake-up heuristics
// What CUPTI costs after it was used, and whether cuptiFinalize gives it back
// (BARE_CUPTI_MODE=callbacks-off, records-off, records-detach, windows-keep, windows-detach):
// bare_cupti_phases.h.
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/injector/bare_cupti_phases.h"

namespace {

constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  *max_num_records = 0;
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) {
  std::free(buffer);
}

void CUPTIAPI IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void FlushAtExit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

bool EnvIs(const char* name, const char* value) {
  const char* set = std::getenv(name);
  return set != nullptr && std::strcmp(set, value) == 0;
}

bool SetByteAttribute(CUpti_ActivityAttribute attribute, uint8_t value) {
  size_t size = sizeof(value);
  return cuptiActivitySetAttribute(attribute, &size, &value) == CUPTI_SUCCESS;
}

bool Fail(const char* what) {
  std::fprintf(stderr, "bare_cupti_injection: %s failed\n", what);
  return false;
}

bool Setup() {
  if (EnvIs("BARE_CUPTI_MODE", "inject")) return true;
  if (const char* mode = std::getenv("BARE_CUPTI_MODE"); bare_cupti::IsPhaseMode(mode)) {
    return bare_cupti::StartPhases(mode);
  }
  const bool attach_only = EnvIs("BARE_CUPTI_MODE", "attach");
  if (attach_only || EnvIs("BARE_CUPTI_SUBSCRIBE", "1")) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (cuptiSubscribe(&subscriber, IgnoreCallback, nullptr) != CUPTI_SUCCESS) return Fail("cuptiSubscribe");
    if (attach_only) return true;
  }
  if (EnvIs("BARE_CUPTI_HOST_PINNED", "1") &&
      !SetByteAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, 1)) {
    return Fail("HOST_PINNED");
  }
  if (EnvIs("BARE_CUPTI_PER_THREAD", "0") && !SetByteAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, 0)) {
    return Fail("PER_THREAD_ACTIVITY_BUFFER");
  }
  if (cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted) != CUPTI_SUCCESS) {
    return Fail("cuptiActivityRegisterCallbacks");
  }
  if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) return Fail("cuptiActivityEnable");
  if (const char* period = std::getenv("BARE_CUPTI_FLUSH_PERIOD_MS")) {
    if (cuptiActivityFlushPeriod(static_cast<uint32_t>(std::strtoul(period, nullptr, 10))) != CUPTI_SUCCESS) {
      return Fail("cuptiActivityFlushPeriod");
    }
  }
  std::atexit(FlushAtExit);
  return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  Setup();
  return 1;
}
