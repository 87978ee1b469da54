// Naming the other CUPTI client when two meet in one process. CUPTI 13.0 allows one subscriber
// and refuses a second cuptiSubscribe without telling the first (no callback in any domain,
// and CUPTI's per-thread last error stays CUPTI_SUCCESS: measured on an H200, 2026-11-21,
// tests/gpu/diag/lasterror_probe.cc). occtrace subscribes inside cuInit, so it is usually first
// and the other client (torch.profiler's Kineto, started later in the program) is the one
// refused: WatchForRefusedSubscribers makes every library loaded when occtrace starts call
// cuptiSubscribe through occtrace from then on (import_redirect.h), which reports a refusal.
// (A client that subscribed before the program's first CUDA call is already registered when
// occtrace starts: occtrace's own cuptiSubscribe_v2 is refused and names it; cupti_tracer.cc.)
#pragma once

#include <string>

#include "injector/tracer/import_redirect.h"

namespace occ::inj {

struct OtherCuptiClient {
  std::string library;          // path of the calling shared object ("" = the main program)
  std::string subscriber_name;  // what cuptiSubscribe_v2 was told, if anything
};

// Called on the refused client's thread, right after CUPTI refused it.
using RefusedSubscriberHandler = void (*)(const OtherCuptiClient& client);

RedirectReport WatchForRefusedSubscribers(RefusedSubscriberHandler handler);

// "torch.profiler (Kineto in libtorch_cpu.so)" for PyTorch's libraries, else "a CUPTI client in
// libfoo.so" / "the program itself".
std::string DescribeCuptiClient(const OtherCuptiClient& client);

}  // namespace occ::inj
