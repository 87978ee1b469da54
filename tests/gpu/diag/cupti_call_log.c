// Diagnostic LD_PRELOAD shim: logs the CUPTI calls a program makes (which library called,
// thread, result) to stderr, then forwards them to the real libcupti. Used to learn how other
// CUPTI clients (torch.profiler's Kineto) behave next to occtrace (docs/tracing.md):
//
//   LD_PRELOAD=libcupti_call_log.so python3 -c '...torch.profiler...'
//
// Not part of occtrace; built by tests/gpu/diag/run_diag.sh on the GPU machine.
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char* Caller(void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == NULL) return "?";
  const char* slash = info.dli_fname;
  for (const char* p = info.dli_fname; *p; ++p)
    if (*p == '/') slash = p + 1;
  return slash;
}

static void* Real(const char* name);

static const char* ResultName(CUptiResult result) {
  static CUptiResult (*get)(CUptiResult, const char**) = NULL;
  if (get == NULL) get = (CUptiResult(*)(CUptiResult, const char**))Real("cuptiGetResultString");
  const char* text = "?";
  if (get != NULL) get(result, &text);
  return text;
}

#define LOG(fmt, ...)                                                                        \
  fprintf(stderr, "[cupti-log tid %ld from %s] " fmt "\n", (long)syscall(SYS_gettid),       \
          Caller(__builtin_return_address(0)), __VA_ARGS__)

// libcupti is usually dlopen'ed later (RTLD_LOCAL, by the CUDA-using library), so RTLD_NEXT
// does not see it: fall back to the loaded copy by SONAME.
static void* Real(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == NULL) {
    void* cupti = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
    if (cupti == NULL) cupti = dlopen("libcupti.so.13", RTLD_LAZY);
    if (cupti != NULL) symbol = dlsym(cupti, name);
  }
  return symbol;
}

#define REAL(name)                                    \
  static __typeof__(&name) real_##name = NULL;        \
  if (real_##name == NULL) real_##name = (__typeof__(&name))Real(#name)

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud) {
  REAL(cuptiSubscribe);
  CUptiResult r = real_cuptiSubscribe(s, cb, ud);
  LOG("cuptiSubscribe -> %d %s", (int)r, ResultName(r));
  return r;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud,
                              CUpti_SubscriberParams* params) {
  REAL(cuptiSubscribe_v2);
  CUptiResult r = real_cuptiSubscribe_v2(s, cb, ud, params);
  LOG("cuptiSubscribe_v2(name=%s) -> %d %s", params && params->subscriberName ? params->subscriberName : "-",
      (int)r, ResultName(r));
  return r;
}

CUptiResult cuptiGetLastError(void) {
  REAL(cuptiGetLastError);
  CUptiResult r = real_cuptiGetLastError();
  LOG("cuptiGetLastError -> %d", (int)r);
  return r;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc a, CUpti_BuffersCallbackCompleteFunc b) {
  REAL(cuptiActivityRegisterCallbacks);
  CUptiResult r = real_cuptiActivityRegisterCallbacks(a, b);
  LOG("cuptiActivityRegisterCallbacks -> %d", (int)r);
  return r;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  REAL(cuptiActivityEnable);
  CUptiResult r = real_cuptiActivityEnable(kind);
  LOG("cuptiActivityEnable(%d) -> %d", (int)kind, (int)r);
  return r;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  REAL(cuptiActivityDisable);
  CUptiResult r = real_cuptiActivityDisable(kind);
  LOG("cuptiActivityDisable(%d) -> %d", (int)kind, (int)r);
  return r;
}

CUptiResult cuptiFinalize(void) {
  REAL(cuptiFinalize);
  CUptiResult r = real_cuptiFinalize();
  LOG("cuptiFinalize -> %d", (int)r);
  return r;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d, CUpti_CallbackId cbid) {
  REAL(cuptiEnableCallback);
  CUptiResult r = real_cuptiEnableCallback(enable, s, d, cbid);
  LOG("cuptiEnableCallback(%u, domain %d, cbid %u) -> %d", enable, (int)d, (unsigned)cbid, (int)r);
  return r;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  REAL(cuptiActivityFlushAll);
  CUptiResult r = real_cuptiActivityFlushAll(flag);
  static int logged = 0;
  if (logged++ < 3) LOG("cuptiActivityFlushAll(%u) -> %d (first 3 logged)", flag, (int)r);
  return r;
}
