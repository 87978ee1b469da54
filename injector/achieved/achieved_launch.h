// What the achieved-occupancy code reads from CUPTI launch callbacks: which callback ids are
// kernel launches, their launch configuration, and the correlation id that the kernel's
// activity record will carry. No CUDA calls: unit-tested on CPU with hand-built parameter
// structs (tests/achieved/achieved_launch_test.cc).
#pragma once

#include <cuda.h>
#include <cupti.h>  // also brings generated_cuda_meta.h (launch parameter structs)

#include <cstdint>

#include "injector/achieved/achieved_policy.h"

namespace occ::inj {

// Driver launch callbacks the profiler brackets (kernels) or records as not measured (graphs).
inline constexpr CUpti_CallbackId kDriverLaunchCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

// Runtime launch APIs: only their ENTER/EXIT matter, to know the outermost correlation id,
// which is what the kernel's activity record carries.
inline constexpr CUpti_CallbackId kRuntimeLaunchCbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

bool IsKernelLaunchCbid(CUpti_CallbackId cbid);   // driver domain
bool IsGraphLaunchCbid(CUpti_CallbackId cbid);    // driver domain
bool IsRuntimeLaunchCbid(CUpti_CallbackId cbid);  // runtime domain

struct LaunchArgs {
  CUfunction function = nullptr;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_smem = 0;
  CUstream stream = nullptr;  // CU_STREAM_PER_THREAD for a _ptsz launch into the null stream
};

// Decodes the functionParams of a kernel-launch driver callback; defaults for other ids.
LaunchArgs ReadLaunchArgs(CUpti_CallbackId cbid, const void* params);

LaunchSignature SignatureOf(CUcontext context, const LaunchArgs& args);

// Per thread: the correlation id of the outermost runtime launch API in flight. A driver
// launch made inside one (cudaLaunchKernel -> cuLaunchKernel) belongs to the runtime call's
// id; a direct driver launch (cuBLAS, cuDNN, Triton) keeps its own.
class OuterCorrelation {
 public:
  void OnRuntimeLaunch(bool enter, uint32_t correlation_id) {
    if (enter) {
      if (depth_++ == 0) outer_id_ = correlation_id;
    } else if (depth_ > 0) {
      --depth_;
    }
  }
  uint32_t ForDriverLaunch(uint32_t own_id) const { return depth_ > 0 ? outer_id_ : own_id; }

 private:
  int depth_ = 0;
  uint32_t outer_id_ = 0;
};

}  // namespace occ::inj
