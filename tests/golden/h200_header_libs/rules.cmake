# tests/gpu/advice/header_libs.cu (H200, 2026-11-29): thrust::sort/reduce and cub::DeviceScan
# (CCCL 3.0.1 of CUDA 13.0) and a CUTLASS SIMT SGEMM compiled into the user's binary, beside the
# user's `heavy` (declared __launch_bounds__(1024) in the source) and `scale`. The library
# kernels belong to their libraries and get no launch configuration or register cap; `heavy`'s
# register cap changes its existing bound; -maxrregcount only with its reach.
set(REQUIRE_text
  [=[Owner +CUB \(compiled into header_libs\)]=]
  [=[Owner +CUTLASS \(compiled into header_libs\)]=]
  [=[compiled with __launch_bounds__\(1024\)]=]
  [=[change __launch_bounds__\(1024\) to[^_]+__launch_bounds__\(1024, 2\)]=])
set(FORBID_text
  [=[#[0-9]+ (Device|_ZN7cutlass|static_kernel)[^#]*(Cap registers|Use [0-9]+ threads per block|Launch it as)]=]
  [=[ or -maxrregcount=]=])
