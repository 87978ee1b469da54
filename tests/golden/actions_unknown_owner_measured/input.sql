-- No loader recorded (an older trace): a kernel nobody can name the owner of, over the same
-- 4,194,304 threads at block 32 (90 µs) and block 128 (30 µs, 3x faster), 10 launches each, on an
-- H100 (16 registers). Block 32's achieved occupancy (20 % of 50 % theoretical over 31 waves,
-- blocks living ~2.9 µs) also reads as short-lived blocks; the measured 3x is what to say first.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'h100'),
  ('command_line', './saxpy_old'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'all');
INSERT INTO StringIds VALUES
  (1, 'saxpy(int, float, float const*, float*)'), (2, 'saxpy'), (3, '_Z5saxpyifPKfPf');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 16, 131072, 1, 1, 32, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 1, 2, 3, 0, 0, 16, 32768, 1, 1, 128, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 90000, 1, 7, 1), (92000, 30000, 2, 7, 2), (123000, 90000, 1, 7, 3), (214000, 30000, 2, 7, 4), (245000, 90000, 1, 7, 5), (336000, 30000, 2, 7, 6),
  (367000, 90000, 1, 7, 7), (458000, 30000, 2, 7, 8), (489000, 90000, 1, 7, 9), (580000, 30000, 2, 7, 10), (611000, 90000, 1, 7, 11), (702000, 30000, 2, 7, 12),
  (733000, 90000, 1, 7, 13), (824000, 30000, 2, 7, 14), (855000, 90000, 1, 7, 15), (946000, 30000, 2, 7, 16), (977000, 90000, 1, 7, 17), (1068000, 30000, 2, 7, 18),
  (1099000, 90000, 1, 7, 19), (1190000, 30000, 2, 7, 20);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES
  (1, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 0),
  (2, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 0),
  (3, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 1),
  (4, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 1),
  (5, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 2),
  (6, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 2),
  (7, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 3),
  (8, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 3),
  (9, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 4),
  (10, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 4),
  (11, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 5),
  (12, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 5),
  (13, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 6),
  (14, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 6),
  (15, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 7),
  (16, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 7),
  (17, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 8),
  (18, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 8),
  (19, 1, 'measured', 20.0, 12.8, 1000, 90000, 'all', 9),
  (20, 1, 'measured', 70.0, 44.8, 1000, 30000, 'all', 9);
