# Triton's launch: 32 x num_warps threads per program, grid = cdiv(n, XBLOCK) programs. The
# pointwise kernel at num_warps=1 (32 programs/SM x 1 warp = 32 of 64 warps) reaches 64 warps at
# num_warps=2, 32 x 2 = 64 threads per program, over the same 16,384 programs: up to
# 20 x 30 µs x (1 - 50/100) = 300 µs. The reduction's 128 programs fill 128 / (8 x 132) = 0.12
# of a wave: no occupancy advice, no action; no CUDA C++ block wording for either.
set(REQUIRE_json
  [=["change": "triton\.Config\(\{\.\.\.\}, num_warps=2, num_stages=1\)[^"]*Use num_warps=2 \(64 threads per program; the grid stays 16384 programs]=]
  [=["gain_ns": "300000"]=])
set(FORBID_json
  [=["kernel": "triton_per_fused__softmax_0"]=]
  [=[threads per block]=]
  [=[__launch_bounds__]=])
set(REQUIRE_text
  [=[Suggestions  none: the whole grid \(128 blocks\) is resident at once \(0\.12 waves\)]=]
  [=[Gain: up to 300\.0 µs]=])
# add_kernel measured 2x faster at 2,048 programs of 256 threads than at 4,096 of 128 (the same
# 524,288 threads): num_warps 4 -> 8 cannot halve the grid; a BLOCK_SIZE twice as large does.
# Gain (20 - 12) µs x 10 = 80 µs.
list(APPEND REQUIRE_json
  [=["change": "Launch it as num_warps=8 and the BLOCK_SIZE that launches 2048 programs \(grid = cdiv\(n, BLOCK_SIZE\); 4096 now\): measured in this trace]=]
  [=["gain_ns": "80000"]=])
