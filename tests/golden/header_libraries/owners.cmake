# The header libraries' kernels are theirs, compiled into the user's binaries: owner CUB or
# CUTLASS with the binary named, what the user controls said in the library's own terms, and
# no launch-configuration, register-cap or -maxrregcount advice for any of them. The user's
# heavy_stencil is the user's, compiled with __launch_bounds__(1024).
set(REQUIRE
  [=["origin": "header_library"]=]
  [=["owner_library": "CUB"]=]
  [=["owner_library": "CUTLASS"]=]
  [=["loader": "thrust_user"]=]
  [=["loader": "cutlass_user"]=]
  [=[what you control is the algorithm call and its inputs]=]
  [=[tile shape \(ThreadblockShape/TileShape\), stages and warp shape]=]
  [=["short_name": "heavy_stencil",]=]
  [=["launch_bounds_max_threads": 1024]=]
  [=["origin": "cuda_cpp"]=]
  [=["actions": \[\]]=])
set(FORBID
  [=[maxrregcount]=]
  [=[threads per block]=]
  [=[Cap registers]=]
  [=["origin": "unknown"]=])
