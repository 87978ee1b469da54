# CuPy: the user's RawKernels (scale_add 1-D, blur2d 2-D) get the measured best configuration in
# CuPy's call syntax; CuPy's own kernels (cupy_*, cupy.random's, CUB's) and cuRAND's get none.
set(REQUIRE
  [=["kernel": "scale_add",[ 
]*"origin": "cupy",[ 
]*"change": "Launch it as kernel\(\(65536,\), \(256,\), args\): measured in this trace, block 256]=]
  [=["kernel": "blur2d",[ 
]*"origin": "cupy",[ 
]*"change": "Launch it as kernel\(\([0-9]+, [0-9]+\), \([0-9]+, [0-9]+\), args\): measured in this trace, block \([0-9]+, [0-9]+\)]=]
  [=["short_name": "cupy_random_x_mod_1",]=]
  [=["owner_library": "CuPy"]=]
  [=["owner_library": "cuRAND"]=])
set(FORBID
  [=["kernel": "cupy_[a-z0-9_]*",[ 
]*"origin"]=]
  [=["origin": "vendor",[ 
]*"change"]=]
  [=["origin": "unknown"]=])
