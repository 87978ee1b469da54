#include "injector/achieved/achieved_launch.h"

namespace occ::inj {

bool IsKernelLaunchCbid(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

bool IsGraphLaunchCbid(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

bool IsRuntimeLaunchCbid(CUpti_CallbackId cbid) {
  for (CUpti_CallbackId id : kRuntimeLaunchCbids) {
    if (id == cbid) return true;
  }
  return false;
}

LaunchArgs ReadLaunchArgs(CUpti_CallbackId cbid, const void* params) {
  LaunchArgs args;
  auto from_classic = [&args](const auto* p) {
    args.function = p->f;
    args.grid[0] = p->gridDimX;
    args.grid[1] = p->gridDimY;
    args.grid[2] = p->gridDimZ;
    args.block[0] = p->blockDimX;
    args.block[1] = p->blockDimY;
    args.block[2] = p->blockDimZ;
    args.dynamic_smem = p->sharedMemBytes;
    args.stream = p->hStream;
  };
  auto from_ex = [&args](const auto* p) {
    args.function = p->f;
    if (const CUlaunchConfig* config = p->config) {
      args.grid[0] = config->gridDimX;
      args.grid[1] = config->gridDimY;
      args.grid[2] = config->gridDimZ;
      args.block[0] = config->blockDimX;
      args.block[1] = config->blockDimY;
      args.block[2] = config->blockDimZ;
      args.dynamic_smem = config->sharedMemBytes;
      args.stream = config->hStream;
    }
  };
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      from_classic(static_cast<const cuLaunchKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      from_classic(static_cast<const cuLaunchKernel_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      from_classic(static_cast<const cuLaunchCooperativeKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      from_classic(static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      from_ex(static_cast<const cuLaunchKernelEx_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      from_ex(static_cast<const cuLaunchKernelEx_ptsz_params*>(params));
      break;
    default:
      break;
  }
  // In a _ptsz launch the null stream is the calling thread's default stream; the legacy
  // stream APIs (cuStreamIsCapturing) name that one CU_STREAM_PER_THREAD.
  const bool per_thread = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
                          cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
                          cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
  if (per_thread && args.stream == nullptr) args.stream = CU_STREAM_PER_THREAD;
  return args;
}

LaunchSignature SignatureOf(CUcontext context, const LaunchArgs& args) {
  LaunchSignature signature;
  signature.context = reinterpret_cast<uintptr_t>(context);
  signature.function = reinterpret_cast<uintptr_t>(args.function);
  signature.grid_x = args.grid[0];
  signature.grid_y = args.grid[1];
  signature.grid_z = args.grid[2];
  signature.block_x = args.block[0];
  signature.block_y = args.block[1];
  signature.block_z = args.block[2];
  signature.dynamic_smem = args.dynamic_smem;
  return signature;
}

}  // namespace occ::inj
