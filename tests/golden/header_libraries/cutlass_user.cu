// A user's CUTLASS 2.x SIMT SGEMM (the template the owners golden names), one instantiation.
#include <cutlass/gemm/device/gemm.h>

using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::ColumnMajor, float, cutlass::layout::ColumnMajor,
                                         float, cutlass::layout::ColumnMajor>;

int main() {
  Gemm gemm;
  int M = 4096, N = 4096, K = 4096;
  float *A = nullptr, *B = nullptr, *C = nullptr;
  Gemm::Arguments args({M, N, K}, {A, M}, {B, K}, {C, M}, {C, M}, {1.0f, 0.0f});
  return gemm(args) == cutlass::Status::kSuccess ? 0 : 1;
}
