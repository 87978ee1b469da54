# tests/gpu/advice/concurrent_sweep.cu run as `concurrent_sweep 0 1500` (H200, 2026-11-29): one
# stencil at blocks 32, 64, 256 and 512 on four streams at once, nothing run alone first. The
# same binary's serialized cudaEvent timings (its `concurrent_sweep 100 1500` run, same GPU):
# block 32 160.82 µs, 64 82.15 µs, 256 54.45 µs, 512 55.31 µs per launch. So 256 and 512 are
# equal (1.6 %, under the 10 % a faster configuration must win by), and 32 and 64 are slower:
# the action names 256 or 512, never 512 over 256 (the contention-made "gain"), and the report
# says the launches overlapped and gives the busy span beside the summed kernel time.
set(REQUIRE_text
  [=[Launch it as <<<(32768, 256|16384, 512)>>>: measured in this trace]=]
  [=[busy [0-9.]+ ms \(the union of kernel intervals]=]
  [=[Overlap +[0-9.]+% of its time overlapped other kernels \(streams]=])
set(FORBID_text
  [=[block 512 takes [0-9.]+ µs for the same [0-9.]+ M threads where block 256]=]
  [=[block 256 takes [0-9.]+ µs for the same [0-9.]+ M threads where block 512]=])
