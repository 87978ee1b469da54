// The cheapest possible CUPTI kernel tracing, as a benchmark baseline: an injection library that
// enables CONCURRENT_KERNEL activity and throws every buffer away. The distance between it and
// untraced runs is CUPTI's own cost (instrumentation, record generation), which no tracer built
// on the Activity API can avoid; the distance between it and libocctrace.so is occtrace's.
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

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

void FlushAtExit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::fputs("bare_cupti_injection: CUPTI setup failed\n", stderr);
    return 0;
  }
  std::atexit(FlushAtExit);
  return 1;
}
