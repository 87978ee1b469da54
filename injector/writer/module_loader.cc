#include "injector/writer/module_loader.h"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include <climits>

namespace occ::inj {
namespace {

int64_t NowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

_Unwind_Reason_Code OnFrame(_Unwind_Context* context, void* arg) {
  auto* frames = static_cast<LoaderFrames*>(arg);
  if (frames->count >= kMaxLoaderFrames) return _URC_END_OF_STACK;
  const uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  frames->pcs[static_cast<size_t>(frames->count++)] = pc;
  return _URC_NO_REASON;
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

// _Unwind_Backtrace rather than glibc's backtrace(): backtrace() dlopens libgcc_s (malloc) on
// its first call; libgcc's unwinder is linked in already and walks .eh_frame without allocating.
void CaptureLoaderFrames(LoaderFrames* out) {
  const int64_t start = NowNs();
  out->count = 0;
  _Unwind_Backtrace(OnFrame, out);
  out->capture_ns = NowNs() - start;
}

void WarmUpLoaderCapture() {
  LoaderFrames frames;
  CaptureLoaderFrames(&frames);
}

bool IsCudaCallPath(std::string_view path) {
  const std::string_view base = BaseName(path);
  for (std::string_view prefix : {"libcuda.so", "libcudart.so", "libcupti.so", "libocctrace.so", "libffi.so",
                                  "libcudadebugger.so", "libnvidia-ptxjitcompiler.so"}) {
    if (StartsWith(base, prefix)) return true;
  }
  return false;
}

std::string ResolveLoader(const LoaderFrames& frames) {
  Dl_info self{};
  const void* self_base = nullptr;
  if (dladdr(reinterpret_cast<const void*>(&ResolveLoader), &self) != 0) self_base = self.dli_fbase;
  for (int i = 0; i < frames.count && i < kMaxLoaderFrames; ++i) {
    // A return address points after the call; one byte back is inside the calling function
    // even when the call was the object's last instruction.
    const uintptr_t pc = frames.pcs[static_cast<size_t>(i)];
    Dl_info info{};
    if (pc == 0 || dladdr(reinterpret_cast<const void*>(pc - 1), &info) == 0) continue;
    if (info.dli_fbase == self_base) continue;
    const std::string_view name = info.dli_fname != nullptr ? info.dli_fname : "";
    if (IsCudaCallPath(name)) continue;
    // The main program: glibc names it by argv[0] or not at all; /proc/self/exe is its file.
    if (name.empty() || name.find('/') == std::string_view::npos) {
      char exe[PATH_MAX];
      const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
      if (n > 0) return std::string(exe, static_cast<size_t>(n));
      return std::string(name);
    }
    return std::string(name);
  }
  return {};
}

}  // namespace occ::inj
