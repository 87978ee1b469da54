# tests/gpu/advice/concurrent_sweep.cu run as `concurrent_sweep 100 1500` (H200, 2026-11-29): each
# block size 100 times alone, then all four at once from four streams. Its own serialized
# cudaEvent timings (printed by the run): block 32 160.82 µs, 64 82.15 µs, 256 54.45 µs, 512
# 55.31 µs. Over all launches block 256 averages 93 µs (contention), so only the launches that
# ran alone tell 256 from 512: the action compares on those, and never puts 512 over 256.
set(REQUIRE_text
  [=[Launch it as <<<(32768, 256|16384, 512)>>>: measured in this trace on launches that ran alone]=])
set(FORBID_text
  [=[block 512 takes [0-9.]+ µs for the same [0-9.]+ M threads where block 256]=]
  [=[block 256 takes [0-9.]+ µs for the same [0-9.]+ M threads where block 512]=])
