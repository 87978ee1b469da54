// Stand-ins for module_loader_test: built twice, as a CUDA runtime (libcudart.so.99, its own
// folder) and as a user library that calls it, so that a stack reads test -> user library ->
// "libcudart" -> callback, as a launch that loads a module does.
#include <cstdio>

extern "C" {
#if defined(OCC_STANDIN_CUDART)
__attribute__((noinline, visibility("default"))) int occ_standin_cudart_launch(int (*callback)(void*), void* arg) {
  const int result = callback(arg);
  asm volatile("" ::: "memory");  // no tail call: this frame must stay on the stack
  return result + 1;
}
#else
int occ_standin_cudart_launch(int (*callback)(void*), void* arg);
__attribute__((noinline, visibility("default"))) int occ_standin_user_launch(int (*callback)(void*), void* arg) {
  const int result = occ_standin_cudart_launch(callback, arg);
  asm volatile("" ::: "memory");
  return result + 1;
}
#endif
}
