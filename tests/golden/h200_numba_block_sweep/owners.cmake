# Numba: saxpy (1-D) and transpose (2-D, a second compilation: [abi:v2]) named as in the source,
# owned through cuda-python's bindings, each swept configuration told the measured best.
set(REQUIRE
  [=["name": "__main__.saxpy\(float32, array\(float32, 1d, C\), array\(float32, 1d, C\)\)"]=]
  [=["name": "__main__.transpose\(array\(float32, 2d, C\), array\(float32, 2d, C\)\)"]=]
  [=["kernel": "saxpy",[ 
]*"origin": "numba",[ 
]*"change": "Launch it as kernel\[65536, 256\]: measured in this trace]=]
  [=["kernel": "transpose",[ 
]*"origin": "numba",[ 
]*"change": "Launch it as kernel\[\([0-9]+, [0-9]+\), \([0-9]+, [0-9]+\)\]: measured in this trace, block \(]=])
set(FORBID
  [=["origin": "unknown"]=]
  [=[\[abi:]=])
