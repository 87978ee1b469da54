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
