#include "kernel_origin.h"

#include <array>
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

}  // namespace

KernelOrigin ClassifyKernel(std::string_view mangled, std::string_view demangled, bool has_triton_metadata) {
  const std::string_view name = demangled.empty() ? mangled : demangled;
  KernelOrigin o;
  if (has_triton_metadata || (!StartsWith(mangled, "_Z") && StartsWith(name, "triton_"))) {
    const bool inductor = StartsWith(name, "triton_poi_") || StartsWith(name, "triton_per_") ||
                          StartsWith(name, "triton_red_") || StartsWith(name, "triton_tem_") ||
                          StartsWith(name, "triton_for_") || StartsWith(name, "triton_scan_");
    o.kind = inductor ? KernelOriginKind::kInductor : KernelOriginKind::kTriton;
    return o;
  }
  for (const VendorMarker& v : kVendorMarkers) {
    const bool hit = v.prefix ? (StartsWith(name, v.marker) || StartsWith(mangled, v.marker))
                              : (Contains(name, v.marker) || Contains(mangled, v.marker));
    if (hit) {
      o.kind = KernelOriginKind::kVendor;
      o.library = std::string(v.library);
      o.tunable = false;
      return o;
    }
  }
  // PyTorch: at::native / at::cuda kernels, its multi-tensor optimizers, c10 and cub inside it.
  if (Contains(name, "at::native::") || Contains(name, "at::cuda::") || Contains(name, "at::_ops") ||
      Contains(mangled, "_ZN2at6native") || Contains(mangled, "_ZN2at4cuda") ||
      StartsWith(name, "void at::") || Contains(name, "c10::")) {
    o.kind = KernelOriginKind::kAten;
    o.library = "PyTorch (ATen)";
    o.tunable = false;
    return o;
  }
  // Numba: the demangled name carries the Python module and numba's ABI tags
  // ("__main__::saxpy[abi:v1][abi:cw51...]"), the mangled one "cudapy" or the module path.
  if (Contains(name, "[abi:") || Contains(mangled, "cudapy") || Contains(mangled, "numba") ||
      Contains(mangled, "B2v1B")) {
    o.kind = KernelOriginKind::kNumba;
    return o;
  }
  if (Contains(name, "cupy_") || StartsWith(name, "cupy")) {
    o.kind = KernelOriginKind::kCuPy;
    return o;
  }
  return o;
}

bool IsCommunicationKernel(std::string_view mangled, std::string_view demangled) {
  return ClassifyKernel(mangled, demangled).library == kCommunicationLibrary;
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
  }
  return "cuda_cpp";
}

std::string LaunchKnob(KernelOriginKind kind) {
  switch (kind) {
    case KernelOriginKind::kCudaCpp: return "kernel<<<grid, block>>>";
    case KernelOriginKind::kNumba: return "kernel[grid, block]";
    case KernelOriginKind::kCuPy: return "RawKernel((grid,), (block,), args)";
    case KernelOriginKind::kTriton: return "triton.Config(num_warps=...) / the block-size constexprs";
    case KernelOriginKind::kInductor:
      return "Inductor's autotuning (torch._inductor.config.coordinate_descent_tuning = True or "
             "torch.compile(mode=\"max-autotune\")), which picks num_warps and XBLOCK/RBLOCK";
    case KernelOriginKind::kAten:
    case KernelOriginKind::kVendor: return "";
  }
  return "";
}

}  // namespace occ
