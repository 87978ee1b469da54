// Shared objects for import_redirect_test: a target function, and clients that import it
// through the three kinds of GOT slot the redirect must handle (built by CMake with -z now,
// -z lazy, and -fno-plt). OCC_CLIENT names each client's entry point.
#ifdef OCC_TARGET
extern "C" __attribute__((visibility("default"), noinline)) int occ_test_import_target(int x) { return x + 1; }
#else
extern "C" int occ_test_import_target(int x);
extern "C" __attribute__((visibility("default"))) int OCC_CLIENT(int x) { return occ_test_import_target(x); }
#ifdef OCC_STORED
// A pointer the library stores in its own data at run time, as the CUDA runtime fills its driver
// dispatch table from cuGetProcAddress (RedirectStoredPointers).
namespace {
int (*volatile g_stored)(int) = nullptr;
}  // namespace
extern "C" __attribute__((visibility("default"))) int OCC_STORED(int x) {
  if (g_stored == nullptr) g_stored = &occ_test_import_target;
  return g_stored(x);
}
#endif
#endif
