# 1024 threads x 64 registers: 1 block/SM, 32 of 64 warps. 128 threads gives 8 blocks x 4 warps,
# the same 32: no block-size suggestion in any format. A 32-register cap fits 2 blocks (64 warps):
# up to 10 x 200 µs x (1 - 50/100) = 1.00 ms.
foreach(format text markdown html json csv)
  set(FORBID_${format} [=[threads per block \(grid]=] [=[≥ 2 blocks/SM]=])
endforeach()
set(REQUIRE_json [=["kind": "register_cap"]=] [=["gain_ns": "1000000"]=])
