-- A light trace (OCC_META trace_mode = 'light'): 18 launches counted in OCC_LAUNCH_CALL, 7 timed in
-- OCC_LAUNCH. gemm_kernel: 10 launches, 4 timed (mean 100 us -> estimate 1.00 ms +- 62 us);
-- scale_kernel <<<512>>>: 5 launches, never timed; scale_kernel <<<1024>>>: 3 of 3 timed, 150 us.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '42'), ('trace_mode', 'light'),
  ('achieved_mode', 'off'), ('occtrace_version', '0.1.0');
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
INSERT INTO OCC_LAUNCH_CALL VALUES
  (1000, 1, 7, 1), (2000, 1, 7, 2), (3000, 1, 7, 3), (4000, 1, 7, 4), (5000, 1, 7, 5),
  (6000, 1, 7, 6), (7000, 1, 7, 7), (8000, 1, 7, 8), (9000, 1, 7, 9), (10000, 1, 7, 10),
  (11000, 2, 7, 11), (12000, 2, 7, 12), (13000, 2, 7, 13), (14000, 2, 7, 14), (15000, 2, 7, 15),
  (16000, 3, 7, 16), (17000, 3, 7, 17), (18000, 3, 7, 18);
INSERT INTO OCC_LAUNCH VALUES
  (1500, 100000, 1, 7, 1), (2500, 110000, 1, 7, 2), (3500, 90000, 1, 7, 3), (4500, 100000, 1, 7, 4),
  (16500, 50000, 3, 7, 16), (17500, 50000, 3, 7, 17), (18500, 50000, 3, 7, 18);
