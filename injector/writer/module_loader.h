// Who loaded a CUDA module: the shared object that called into the CUDA runtime or driver
// when CUPTI reported the module loaded (OCC_MODULE.loader). With lazy loading (CUDA 12.2+'s
// default) a module loads at its first kernel's launch, on the launching thread, so that caller
// is the library that launches the kernel: cuDNN, cuBLASLt, libtorch, jaxlib, Triton's launcher,
// CuPy's driver module, the program itself. occ-report classifies owners from it
// (analyzer/analyze/kernel_origin.h).
//
// Split in two so that the CUPTI callback stays cheap and allocation-free: the callback only
// records raw return addresses into a fixed array (CaptureLoaderFrames); the writer thread
// turns them into a path (ResolveLoader, dladdr). Cost: docs/performance.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace occ::inj {

// Deep enough for libcuda's and a statically linked runtime's own frames (cuBLASLt's cudart)
// before the caller; a deeper stack leaves the loader unknown (NULL).
inline constexpr int kMaxLoaderFrames = 64;

struct LoaderFrames {
  std::array<uintptr_t, kMaxLoaderFrames> pcs{};
  int count = 0;
  int64_t capture_ns = 0;  // what the capture cost the loading thread
};

// On the loading thread: the return addresses of the current stack, innermost first. No heap
// allocation once WarmUpLoaderCapture has run (the unwinder's first use may set itself up).
void CaptureLoaderFrames(LoaderFrames* out);

// Once at start-up, before CUPTI can call back: runs one capture so that later ones find the
// unwinder ready.
void WarmUpLoaderCapture();

// Objects that are part of the CUDA call path rather than its caller: the driver, the runtime,
// CUPTI, libffi (ctypes' trampoline: the caller is the _ctypes module above it), by file name.
bool IsCudaCallPath(std::string_view path);

// The first frame's object that is neither on the CUDA call path nor this library (the object
// holding ResolveLoader itself): its path as the dynamic loader reports it (the main program's
// as /proc/self/exe resolves), or empty when no frame qualifies.
std::string ResolveLoader(const LoaderFrames& frames);

}  // namespace occ::inj
