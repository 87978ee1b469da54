-- PM sampling (OCCTRACE_ACHIEVED=pm), hand-made samples on an H100 (64 warps per SM). Expected
-- figures, worked out by hand (achieved = Σ warpsActive ÷ (Σ smCyclesActive × 64) over the
-- samples in which only that configuration ran; the least-squares solve over every sample gives
-- the same where a configuration only ran alone, analyzer/read/pm_rates.h):
--   gemm_kernel <<<264, 256>>>, stream 7, one launch [100 us, 600 us): 25 samples of 20 us inside
--     it. The 5 in [300 us, 400 us) also overlap scale_kernel <<<512>>> on stream 8: mixed
--     (written at 90 % of gemm's cycles alone, so they do not add up). Of the 20 clean ones, 10
--     have 2e6 cycles and 40.96e6 warps (32 %), 10 have 1e6 cycles and 25.6e6 warps (40 %):
--       Σ warps = 10 × 40.96e6 + 10 × 25.6e6 = 665.6e6; Σ capacity = (10 × 2e6 + 10 × 1e6) × 64
--       = 1920e6 → 34.67 % over 20 clean samples (the mean of the samples' percentages, 36 %,
--       would weigh a short sample like a long one); the solve keeps 34.67 % with the 5 mixed
--       ones in (their excess goes to scale_kernel), ± 0.9 from the clean samples' spread.
--   scale_kernel <<<512, 128>>>: one launch [300 us, 400 us), every sample shared: 0 clean, 5
--     mixed, which put it far above 100 % (they add warps and no cycles): no figure, "implausible".
--   scale_kernel <<<1024, 128>>>: 25 launches of 8 us, one every 40 us from 1006 us, each alone
--     in the one sample of its 40 us (idle samples are dropped by the collector): 1e5 cycles,
--     5.12e6 warps → 80.0 % over 25 clean samples; DRAM 85 % in each → near the DRAM ceiling.
--   2 samples at 2000-2040 us overlap no traced launch (another process): unattributed.
-- 52 samples in all: 45 clean, 5 mixed, 2 unattributed; one buffer overflow reported.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '42'), ('occtrace_version', '0.1.0'),
  ('achieved_mode', 'pm'), ('pm_status', 'on'), ('pm_interval_ns', '20000'), ('pm_samples', '52'),
  ('pm_overflows', '1'), ('pm_sampling_ms', '1500'), ('pm_run_ms', '30000');
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'gemm_kernel'), (3, '_Z11gemm_kernelv'),
  (4, 'scale_kernel'), (5, 'scale_kernel'), (6, '_Z12scale_kernelv');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 42, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 64, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 32, 512, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (3, 0, 1, NULL, 4, 5, 6, 0, 0, 32, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (100000, 500000, 1, 7, 1),
  (300000, 100000, 2, 8, 2),
  (1006000, 8000, 3, 7, 3),
  (1046000, 8000, 3, 7, 4),
  (1086000, 8000, 3, 7, 5),
  (1126000, 8000, 3, 7, 6),
  (1166000, 8000, 3, 7, 7),
  (1206000, 8000, 3, 7, 8),
  (1246000, 8000, 3, 7, 9),
  (1286000, 8000, 3, 7, 10),
  (1326000, 8000, 3, 7, 11),
  (1366000, 8000, 3, 7, 12),
  (1406000, 8000, 3, 7, 13),
  (1446000, 8000, 3, 7, 14),
  (1486000, 8000, 3, 7, 15),
  (1526000, 8000, 3, 7, 16),
  (1566000, 8000, 3, 7, 17),
  (1606000, 8000, 3, 7, 18),
  (1646000, 8000, 3, 7, 19),
  (1686000, 8000, 3, 7, 20),
  (1726000, 8000, 3, 7, 21),
  (1766000, 8000, 3, 7, 22),
  (1806000, 8000, 3, 7, 23),
  (1846000, 8000, 3, 7, 24),
  (1886000, 8000, 3, 7, 25),
  (1926000, 8000, 3, 7, 26),
  (1966000, 8000, 3, 7, 27);
INSERT INTO OCC_PM_SAMPLE VALUES
  (0, 100000, 120000, 2000000.0, 40960000.0, NULL),
  (0, 120000, 140000, 1000000.0, 25600000.0, NULL),
  (0, 140000, 160000, 2000000.0, 40960000.0, NULL),
  (0, 160000, 180000, 1000000.0, 25600000.0, NULL),
  (0, 180000, 200000, 2000000.0, 40960000.0, NULL),
  (0, 200000, 220000, 1000000.0, 25600000.0, NULL),
  (0, 220000, 240000, 2000000.0, 40960000.0, NULL),
  (0, 240000, 260000, 1000000.0, 25600000.0, NULL),
  (0, 260000, 280000, 2000000.0, 40960000.0, NULL),
  (0, 280000, 300000, 1000000.0, 25600000.0, NULL),
  (0, 300000, 320000, 2000000.0, 115200000.0, NULL),
  (0, 320000, 340000, 2000000.0, 115200000.0, NULL),
  (0, 340000, 360000, 2000000.0, 115200000.0, NULL),
  (0, 360000, 380000, 2000000.0, 115200000.0, NULL),
  (0, 380000, 400000, 2000000.0, 115200000.0, NULL),
  (0, 400000, 420000, 2000000.0, 40960000.0, NULL),
  (0, 420000, 440000, 1000000.0, 25600000.0, NULL),
  (0, 440000, 460000, 2000000.0, 40960000.0, NULL),
  (0, 460000, 480000, 1000000.0, 25600000.0, NULL),
  (0, 480000, 500000, 2000000.0, 40960000.0, NULL),
  (0, 500000, 520000, 1000000.0, 25600000.0, NULL),
  (0, 520000, 540000, 2000000.0, 40960000.0, NULL),
  (0, 540000, 560000, 1000000.0, 25600000.0, NULL),
  (0, 560000, 580000, 2000000.0, 40960000.0, NULL),
  (0, 580000, 600000, 1000000.0, 25600000.0, NULL),
  (0, 1000000, 1020000, 100000.0, 5120000.0, 85.0),
  (0, 1040000, 1060000, 100000.0, 5120000.0, 85.0),
  (0, 1080000, 1100000, 100000.0, 5120000.0, 85.0),
  (0, 1120000, 1140000, 100000.0, 5120000.0, 85.0),
  (0, 1160000, 1180000, 100000.0, 5120000.0, 85.0),
  (0, 1200000, 1220000, 100000.0, 5120000.0, 85.0),
  (0, 1240000, 1260000, 100000.0, 5120000.0, 85.0),
  (0, 1280000, 1300000, 100000.0, 5120000.0, 85.0),
  (0, 1320000, 1340000, 100000.0, 5120000.0, 85.0),
  (0, 1360000, 1380000, 100000.0, 5120000.0, 85.0),
  (0, 1400000, 1420000, 100000.0, 5120000.0, 85.0),
  (0, 1440000, 1460000, 100000.0, 5120000.0, 85.0),
  (0, 1480000, 1500000, 100000.0, 5120000.0, 85.0),
  (0, 1520000, 1540000, 100000.0, 5120000.0, 85.0),
  (0, 1560000, 1580000, 100000.0, 5120000.0, 85.0),
  (0, 1600000, 1620000, 100000.0, 5120000.0, 85.0),
  (0, 1640000, 1660000, 100000.0, 5120000.0, 85.0),
  (0, 1680000, 1700000, 100000.0, 5120000.0, 85.0),
  (0, 1720000, 1740000, 100000.0, 5120000.0, 85.0),
  (0, 1760000, 1780000, 100000.0, 5120000.0, 85.0),
  (0, 1800000, 1820000, 100000.0, 5120000.0, 85.0),
  (0, 1840000, 1860000, 100000.0, 5120000.0, 85.0),
  (0, 1880000, 1900000, 100000.0, 5120000.0, 85.0),
  (0, 1920000, 1940000, 100000.0, 5120000.0, 85.0),
  (0, 1960000, 1980000, 100000.0, 5120000.0, 85.0),
  (0, 2000000, 2020000, 500000.0, 10000000.0, NULL),
  (0, 2020000, 2040000, 500000.0, 10000000.0, NULL);
