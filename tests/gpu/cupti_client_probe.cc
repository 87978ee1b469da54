// A second CUPTI client, for the "another profiler in the same process" checks (gpu_checks.py
// case cupti-client) and the diagnostics in docs/tracing.md:
//
//   cupti_client_probe after    cuInit first (occtrace, injected, takes CUPTI's subscription),
//                               then cuptiSubscribe: refused; also prints what CUPTI's
//                               per-thread last error says afterwards
//   cupti_client_probe before   cuptiSubscribe before any CUDA call (CUPTI registers it without
//                               initializing CUDA), then cuInit, which starts occtrace: occtrace
//                               finds the subscription taken and must step aside
//
// Prints "probe ..." lines with CUPTI result codes (0 = CUPTI_SUCCESS, 39 = MULTIPLE_SUBSCRIBERS).
#include <cuda.h>
#include <cupti.h>

#include <cstdio>
#include <cstring>
#include <thread>

namespace {
void CUPTIAPI Noop(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int Subscribe(CUpti_SubscriberHandle* handle) { return static_cast<int>(cuptiSubscribe(handle, Noop, nullptr)); }

int Refuse() {
  CUpti_SubscriberHandle handle = nullptr;
  return Subscribe(&handle);
}

int After() {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  cuptiGetLastError();  // start clean
  std::printf("probe subscribe=%d last_error_immediately=%d\n", Refuse(), static_cast<int>(cuptiGetLastError()));
  std::printf("probe subscribe=%d", Refuse());
  uint32_t version = 0;
  cuptiGetVersion(&version);
  std::printf(" last_error_after_GetVersion=%d\n", static_cast<int>(cuptiGetLastError()));
  int from_thread = -1;
  std::thread([&] { from_thread = Refuse(); }).join();
  std::printf("probe subscribe_on_other_thread=%d last_error_on_main=%d\n", from_thread,
              static_cast<int>(cuptiGetLastError()));
  char old_name[128] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "probe";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  CUpti_SubscriberHandle handle = nullptr;
  const int v2 = static_cast<int>(cuptiSubscribe_v2(&handle, Noop, nullptr, &params));
  std::printf("probe subscribe_v2=%d existing_subscriber_name='%s'\n", v2, old_name);
  return 0;
}

int Before() {
  CUpti_SubscriberHandle handle = nullptr;
  const int subscribed = Subscribe(&handle);
  std::printf("probe subscribe_before_cuda=%d\n", subscribed);
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (cuDeviceGet(&device, 0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS) return 1;
  cuDevicePrimaryCtxRelease(device);
  if (subscribed == 0) cuptiUnsubscribe(handle);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "after") == 0) return After();
  if (argc == 2 && std::strcmp(argv[1], "before") == 0) return Before();
  std::fprintf(stderr, "usage: %s after|before\n", argv[0]);
  return 2;
}
