#include "injector/tracer/subscriber_guard.h"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string_view>

namespace occ::inj {
namespace {

std::atomic<RefusedSubscriberHandler> g_handler{nullptr};

std::string LibraryOf(const void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

void ReportRefusal(const void* return_address, const char* subscriber_name) {
  RefusedSubscriberHandler handler = g_handler.load(std::memory_order_acquire);
  if (handler == nullptr) return;
  // The return address lies in the caller's code: one byte back stays inside its call site.
  OtherCuptiClient client;
  client.library = LibraryOf(static_cast<const char*>(return_address) - 1);
  if (subscriber_name != nullptr) client.subscriber_name = subscriber_name;
  handler(client);
}

// The real functions are called through occtrace's own GOT, which is never rewritten.
CUptiResult CUPTIAPI GuardedSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                      void* userdata) {
  const CUptiResult result = cuptiSubscribe(subscriber, callback, userdata);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    ReportRefusal(__builtin_return_address(0), nullptr);
  }
  return result;
}

CUptiResult CUPTIAPI GuardedSubscribeV2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                        void* userdata, CUpti_SubscriberParams* params) {
  const CUptiResult result = cuptiSubscribe_v2(subscriber, callback, userdata, params);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    ReportRefusal(__builtin_return_address(0), params != nullptr ? params->subscriberName : nullptr);
  }
  return result;
}

template <typename Function>
void* AddressOf(Function* function) {
  void* address = nullptr;
  static_assert(sizeof(address) == sizeof(function));
  std::memcpy(&address, &function, sizeof(address));
  return address;
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

RedirectReport WatchForRefusedSubscribers(RefusedSubscriberHandler handler) {
  g_handler.store(handler, std::memory_order_release);
  const std::string self = LibraryOf(AddressOf(&WatchForRefusedSubscribers));
  const std::string cupti = LibraryOf(AddressOf(&cuptiSubscribe));
  const ImportRedirect redirects[] = {
      {"cuptiSubscribe", AddressOf(&GuardedSubscribe), AddressOf(&cuptiSubscribe)},
      {"cuptiSubscribe_v2", AddressOf(&GuardedSubscribeV2), AddressOf(&cuptiSubscribe_v2)},
  };
  return RedirectImports(redirects, [&](const std::string& path) {
    return path != self && path != cupti;
  });
}

std::string DescribeCuptiClient(const OtherCuptiClient& client) {
  const std::string_view name = Basename(client.library);
  std::string description;
  if (name.empty()) {
    description = "the program itself";
  } else if (name.starts_with("libtorch") || name.starts_with("libkineto")) {
    description = "torch.profiler (Kineto in " + std::string(name) + ")";
  } else {
    description = "a CUPTI client in " + std::string(name);
  }
  if (!client.subscriber_name.empty()) description += " named \"" + client.subscriber_name + "\"";
  return description;
}

}  // namespace occ::inj
