// The kernel-origin classifier on real kernel names recorded by libocctrace.so on an H100
// (2026-11-24: torchvision ResNet-50 training, a torch.compile'd transformer block, a Numba
// saxpy; tests/gpu/workloads). The expected owner is what produced each kernel in those runs.
#include "analyzer/analyze/kernel_origin.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace occ {
namespace {

struct Case {
  const char* mangled;
  const char* demangled;
  KernelOriginKind kind;
  bool tunable;
};

TEST(KernelOrigin, RealNamesFromH100Traces) {
  const Case cases[] = {
      // cuBLAS / cuDNN / CUTLASS inside cuDNN (ResNet-50)
      {"nvjet_sm90_tst_64x512_64x2_1x2_h_ssched_bz_coopB_TNT", "", KernelOriginKind::kVendor, false},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x64x32", "",
       KernelOriginKind::kVendor, false},
      {"_ZN17cutlass__5x_cudnn6KernelI72cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32", "",
       KernelOriginKind::kVendor, false},
      {"_Z20nhwcAddPaddingKernelI13__nv_bfloat16S0_fLb1EL21cudnnKernelDataType_t0EEviiiiiiiiPKT_PT", "",
       KernelOriginKind::kVendor, false},
      // PyTorch's memory-efficient attention (torch.compile'd block)
      {"_Z39fmha_cutlassF_f32_aligned_64x64_rf_sm80N22PyTorchMemEffAttention15AttentionKernelIfN7c", "",
       KernelOriginKind::kVendor, false},
      // ATen
      {"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1", "",
       KernelOriginKind::kAten, false},
      {"_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_13BUnaryFunc", "",
       KernelOriginKind::kAten, false},
      // TorchInductor's Triton kernels
      {"triton_red_fused_sum_9", "triton_red_fused_sum_9", KernelOriginKind::kInductor, true},
      {"triton_per_fused_clone_native_layer_norm_transpose_0", "", KernelOriginKind::kInductor, true},
      {"triton_poi_fused_gelu_view_7", "", KernelOriginKind::kInductor, true},
      // Numba
      {"_ZN8__main__5saxpyB2v1B104cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3Cw6igA9duC0hkwnNGiHEkYkrqQBFBT",
       "__main__::saxpy[abi:v1][abi:cw51cXTLSUwv1sDU]", KernelOriginKind::kNumba, true},
      // The program's own CUDA C++ (tests/gpu/continuous_cuda.cu): by name alone nobody can
      // tell it from a library's, so its owner is unknown (advice only with that caveat).
      {"_Z5scalePfif", "scale(float*, int, float)", KernelOriginKind::kUnknown, true},
  };
  for (const Case& c : cases) {
    const KernelOrigin o = ClassifyKernel(c.mangled, c.demangled);
    EXPECT_EQ(OriginName(o.kind), OriginName(c.kind)) << c.mangled;
    EXPECT_EQ(o.tunable, c.tunable) << c.mangled;
    EXPECT_EQ(o.library.empty(), c.tunable) << c.mangled << ": libraries are named, user code is not";
    EXPECT_EQ(o.evidence, o.kind == KernelOriginKind::kUnknown ? "none" : "name") << c.mangled;
  }
}

// NCCL's kernels under the names NCCL 2.19+ (ncclDevKernel_*) and older releases (ncclKernel_*)
// give them; the cross-rank report treats their time as communication.
TEST(KernelOrigin, NcclKernelsAreCommunication) {
  const std::pair<const char*, const char*> names[] = {
      {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
       "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
      {"_Z36ncclKernel_AllReduce_RING_LL_Sum_float12ncclWorkElem",
       "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"},
      {"_Z29ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE", ""},
  };
  for (const auto& [mangled, demangled] : names) {
    const KernelOrigin origin = ClassifyKernel(mangled, demangled);
    EXPECT_EQ(origin.kind, KernelOriginKind::kVendor) << mangled;
    EXPECT_EQ(origin.library, "NCCL") << mangled;
    EXPECT_FALSE(origin.tunable) << mangled;
    EXPECT_TRUE(IsCommunicationKernel(mangled, demangled)) << mangled;
  }
  EXPECT_FALSE(IsCommunicationKernel("_Z14gemm_tn_kernelILi128EEvPKf", "void gemm_tn_kernel<128>(float const*)"));
}

TEST(KernelOrigin, TritonMetadataMakesAnUnprefixedKernelTriton) {
  EXPECT_EQ(ClassifyKernel("_attn_fwd", "_attn_fwd").kind, KernelOriginKind::kUnknown);
  EXPECT_EQ(ClassifyKernel("_attn_fwd", "_attn_fwd", /*has_triton_metadata=*/true).kind,
            KernelOriginKind::kTriton);
}

// Owners from the object that loaded the module, with a stand-in library layout: the paths are
// where pip wheels, Triton's cache and Python put these objects (the loader column keeps full
// paths; LoaderLabel cuts them at site-packages). The name is the second signal only.
TEST(KernelOrigin, LoaderDecidesOverNames) {
  struct LoaderCase {
    const char* loader;
    const char* mangled;
    const char* demangled;
    KernelOriginKind kind;
    const char* library;
  };
  const LoaderCase cases[] = {
      {"/home/u/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9",
       "precomputed_convolve_sgemm", "", KernelOriginKind::kVendor, "cuDNN"},
      {"/usr/local/lib/python3.12/dist-packages/nvidia/cublas/lib/libcublasLt.so.12",
       "_Z17gemv2T_kernel_valIiiffffLi128ELi16ELi4ELi4ELb0ELb0EEvT0_", "", KernelOriginKind::kVendor, "cuBLASLt"},
      {"/opt/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12", "_Z10dot_kernelIfLi128ELi0EEvv", "",
       KernelOriginKind::kVendor, "cuBLAS"},
      {"/opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2", "_Z12some_kernelv", "",
       KernelOriginKind::kVendor, "NCCL"},
      {"/usr/local/cuda/lib64/libcufft.so.11", "_Z11vector_fft5v", "", KernelOriginKind::kVendor, "cuFFT"},
      {"/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
       "_ZN2at6native29vectorized_elementwise_kernelILi4EEvv", "", KernelOriginKind::kAten, "PyTorch (ATen)"},
      // XLA's autotuning variants: a plain name any user could have chosen.
      {"/opt/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so", "gemm_fusion_dot_4", "",
       KernelOriginKind::kVendor, "XLA (jaxlib)"},
      {"/opt/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so", "loop_add_fusion", "",
       KernelOriginKind::kVendor, "XLA (jaxlib)"},
      // CuPy: its own kernels and the user's RawKernel, loaded by the same driver module.
      {"/opt/venv/lib/python3.12/site-packages/cupy_backends/cuda/api/driver.cpython-312-x86_64-linux-gnu.so",
       "cupy_random_x_mod_1", "", KernelOriginKind::kVendor, "CuPy"},
      {"/opt/venv/lib/python3.12/site-packages/cupy_backends/cuda/api/driver.cpython-312-x86_64-linux-gnu.so",
       "scale_rows", "", KernelOriginKind::kCuPy, ""},
      // CuPy's precompiled modules (recorded on an H200, 2026-11-27: cupy 14.2).
      {"/opt/venv/lib/python3.12/site-packages/cupy/random/_generator_api.cpython-312-x86_64-linux-gnu.so",
       "_Z11init_curandI19curand_pseudo_stateI17curandStateXORWOWEEvlml", "", KernelOriginKind::kVendor, "CuPy"},
      {"/opt/venv/lib/python3.12/site-packages/cupy/cuda/cub.cpython-312-x86_64-linux-gnu.so",
       "_ZN3cub43CUB_300102_SM_750_800_860_890_900_1000_12006detail6reduce18DeviceReduceKernelEv", "",
       KernelOriginKind::kVendor, "CuPy"},
      {"/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcurand.so.10", "_Z13gen_sequencedv", "",
       KernelOriginKind::kVendor, "cuRAND"},
      // numba through ctypes (libffi is skipped by the injector, _ctypes is the caller).
      {"/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so",
       "_ZN8__main__5saxpyB2v1B96cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3Cw6igA9duC0hkwnNGiHEkYkrqQBE5ArrayIfLi1E1C7mutable7alignedE",
       "", KernelOriginKind::kNumba, ""},
      // Triton's launcher in its cache: hand-written Triton, and Inductor's by name.
      {"/home/u/.triton/cache/Xy3k2q/cuda_utils.so", "add_kernel", "", KernelOriginKind::kTriton, ""},
      {"/home/u/.triton/cache/Xy3k2q/cuda_utils.so", "triton_poi_fused_add_relu_0", "", KernelOriginKind::kInductor, ""},
      // The user's own executable or extension: yours, even with a library-like name (CUTLASS
      // templates instantiated in the user's code).
      {"/home/u/project/build/my_solver", "_ZN7cutlass6KernelI4GemmEEvv", "void cutlass::Kernel<Gemm>()",
       KernelOriginKind::kCudaCpp, ""},
      {"/home/u/.cache/torch_extensions/py312_cu124/my_ext/my_ext.so", "_Z9my_kernelPf", "my_kernel(float*)",
       KernelOriginKind::kCudaCpp, ""},
  };
  for (const LoaderCase& c : cases) {
    const std::string label = LoaderLabel(c.loader);
    EXPECT_EQ(label.find("/home/"), std::string::npos) << label;
    EXPECT_EQ(label.find("/opt/"), std::string::npos) << label;
    KernelFacts facts;
    facts.mangled = c.mangled;
    facts.demangled = c.demangled;
    facts.loader = label;
    const KernelOrigin o = ClassifyKernel(facts);
    EXPECT_EQ(OriginName(o.kind), OriginName(c.kind)) << c.loader << " " << c.mangled;
    EXPECT_EQ(o.library, c.library) << c.loader;
    EXPECT_EQ(o.evidence, "loader") << c.loader;
    EXPECT_EQ(o.tunable, std::string(c.library).empty()) << c.loader;
  }
  EXPECT_EQ(LoaderLabel("/x/site-packages/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9"),
            "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9");
  EXPECT_EQ(LoaderLabel("/home/u/.triton/cache/Xy3k2q/cuda_utils.so"), "triton-cache/cuda_utils.so");
  EXPECT_EQ(LoaderLabel("/home/u/project/build/my_solver"), "my_solver");
}

// A loader that says nothing (the interpreter, an unnamed package, Python bindings calling an
// unrecognized name) leaves the name to decide; with no name either, the owner is unknown.
TEST(KernelOrigin, UninformativeLoadersFallBackToNamesThenUnknown) {
  KernelFacts facts;
  facts.mangled = "_Z6kernelPf";
  const std::string python = LoaderLabel("/usr/bin/python3.12");
  const std::string package = LoaderLabel("/opt/venv/lib/python3.12/site-packages/somepkg/_ext.so");
  const std::string ctypes = LoaderLabel("/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so");
  const std::string cudnn = LoaderLabel("/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn_cnn.so.9");
  facts.loader = python;
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kUnknown);
  facts.loader = package;
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kUnknown) << "a package's kernel is not yours by default";
  facts.loader = ctypes;
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kUnknown);
  EXPECT_EQ(ClassifyKernel(facts).evidence, "none");
  facts.mangled = "_ZN2at6native6kernelEv";
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kAten);
  EXPECT_EQ(ClassifyKernel(facts).evidence, "name");
  // The mapped image's file, when the driver tells it, comes before the loader.
  facts.module_library = cudnn;
  EXPECT_EQ(ClassifyKernel(facts).library, "cuDNN");
  EXPECT_EQ(ClassifyKernel(facts).evidence, "library");
}

TEST(KernelOrigin, NumbaNamesReadAsInTheSource) {
  const std::string demangled =
      "__main__::saxpy[abi:v1][abi:cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3Cw6igA9duC0hkwnNGiHEkYkrqQBFBTDEwCyQe21eqwcFW3"
      "UoDGjzpQEsgzrtUEAA_3d_3d](float, Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>)";
  EXPECT_EQ(NumbaDisplayName(demangled, true),
            "__main__.saxpy(float32, array(float32, 1d, C), array(float32, 1d, C))");
  EXPECT_EQ(NumbaDisplayName(demangled, false), "saxpy");
  EXPECT_EQ(NumbaDisplayName("pkg::sub::k[abi:v1](long long, Array<double, 2, F, readonly, aligned>)", true),
            "pkg.sub.k(int64, readonly array(float64, 2d, F))");
  EXPECT_TRUE(IsNumbaKernel("_ZN8__main__5saxpyB2v1B96cw51c", ""));
  EXPECT_TRUE(IsNumbaKernel("_ZN8__main__9transposeB2v2B104cw51cXTLSUwv1sDU", "")) << "a second compilation: [abi:v2]";
  EXPECT_FALSE(IsNumbaKernel("_Z5scalePfif", "scale(float*, int, float)"));
}

TEST(KernelOrigin, KnobsNameTheOwnersInterface) {
  EXPECT_EQ(LaunchKnob(KernelOriginKind::kNumba), "kernel[grid, block]");
  EXPECT_EQ(LaunchKnob(KernelOriginKind::kCudaCpp), "kernel<<<grid, block>>>");
  EXPECT_TRUE(LaunchKnob(KernelOriginKind::kVendor).empty());
  EXPECT_NE(LaunchKnob(KernelOriginKind::kInductor).find("coordinate_descent_tuning"), std::string::npos);
}

}  // namespace
}  // namespace occ
