#include "analyzer/analyze/kernel_origin.h"

#include <array>
#include <vector>
#include <string>
#include <utility>

namespace occ {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Vendor-library kernels by name: (marker, library), first match wins. Markers are prefixes of
// the demangled or mangled name or substrings that only these libraries use.
struct VendorMarker {
  std::string_view marker;
  bool prefix;
  std::string_view library;
};
constexpr std::array kVendorMarkers = {
    VendorMarker{"nccl", true, "NCCL"},
    // Templated or namespaced instantiations demangle with a prefix ("void ncclKernel...").
    VendorMarker{"ncclDevKernel", false, "NCCL"},
    VendorMarker{"ncclKernel", false, "NCCL"},
    VendorMarker{"PyTorchMemEffAttention", false, "PyTorch (memory-efficient attention)"},
    VendorMarker{"cudnn", false, "cuDNN"},
    VendorMarker{"xmma_fprop", false, "cuDNN"},
    VendorMarker{"xmma_dgrad", false, "cuDNN"},
    VendorMarker{"xmma_wgrad", false, "cuDNN"},
    VendorMarker{"implicit_convolve", false, "cuDNN"},
    VendorMarker{"nchwToNhwc", false, "cuDNN"},
    VendorMarker{"nhwcToNchw", false, "cuDNN"},
    VendorMarker{"flash_fwd", true, "FlashAttention"},
    VendorMarker{"flash_bwd", true, "FlashAttention"},
    VendorMarker{"pytorch_flash::", false, "FlashAttention (PyTorch)"},
    VendorMarker{"fmha", false, "cuDNN/FlashAttention"},
    VendorMarker{"cublas", true, "cuBLAS"},
    VendorMarker{"cublasLt", false, "cuBLAS"},
    VendorMarker{"gemv2", false, "cuBLAS"},
    VendorMarker{"gemvx", false, "cuBLAS"},
    VendorMarker{"gemmk1", false, "cuBLAS"},
    VendorMarker{"splitKreduce", false, "cuBLAS"},
    VendorMarker{"xmma_gemm", false, "cuBLAS"},
    VendorMarker{"sm80_xmma", true, "cuBLAS/cuDNN"},
    VendorMarker{"sm90_xmma", true, "cuBLAS/cuDNN"},
    VendorMarker{"sm75_xmma", true, "cuBLAS/cuDNN"},
    VendorMarker{"ampere_", true, "cuBLAS"},
    VendorMarker{"volta_", true, "cuBLAS"},
    VendorMarker{"turing_", true, "cuBLAS"},
    VendorMarker{"cutlass", false, "CUTLASS (in cuBLAS/cuDNN)"},
    VendorMarker{"nvjet_", true, "cuBLAS"},
    VendorMarker{"regular_fft", false, "cuFFT"},
    VendorMarker{"vector_fft", false, "cuFFT"},
    VendorMarker{"cusparse", false, "cuSPARSE"},
    VendorMarker{"curand", false, "cuRAND"},
    VendorMarker{"trt_", true, "TensorRT"},
};

// Objects by file name prefix (of LoaderLabel's last part): the library whose kernels they load.
struct ObjectMarker {
  std::string_view prefix;
  std::string_view library;
};
constexpr std::array kLibraryObjects = {
    ObjectMarker{"libcudnn", "cuDNN"},       ObjectMarker{"libcublasLt", "cuBLASLt"},
    ObjectMarker{"libcublas", "cuBLAS"},     ObjectMarker{"libnccl", "NCCL"},
    ObjectMarker{"libcufft", "cuFFT"},       ObjectMarker{"libcusparse", "cuSPARSE"},
    ObjectMarker{"libcurand", "cuRAND"},     ObjectMarker{"libcusolver", "cuSOLVER"},
    ObjectMarker{"libcutensor", "cuTENSOR"}, ObjectMarker{"libnvinfer", "TensorRT"},
    ObjectMarker{"libnvjpeg", "nvJPEG"},     ObjectMarker{"libnpp", "NPP"},
    ObjectMarker{"libcudss", "cuDSS"},       ObjectMarker{"flash_attn", "FlashAttention"},
    ObjectMarker{"libflashattention", "FlashAttention"},
};
// PyTorch's own libraries: ATen's kernels (and what it bundles: FlashAttention, CUTLASS).
constexpr std::array<std::string_view, 5> kTorchObjects = {"libtorch_cuda", "libtorch.", "libtorch_cpu",
                                                          "libc10_cuda", "libtorch_cuda_linalg"};

std::string_view FileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsInductorName(std::string_view name) {
  return StartsWith(name, "triton_poi_") || StartsWith(name, "triton_per_") ||
         StartsWith(name, "triton_red_") || StartsWith(name, "triton_tem_") ||
         StartsWith(name, "triton_for_") || StartsWith(name, "triton_scan_");
}

// Numba's names: the demangled name carries the Python module and numba's ABI tags
// ("__main__::saxpy[abi:v1][abi:cw51...]"), the mangled one "cudapy" or the module path.
// Numba's version tag in the mangled name: B2v<digit>B ("[abi:v1]", "[abi:v2]" for a second
// compilation of one function).
bool HasNumbaVersionTag(std::string_view mangled) {
  for (size_t at = mangled.find("B2v"); at != std::string_view::npos; at = mangled.find("B2v", at + 1)) {
    if (at + 4 < mangled.size() && mangled[at + 3] >= '0' && mangled[at + 3] <= '9' && mangled[at + 4] == 'B') return true;
  }
  return false;
}

bool IsNumbaName(std::string_view mangled, std::string_view name) {
  return Contains(name, "[abi:") || Contains(mangled, "cudapy") || Contains(mangled, "numba") ||
         HasNumbaVersionTag(mangled);
}

// Header libraries, by the namespace of the kernel function itself (never of its template
// arguments: a user's kernel<cub::Sum> is the user's). The namespaces and kernel templates are
// CCCL's and CUTLASS's own: cub/cub/util_namespace.cuh (CUB_NAMESPACE_BEGIN: `cub` plus an
// inline `_V_<version>_SM_<archs>`, `CUB_<version>_SM_<archs>_NS` before CCCL 2.3),
// thrust/thrust/detail/config/namespace.h (`thrust` plus the same inline namespace),
// libcudacxx/include/cuda/std/__internal/namespaces.h (`cuda`, `cuda::std`, inline `__4`),
// cutlass/include/cutlass/device_kernel.h (cutlass::Kernel, Kernel2, device_kernel) and cute.
struct HeaderLibrary {
  std::string_view ns;
  std::string_view library;
  std::string_view controls;
};
constexpr std::string_view kCubControls =
    "the algorithm call and its inputs: the number of items, the key and value types, the temporary "
    "storage you pass, and the tuning the algorithm's own API accepts; CUB sets the block size and "
    "registers itself, so no launch configuration or register cap applies";
constexpr std::string_view kCutlassControls =
    "the template's tile shape (ThreadblockShape/TileShape), stages and warp shape, and the problem "
    "size and alignment; CUTLASS derives the grid and block from them, so no launch configuration or "
    "register cap applies";
constexpr std::array kHeaderLibraries = {
    HeaderLibrary{"cub", "CUB", kCubControls},
    HeaderLibrary{"thrust", "Thrust",
                  "the algorithm call and its inputs: the sizes and types of the ranges, the execution "
                  "policy (thrust::cuda::par, par_nosync, an allocator for its temporary storage); "
                  "Thrust and the CUB it calls set the block size and registers themselves, so no "
                  "launch configuration or register cap applies"},
    HeaderLibrary{"cutlass", "CUTLASS", kCutlassControls},
    HeaderLibrary{"cute", "CuTe", kCutlassControls},
    HeaderLibrary{"cuda", "libcu++",
                  "the call and its inputs; libcu++ sets the launch configuration itself, so no "
                  "launch configuration or register cap applies"},
};

// The namespaces of the kernel function: "void cub::_V_300300_SM_900::detail::scan::
// DeviceScanInitKernel<...>(...)" -> {cub, _V_300300_SM_900, detail, scan}; from the mangled
// name (_ZN3cub17_V_300300_SM_9006detail...) when there is no demangled one.
std::vector<std::string_view> FunctionNamespaces(std::string_view mangled, std::string_view demangled) {
  std::vector<std::string_view> parts;
  // A name no demangler could read stays mangled in both columns.
  if (StartsWith(demangled, "_Z")) demangled = {};
  if (!demangled.empty()) {
    std::string_view f = demangled;
    if (StartsWith(f, "void ")) f.remove_prefix(5);
    f = f.substr(0, f.find_first_of("<("));
    for (size_t at = f.find("::"); at != std::string_view::npos; at = f.find("::")) {
      parts.push_back(f.substr(0, at));
      f.remove_prefix(at + 2);
    }
    return parts;
  }
  if (!StartsWith(mangled, "_ZN")) return parts;
  std::string_view m = mangled.substr(3);
  // <length><identifier> pairs; the last one before a template or parameter list is the function.
  while (!m.empty() && m[0] >= '1' && m[0] <= '9') {
    size_t digits = 0, length = 0;
    while (digits < m.size() && m[digits] >= '0' && m[digits] <= '9') length = length * 10 + static_cast<size_t>(m[digits++] - '0');
    if (digits + length > m.size()) break;
    parts.push_back(m.substr(digits, length));
    m.remove_prefix(digits + length);
  }
  // An internal-linkage function is
  // written L<length><name> after its namespaces: everything read so far is a namespace.
  if (!parts.empty() && !StartsWith(m, "L")) parts.pop_back();
  return parts;
}

// The header library a kernel's function belongs to, or nullptr. `wrapper` receives the
// namespace CUB was wrapped in (CUB_WRAPPED_NAMESPACE: PyTorch's at_cuda_detail), if any.
const HeaderLibrary* HeaderLibraryOf(std::string_view mangled, std::string_view demangled, std::string_view* wrapper) {
  const std::vector<std::string_view> ns = FunctionNamespaces(mangled, demangled);
  for (size_t i = 0; i < ns.size(); ++i) {
    for (const HeaderLibrary& h : kHeaderLibraries) {
      // cuda:: only at the top: another library's own `cuda` namespace (thrust::cuda_cub is not
      // one, at::cuda is) says nothing about libcu++.
      if (ns[i] != h.ns || (h.ns == "cuda" && i > 0)) continue;
      // cuda::launch runs the user's functor in libcu++'s __kernel_launcher
      // (libcudacxx/include/cuda/__launch/launch.h) with the configuration the user passes: the
      // user's kernel, not the library's.
      if (h.ns == "cuda" && (Contains(demangled, "__kernel_launcher") || Contains(mangled, "__kernel_launcher"))) {
        return nullptr;
      }
      *wrapper = i > 0 ? ns[i - 1] : std::string_view();
      return &h;
    }
  }
  return nullptr;
}

// cuBLAS and cuDNN ship CUTLASS kernels precompiled, named after the instance:
// cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_128x128_64x5_nt_align8>.
bool IsPrecompiledCutlassInstance(std::string_view name) {
  for (size_t at = name.find("cutlass_"); at != std::string_view::npos; at = name.find("cutlass_", at + 1)) {
    if (at + 8 < name.size() && name[at + 8] >= '0' && name[at + 8] <= '9') return true;
  }
  return false;
}

KernelOrigin Make(KernelOriginKind kind, std::string_view library, bool tunable, std::string_view evidence) {
  KernelOrigin o;
  o.kind = kind;
  o.library = std::string(library);
  o.tunable = tunable;
  o.evidence = std::string(evidence);
  return o;
}

// A header library's kernel compiled into `binary` (a LoaderLabel; empty: not recorded).
KernelOrigin MakeHeaderLibrary(const HeaderLibrary& h, std::string_view binary, std::string_view evidence) {
  KernelOrigin o = Make(KernelOriginKind::kHeaderLibrary, h.library, false, evidence);
  o.compiled_into = std::string(FileName(binary));
  o.controls = std::string(h.controls);
  return o;
}

// What one loaded object says about the kernels it loaded; `found` false when it says nothing
// (an interpreter, an unknown object inside a Python package).
struct ObjectVerdict {
  bool found = false;
  KernelOrigin origin;
};

ObjectVerdict ClassifyObject(std::string_view label, std::string_view mangled, std::string_view name,
                             std::string_view evidence) {
  ObjectVerdict v;
  if (label.empty()) return v;
  const std::string_view file = FileName(label);
  auto found = [&](KernelOriginKind kind, std::string_view library, bool tunable) {
    v.found = true;
    v.origin = Make(kind, library, tunable, evidence);
    return v;
  };
  for (const ObjectMarker& m : kLibraryObjects) {
    if (StartsWith(file, m.prefix)) return found(KernelOriginKind::kVendor, m.library, false);
  }
  for (std::string_view t : kTorchObjects) {
    if (StartsWith(file, t)) return found(KernelOriginKind::kAten, "PyTorch (ATen)", false);
  }
  // JAX: XLA's compiled executables, loaded by jaxlib or its CUDA plugin.
  if (StartsWith(label, "jaxlib/") || StartsWith(label, "jax_plugins/") || StartsWith(file, "xla_extension") ||
      Contains(file, "xla_cuda") || StartsWith(file, "libjax") || StartsWith(file, "libxla")) {
    return found(KernelOriginKind::kVendor, "XLA (jaxlib)", false);
  }
  // Triton's launcher (cuda_utils.so in Triton's cache) loads hand-written Triton kernels and
  // TorchInductor's alike; Inductor's are told by their names.
  if (StartsWith(label, "triton-cache/") || StartsWith(label, "triton/")) {
    return found(IsInductorName(name) ? KernelOriginKind::kInductor : KernelOriginKind::kTriton, "", true);
  }
  // CuPy compiles its own kernels (cupy_copy, cupy_random_x_mod_1, cub reductions) and the
  // user's RawKernel / ElementwiseKernel alike, through the same driver module: its own carry
  // its prefix.
  // Its precompiled modules (cupy/random, cupy/cuda/cub, ...) are all its own; what comes through
  // its driver module (cupy_backends/cuda/api/driver) is compiled at run time, its own or the user's.
  if (StartsWith(label, "cupy/")) return found(KernelOriginKind::kVendor, "CuPy", false);
  if (StartsWith(label, "cupy_backends/") || StartsWith(file, "cupy")) {
    if (StartsWith(name, "cupy_") || Contains(name, "cub::") || Contains(name, "cupy::")) {
      return found(KernelOriginKind::kVendor, "CuPy", false);
    }
    return found(KernelOriginKind::kCuPy, "", true);
  }
  // numba loads through ctypes (_ctypes, libffi skipped) or cuda-python's bindings.
  const bool python_bindings = StartsWith(file, "_ctypes") || StartsWith(label, "cuda/bindings/") ||
                               StartsWith(label, "cuda/") || StartsWith(label, "numba");
  if (python_bindings) {
    if (IsNumbaName(mangled, name)) return found(KernelOriginKind::kNumba, "", true);
    return v;  // another Python caller: the name may say more
  }
  // The interpreter itself tells nothing about the kernel.
  if (StartsWith(file, "python") || StartsWith(file, "libpython")) return v;
  // An object in a Python package that none of the above knows: someone's library, perhaps
  // not the user's. Not "yours" without evidence.
  if (Contains(label, "/") && !StartsWith(label, "triton-cache/")) return v;
  // The program or its own extension (a file outside any Python package).
  return found(KernelOriginKind::kCudaCpp, "", true);
}

KernelOrigin ClassifyByName(std::string_view mangled, std::string_view demangled, bool has_triton_metadata) {
  const std::string_view name = demangled.empty() ? mangled : demangled;
  if (has_triton_metadata || (!StartsWith(mangled, "_Z") && StartsWith(name, "triton_"))) {
    return Make(IsInductorName(name) ? KernelOriginKind::kInductor : KernelOriginKind::kTriton, "", true, "name");
  }
  std::string_view wrapper;
  if (const HeaderLibrary* h = HeaderLibraryOf(mangled, demangled, &wrapper);
      h != nullptr && !IsPrecompiledCutlassInstance(name)) {
    // PyTorch compiles CUB into itself wrapped in at_cuda_detail (CUB_WRAPPED_NAMESPACE).
    if (wrapper == "at_cuda_detail") return Make(KernelOriginKind::kAten, "PyTorch (ATen)", false, "name");
    return MakeHeaderLibrary(*h, "", "name");
  }
  for (const VendorMarker& v : kVendorMarkers) {
    const bool hit = v.prefix ? (StartsWith(name, v.marker) || StartsWith(mangled, v.marker))
                              : (Contains(name, v.marker) || Contains(mangled, v.marker));
    if (hit) return Make(KernelOriginKind::kVendor, v.library, false, "name");
  }
  // PyTorch: at::native / at::cuda kernels, its multi-tensor optimizers, c10 and cub inside it.
  if (Contains(name, "at::native::") || Contains(name, "at::cuda::") || Contains(name, "at::_ops") ||
      Contains(mangled, "_ZN2at6native") || Contains(mangled, "_ZN2at4cuda") ||
      StartsWith(name, "void at::") || Contains(name, "c10::")) {
    return Make(KernelOriginKind::kAten, "PyTorch (ATen)", false, "name");
  }
  if (IsNumbaName(mangled, name)) return Make(KernelOriginKind::kNumba, "", true, "name");
  // CuPy's own kernels carry its prefix; a user's RawKernel has whatever name the user chose,
  // which only the loader can tell.
  if (StartsWith(name, "cupy_")) return Make(KernelOriginKind::kVendor, "CuPy", false, "name");
  // XLA's fusions ("gemm_fusion_dot_4", "loop_add_fusion", "input_reduce_fusion_1"): plain C names.
  if (!StartsWith(mangled, "_Z") && (Contains(name, "_fusion") || StartsWith(name, "fusion"))) {
    return Make(KernelOriginKind::kVendor, "XLA (jaxlib)", false, "name");
  }
  // Unknown: model advice only, with that caveat; still tunable in the sense that the model's
  // suggestions are kept for whoever owns it.
  return Make(KernelOriginKind::kUnknown, "", true, "none");
}

}  // namespace

std::string LoaderLabel(std::string_view path) {
  if (path.empty()) return "";
  for (std::string_view root : {"site-packages/", "dist-packages/"}) {
    const size_t at = path.rfind(root);
    if (at != std::string_view::npos) return std::string(path.substr(at + root.size()));
  }
  const std::string_view file = FileName(path);
  // Triton's cache: $TRITON_CACHE_DIR, ~/.triton/cache, /tmp/torchinductor_$USER/triton.
  if (Contains(path, "/.triton/") || Contains(path, "/triton/") || Contains(path, "triton_cache") ||
      StartsWith(file, "__triton_launcher")) {
    return "triton-cache/" + std::string(file);
  }
  return std::string(file);
}

KernelOrigin ClassifyKernel(const KernelFacts& f) {
  const std::string_view name = f.demangled.empty() ? f.mangled : f.demangled;
  // Where the code lives, when the driver says (a mapped image), then who loaded it.
  for (auto [label, evidence] : {std::pair{f.module_library, "library"}, std::pair{f.loader, "loader"}}) {
    ObjectVerdict v = ClassifyObject(label, f.mangled, name, evidence);
    if (!v.found) continue;
    // The user's own binary loaded it, but a header library's kernel template is the code.
    std::string_view wrapper;
    const HeaderLibrary* h = HeaderLibraryOf(f.mangled, f.demangled, &wrapper);
    if (v.origin.kind == KernelOriginKind::kCudaCpp && h != nullptr) return MakeHeaderLibrary(*h, label, "name");
    return v.origin;
  }
  return ClassifyByName(f.mangled, f.demangled, f.has_triton_metadata);
}

KernelOrigin ClassifyKernel(std::string_view mangled, std::string_view demangled, bool has_triton_metadata) {
  return ClassifyByName(mangled, demangled, has_triton_metadata);
}

namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// Top-level comma-separated parts of "a, B<c, d>, e".
std::vector<std::string> SplitArguments(std::string_view s) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      parts.push_back(Trim(s.substr(begin, i - begin)));
      begin = i + 1;
    }
  }
  if (begin < s.size()) parts.push_back(Trim(s.substr(begin)));
  return parts;
}

// Numba's mangler writes its types as C++ ones (numba/cuda/itanium_mangler.py); their Numba
// names.
std::string NumbaScalar(const std::string& t) {
  static const std::array<std::pair<std::string_view, std::string_view>, 12> kTypes = {{
      {"float", "float32"}, {"double", "float64"}, {"int", "int32"}, {"long long", "int64"},
      {"long", "int64"}, {"unsigned int", "uint32"}, {"unsigned long long", "uint64"},
      {"unsigned long", "uint64"}, {"short", "int16"}, {"unsigned short", "uint16"},
      {"signed char", "int8"}, {"unsigned char", "uint8"},
  }};
  for (const auto& [cpp, numba] : kTypes) {
    if (t == cpp) return std::string(numba);
  }
  return t;
}

// "Array<float, 1, C, mutable, aligned>" -> "array(float32, 1d, C)", as Numba prints it.
std::string NumbaType(const std::string& t) {
  if (!StartsWith(t, "Array<") || t.back() != '>') return NumbaScalar(t);
  const std::vector<std::string> p = SplitArguments(std::string_view(t).substr(6, t.size() - 7));
  if (p.size() < 3) return t;
  std::string text = "array(" + NumbaType(p[0]) + ", " + p[1] + "d, " + p[2] + ")";
  if (p.size() > 3 && p[3] == "readonly") text = "readonly " + text;
  if (p.size() > 4 && p[4] == "unaligned") text = "unaligned " + text;
  return text;
}

}  // namespace

bool IsNumbaKernel(std::string_view mangled, std::string_view demangled) {
  return IsNumbaName(mangled, demangled.empty() ? mangled : demangled);
}

std::string NumbaDisplayName(std::string_view demangled, bool with_arguments) {
  // Drop the ABI tags: "[abi:v1]" and the long hash of the compile options.
  std::string plain;
  for (size_t i = 0; i < demangled.size();) {
    if (demangled.substr(i, 5) == "[abi:") {
      const size_t close = demangled.find(']', i);
      if (close == std::string_view::npos) break;
      i = close + 1;
      continue;
    }
    plain += demangled[i++];
  }
  const size_t open = plain.find('(');
  std::string function = plain.substr(0, open);
  for (size_t at = function.find("::"); at != std::string::npos; at = function.find("::", at + 1)) {
    function.replace(at, 2, ".");
  }
  if (!with_arguments) {
    const size_t dot = function.rfind('.');
    return dot == std::string::npos ? function : function.substr(dot + 1);
  }
  if (open == std::string::npos || plain.back() != ')') return function;
  std::string arguments;
  for (const std::string& a : SplitArguments(std::string_view(plain).substr(open + 1, plain.size() - open - 2))) {
    arguments += (arguments.empty() ? "" : ", ") + NumbaType(a);
  }
  return function + "(" + arguments + ")";
}

bool IsCommunicationKernel(std::string_view mangled, std::string_view demangled) {
  return ClassifyByName(mangled, demangled, false).library == kCommunicationLibrary;
}

std::string_view OriginName(KernelOriginKind kind) {
  switch (kind) {
    case KernelOriginKind::kCudaCpp: return "cuda_cpp";
    case KernelOriginKind::kNumba: return "numba";
    case KernelOriginKind::kCuPy: return "cupy";
    case KernelOriginKind::kTriton: return "triton";
    case KernelOriginKind::kInductor: return "inductor";
    case KernelOriginKind::kAten: return "aten";
    case KernelOriginKind::kVendor: return "vendor";
    case KernelOriginKind::kHeaderLibrary: return "header_library";
    case KernelOriginKind::kUnknown: return "unknown";
  }
  return "unknown";
}

KernelOriginKind OriginKindFromName(std::string_view name) {
  for (KernelOriginKind k : {KernelOriginKind::kCudaCpp, KernelOriginKind::kNumba, KernelOriginKind::kCuPy,
                             KernelOriginKind::kTriton, KernelOriginKind::kInductor, KernelOriginKind::kAten,
                             KernelOriginKind::kVendor, KernelOriginKind::kHeaderLibrary}) {
    if (OriginName(k) == name) return k;
  }
  return KernelOriginKind::kUnknown;
}

std::string LaunchKnob(KernelOriginKind kind) {
  switch (kind) {
    case KernelOriginKind::kCudaCpp:
    case KernelOriginKind::kUnknown: return "kernel<<<grid, block>>>";
    case KernelOriginKind::kNumba: return "kernel[grid, block]";
    case KernelOriginKind::kCuPy: return "RawKernel((grid,), (block,), args)";
    case KernelOriginKind::kTriton: return "triton.Config(num_warps=...) / the block-size constexprs";
    case KernelOriginKind::kInductor:
      return "Inductor's autotuning (torch._inductor.config.coordinate_descent_tuning = True or "
             "torch.compile(mode=\"max-autotune\")), which picks num_warps and XBLOCK/RBLOCK";
    case KernelOriginKind::kAten:
    case KernelOriginKind::kVendor:
    case KernelOriginKind::kHeaderLibrary: return "";
  }
  return "";
}

std::string OwnerName(const KernelOrigin& origin) {
  if (origin.kind == KernelOriginKind::kHeaderLibrary && !origin.compiled_into.empty()) {
    return origin.library + " (compiled into " + origin.compiled_into + ")";
  }
  return origin.library.empty() ? std::string(OriginName(origin.kind)) : origin.library;
}

}  // namespace occ
