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
      // The user's own executable or extension (a header library's kernel compiled into it is
      // the library's: HeaderLibrariesCompiledIntoTheUsersBinary).
      {"/home/u/project/build/my_solver", "_Z8my_solvePfi", "my_solve(float*, int)", KernelOriginKind::kCudaCpp, ""},
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

// Header libraries compiled into the user's program: the loader is the user's binary, the code
// the library's. Names: the FUNC symbols of `nvcc -arch=sm_90 -cubin` (CUDA 13.0, CCCL 3.0.1) of
// tests/golden/header_libraries/thrust_user.cu and cutlass_user.cu (CUTLASS at 7107b05), and the
// newer inline namespace of cub/cub/util_namespace.cuh at CCCL 3.x (`_V_<version>_SM_<archs>`,
// CUB_DETAIL_MAGIC_NS_BEGIN) as g++ mangles it.
TEST(KernelOrigin, HeaderLibrariesCompiledIntoTheUsersBinary) {
  struct HeaderCase {
    const char* mangled;
    const char* demangled;
    const char* library;
    const char* controls;  // a phrase of what the user controls
  };
  const HeaderCase cases[] = {
      {"_ZN3cub17CUB_300001_SM_9006detail4scan20DeviceScanInitKernelINS0_13ScanTileStateIjLb1EEEEEvT_i",
       "void cub::CUB_300001_SM_900::detail::scan::DeviceScanInitKernel<cub::CUB_300001_SM_900::ScanTileState<"
       "unsigned int, true> >(cub::CUB_300001_SM_900::ScanTileState<unsigned int, true>, int)",
       "CUB", "the algorithm call and its inputs"},
      // No demangled name: the mangled one decides.
      {"_ZN3cub17CUB_300001_SM_9006detail8for_each13static_kernelINS2_12policy_hub_t12policy_500_tEmN6thrust23THRUST_"
       "300001_SM_900_NS8cuda_cub20__uninitialized_fill7functorINS7_10device_ptrIjEEjEEEEvT0_T1_",
       "", "CUB", "the temporary storage you pass"},
      {"_ZN3cub16_V_300300_SM_9006detail4scan20DeviceScanInitKernelIiEEvT_i",
       "void cub::_V_300300_SM_900::detail::scan::DeviceScanInitKernel<int>(int, int)", "CUB",
       "no launch configuration or register cap applies"},
      // Thrust's own agent kernel (thrust/system/cuda/detail/core/agent_launcher.h), in its
      // versioned namespace (thrust/detail/config/namespace.h, THRUST_<version>_SM_<archs>_NS).
      {"", "void thrust::THRUST_200500_SM_900_NS::cuda_cub::core::_kernel_agent<int>(int)", "Thrust",
       "the execution policy"},
      {"", "void thrust::_V_300300_SM_900::cuda_cub::core::detail::_kernel_agent<int>(int)", "Thrust",
       "the sizes and types of the ranges"},
      // CUTLASS 2.x's generic kernel (include/cutlass/device_kernel.h: cutlass::Kernel).
      {"_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedINS1_9GemmShapeILi128ELi128ELi8EEEEEEEEEvNT_6ParamsE",
       "", "CUTLASS", "the template's tile shape (ThreadblockShape/TileShape), stages and warp shape"},
      {"", "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int> > >("
           "cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int> >::Params)",
       "CUTLASS", "ThreadblockShape/TileShape"},
      {"", "void cute::tiled_copy_kernel<float>(float const*, float*)", "CuTe", "stages and warp shape"},
      {"", "void cuda::std::__4::__detail::fill_kernel<int>(int*, int)", "libcu++", "the call and its inputs"},
  };
  for (const HeaderCase& c : cases) {
    KernelFacts facts;
    facts.mangled = c.mangled;
    facts.demangled = c.demangled;
    facts.loader = "thrust_prog";
    const KernelOrigin o = ClassifyKernel(facts);
    EXPECT_EQ(OriginName(o.kind), "header_library") << c.mangled << c.demangled;
    EXPECT_EQ(o.library, c.library) << c.mangled << c.demangled;
    EXPECT_FALSE(o.tunable);
    EXPECT_EQ(o.compiled_into, "thrust_prog");
    EXPECT_EQ(OwnerName(o), std::string(c.library) + " (compiled into thrust_prog)");
    EXPECT_NE(o.controls.find(c.controls), std::string::npos) << o.controls;
    EXPECT_TRUE(LaunchKnob(o.kind).empty());
  }
}

TEST(KernelOrigin, HeaderLibraryNamesOnlyByTheKernelsOwnNamespace) {
  KernelFacts facts;
  facts.loader = "my_app";
  // The user's kernel templated on CUB's and CUTLASS's types is the user's.
  facts.demangled = "void my_reduce<cub::CUB_300001_SM_900::Sum, cutlass::half_t>(float*, int)";
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kCudaCpp);
  facts.demangled = "heavy_stencil(float const*, float*, int)";
  facts.mangled = "_Z13heavy_stencilPKfPfi";
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kCudaCpp);
  // cuda::launch runs the user's functor in libcu++'s __kernel_launcher
  // (libcudacxx/include/cuda/__launch/launch.h), at the configuration the user passes.
  facts.mangled = "";
  facts.demangled = "void cuda::__4::__kernel_launcher<cuda::kernel_config<int>, my_functor, int>(cuda::kernel_config<int>, my_functor, int)";
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kCudaCpp);
  // A library loaded it: the library owns it, whatever it was compiled from.
  facts.loader = "torch/lib/libtorch_cuda.so";
  facts.demangled = "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<int>(int)";
  EXPECT_EQ(ClassifyKernel(facts).kind, KernelOriginKind::kAten);
  facts.loader = "nvidia/cublas/lib/libcublasLt.so.13";
  facts.demangled = "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_128x128_64x5_nt_align8>("
                    "cutlass_80_tensorop_s16816gemm_bf16_128x128_64x5_nt_align8::Params)";
  EXPECT_EQ(ClassifyKernel(facts).library, "cuBLASLt");
  // Names only (no loader recorded): PyTorch's wrapped CUB (CUB_WRAPPED_NAMESPACE=at_cuda_detail)
  // is PyTorch's, cuBLAS's precompiled CUTLASS instances stay cuBLAS's, a CUB kernel is CUB's.
  EXPECT_EQ(ClassifyKernel("", "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<int>(int)").kind,
            KernelOriginKind::kAten);
  EXPECT_EQ(ClassifyKernel("", facts.demangled).kind, KernelOriginKind::kVendor);
  const KernelOrigin cub = ClassifyKernel("_ZN3cub17CUB_300001_SM_9006detail4scan20DeviceScanInitKernelINS0_13ScanTileStateIjLb1EEEEEvT_i", "");
  EXPECT_EQ(cub.kind, KernelOriginKind::kHeaderLibrary);
  EXPECT_EQ(OwnerName(cub), "CUB");
  EXPECT_EQ(cub.evidence, "name");
}

TEST(KernelOrigin, KnobsNameTheOwnersInterface) {
  EXPECT_EQ(LaunchKnob(KernelOriginKind::kNumba), "kernel[grid, block]");
  EXPECT_EQ(LaunchKnob(KernelOriginKind::kCudaCpp), "kernel<<<grid, block>>>");
  EXPECT_TRUE(LaunchKnob(KernelOriginKind::kVendor).empty());
  EXPECT_NE(LaunchKnob(KernelOriginKind::kInductor).find("coordinate_descent_tuning"), std::string::npos);
}

}  // namespace
}  // namespace occ
