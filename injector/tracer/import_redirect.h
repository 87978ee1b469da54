// Redirects calls that already-loaded shared objects make to an imported function, by rewriting
// the object's GOT slot for that symbol (the slot its PLT stub or -fno-plt call jumps through).
//
// occtrace uses this for one purpose: to see other CUPTI clients' cuptiSubscribe calls, which
// CUPTI 13.0 refuses without telling the subscriber that came first (subscriber_guard.h).
// libocctrace.so must not export the functions itself (only InitializeInjection is exported,
// and the injection library is loaded after the program's libraries are bound anyway).
//
// Only slots that still point at `original` (or, with lazy binding, into the object's own PLT)
// are rewritten: a slot pointing anywhere else belongs to another interposer and is left alone.
// ELF x86-64 and AArch64 only; elsewhere nothing is rewritten.
//
// RedirectStoredPointers does the same for function pointers a library stored in its own data
// at run time (a dispatch table filled from cuGetProcAddress, a lazily set static): every
// aligned word of the object's writable segments that equals `original` now holds
// `replacement`. Light tracing's launch hook uses it (launch_hook.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace occ::inj {

struct ImportRedirect {
  const char* symbol = nullptr;   // the imported function's name
  void* replacement = nullptr;    // where calls go from now on
  void* original = nullptr;       // where the slot points today once bound (the real function)
};

struct RedirectReport {
  int rewritten = 0;                 // slots now pointing at a replacement
  int left_to_other_interposer = 0;  // slots pointing at neither original nor own PLT
  int failed = 0;                    // mprotect refused
  std::vector<std::string> objects;  // objects with at least one rewritten slot
};

// Visits every loaded object for which `include(path)` is true. Thread-safe with respect to
// concurrent callers of the rewritten functions (each slot is one aligned 8-byte store).
RedirectReport RedirectImports(std::span<const ImportRedirect> redirects,
                               const std::function<bool(const std::string& path)>& include);

// Rewrites every 8-byte-aligned word equal to a redirect's `original` in the writable load
// segments (.data, .bss, the GOT) of every object for which `include(path)` is true; `symbol`
// only names the redirect. A word equal to a function's address is, in practice, a pointer to
// it: code addresses of the CUDA driver do not occur as data by chance.
// `include(path, base)`: the object's path as the loader knows it (empty for the main program)
// and its load address, by which a caller can leave out its own object whatever its name.
RedirectReport RedirectStoredPointers(std::span<const ImportRedirect> redirects,
                                      const std::function<bool(const std::string& path, uintptr_t base)>& include);

}  // namespace occ::inj
