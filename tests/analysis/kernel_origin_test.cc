// The kernel-origin classifier on real kernel names recorded by libocctrace.so on an H100
// (2026-11-24: torchvision ResNet-50 training, a torch.compile'd transformer block, a Numba
// saxpy; tests/gpu/workloads). The expected owner is what produced each kernel in those runs.
#include "analyzer/kernel_origin.h"

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
      // The program's own CUDA C++ (tests/gpu/continuous_cuda.cu)
      {"_Z5scalePfif", "scale(float*, int, float)", KernelOriginKind::kCudaCpp, true},
  };
  for (const Case& c : cases) {
    const KernelOrigin o = ClassifyKernel(c.mangled, c.demangled);
    EXPECT_EQ(OriginName(o.kind), OriginName(c.kind)) << c.mangled;
    EXPECT_EQ(o.tunable, c.tunable) << c.mangled;
    EXPECT_EQ(o.library.empty(), c.tunable) << c.mangled << ": libraries are named, user code is not";
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
  EXPECT_EQ(ClassifyKernel("_attn_fwd", "_attn_fwd").kind, KernelOriginKind::kCudaCpp);
  EXPECT_EQ(ClassifyKernel("_attn_fwd", "_attn_fwd", /*has_triton_metadata=*/true).kind,
            KernelOriginKind::kTriton);
}

TEST(KernelOrigin, KnobsNameTheOwnersInterface) {
  EXPECT_EQ(LaunchKnob(KernelOriginKind::kNumba), "kernel[grid, block]");
  EXPECT_EQ(LaunchKnob(KernelOriginKind::kCudaCpp), "kernel<<<grid, block>>>");
  EXPECT_TRUE(LaunchKnob(KernelOriginKind::kVendor).empty());
  EXPECT_NE(LaunchKnob(KernelOriginKind::kInductor).find("coordinate_descent_tuning"), std::string::npos);
}

}  // namespace
}  // namespace occ
