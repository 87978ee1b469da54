-- A small occtrace trace on an H100 SXM (device values as the CUDA runtime reports them; the
-- expected figures in analysis_test.cc come from occupancy-model.md §5.2 / §10 / §5.4).
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'node7'),
  ('command_line', 'python train.py'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'sample');
INSERT INTO StringIds VALUES
  (1, 'gemm_kernel(float const*, float*)'), (2, 'gemm_kernel'), (3, '_Z11gemm_kernelPKfPf'),
  (4, 'k96(int)'), (5, 'k96'), (6, '_Z3k96i'),
  (7, 'tiny_grid(int)'), (8, 'tiny_grid'), (9, '_Z9tiny_gridi'),
  (10, 'odd_block(int)'), (11, 'odd_block'), (12, '_Z9odd_blocki'),
  (13, 'tail_kernel(int)'), (14, 'tail_kernel'), (15, '_Z11tail_kerneli');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
-- id, deviceId, contextId, greenContextId, demangled, short, mangled, launchType, cacheConfig,
-- regs, grid xyz, block xyz, static, dynamic, local/thread, local total, smemExecuted,
-- limitConfig, carveout%, graphId, graphNodeId, cluster xyz, policy, maxPotential, maxActive, dev
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 67, 3225, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 36, 1000, 1, 1, 96, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 16, 66, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (4, 0, 1, NULL, 10, 11, 12, 0, 0, 16, 4096, 1, 1, 48, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (5, 0, 1, NULL, 13, 14, 15, 0, 0, 32, 3225, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
-- start, duration, configId, streamId, correlationId
INSERT INTO OCC_LAUNCH VALUES
  (1000, 400000, 1, 7, 1), (500000, 400000, 1, 7, 2), (1000000, 200000, 1, 7, 3),
  (1300000, 100000, 2, 7, 4), (1400000, 100000, 2, 7, 5),
  (1600000, 50000, 3, 7, 6), (0, 0, 3, 7, 7),
  (1700000, 20000, 4, 7, 8),
  (1800000, 100000, 5, 7, 9), (1900000, 100000, 5, 7, 10);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES
  (6, 1, 'measured', 12.4, 7.9, 1000, 48000, 'sample', 0),
  (7, 1, 'measured', 12.6, 8.1, 1000, 52000, 'sample', 1),
  (9, 1, 'measured', 81.0, 51.8, 1000, 99000, 'sample', 0),
  (10, 1, 'graph', NULL, NULL, NULL, NULL, 'sample', 1);
