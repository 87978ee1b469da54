# tests/gpu/workloads/compile_reductions.py, torch.compile with a cold cache (H200, 2026-11-29):
# Inductor benchmarks its reductions' candidate configs at the first call, flushing L2 with an
# ATen FillFunctor<int> (3,296 launches, 47.5 ms by SQLite's sum over the trace, 69 % of the
# kernel time) before its trials. That is tuning, not the program: not ranked, no action. The
# reductions' grids are small; no action without a gain.
set(REQUIRE_text
  [=[Tuning +tuning overhead: [0-9.]+ ms \([0-9.]+% of GPU time\), by Inductor's autotuner]=])
set(FORBID_text
  [=[  [0-9]+ vectorized_elementwise_kernel<4, F]=]
  [=[Gain: not predicted]=])
