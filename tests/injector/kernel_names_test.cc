#include "injector/writer/kernel_names.h"

#include <gtest/gtest.h>

namespace occ::inj {
namespace {

// Demangled forms are binutils' c++filt output for the same names (an independent demangler);
// short names follow nsys' shortName (base name only).
TEST(KernelNamesTest, TemplateKernel) {
  KernelNames names = MakeKernelNames(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_");
  EXPECT_EQ(names.demangled,
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
            "at::detail::Array<char*, 1>)");
  EXPECT_EQ(names.short_name, "vectorized_elementwise_kernel");
}

TEST(KernelNamesTest, PlainFunction) {
  KernelNames names = MakeKernelNames("_Z6squarePfi");
  EXPECT_EQ(names.demangled, "square(float*, int)");
  EXPECT_EQ(names.short_name, "square");
  EXPECT_EQ(names.mangled, "_Z6squarePfi");
}

TEST(KernelNamesTest, AnonymousNamespace) {
  KernelNames names = MakeKernelNames("_ZN12_GLOBAL__N_110add_kernelEPfPKfS2_i");
  EXPECT_EQ(names.demangled, "(anonymous namespace)::add_kernel(float*, float const*, float const*, int)");
  EXPECT_EQ(names.short_name, "add_kernel");
}

TEST(KernelNamesTest, TemplateWithNestedReturnType) {
  KernelNames names = MakeKernelNames("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE");
  EXPECT_EQ(names.demangled,
            "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<int> >(cutlass::gemm::kernel::Gemm<int>::Params)");
  EXPECT_EQ(names.short_name, "Kernel");
}

TEST(KernelNamesTest, ExternCNameStaysAsIs) {
  KernelNames names = MakeKernelNames("ampere_sgemm_128x64_nn");
  EXPECT_EQ(names.demangled, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(names.short_name, "ampere_sgemm_128x64_nn");
}

TEST(KernelNamesTest, InvalidMangledNameFallsBack) {
  KernelNames names = MakeKernelNames("_Z");
  EXPECT_EQ(names.demangled, "_Z");
  EXPECT_EQ(names.short_name, "_Z");
}

}  // namespace
}  // namespace occ::inj
