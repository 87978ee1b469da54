-- Edge cases on an H100: a launch that cannot be resident (1024 threads x 255 registers), a
-- thread-block cluster, register spills (local memory), a kernel that uses no registers at all,
-- a 1-thread block, and a 64-character name without any C++ structure.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '77'), ('host', 'dgx'),
  ('command_line', './edge'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'all'),
  ('dropped_records', '12');
INSERT INTO StringIds VALUES
  (1, 'void huge_block_kernel<double>(double*, int)'), (2, 'huge_block_kernel'), (3, '_Z17huge_block_kernelIdEvPdi'),
  (4, 'void cluster_gemm<2>(float const*, float*)'), (5, 'cluster_gemm'), (6, '_Z12cluster_gemmILi2EEvPKfPf'),
  (7, 'void spilly(float*)'), (8, 'spilly'), (9, '_Z6spillyPf'),
  (10, 'void empty_kernel()'), (11, 'empty_kernel'), (12, '_Z12empty_kernelv'),
  (13, 'void single_thread(int*)'), (14, 'single_thread'), (15, '_Z13single_threadPi'),
  (16, 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas'),
  (17, 'sm90_xmma_gemm'), (18, 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 77, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 255, 64, 1, 1, 1024, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 128, 66, 2, 1, 256, 1, 1, 0, 65536, 0, 0, 233472, 1, NULL, 0, 0, 2, 1, 1, 0, 2, 33, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 255, 1024, 1, 1, 128, 1, 1, 0, 0, 96, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (4, 0, 1, NULL, 10, 11, 12, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (5, 0, 1, NULL, 13, 14, 15, 0, 0, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (6, 0, 1, NULL, 16, 17, 18, 0, 0, 168, 132, 1, 1, 384, 1, 1, 0, 213248, 0, 0, 233472, 1, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 5000, 1, 7, 1),
  (10000, 300000, 2, 7, 2), (320000, 310000, 2, 7, 3),
  (700000, 90000, 3, 7, 4),
  (800000, 2000, 4, 7, 5),
  (810000, 3000, 5, 7, 6),
  (900000, 450000, 6, 7, 7), (1400000, 440000, 6, 7, 8);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES
  (2, 1, 'measured', 12.3, 7.9, 1000, 300000, 'all', 0),
  (3, 1, 'measured', 12.4, 7.9, 1000, 310000, 'all', 1),
  (4, 1, 'measured', 22.0, 14.1, 1000, 90000, 'all', 0),
  (5, 1, 'no-range', NULL, NULL, NULL, NULL, 'all', 0),
  (6, 1, 'measured', 1.56, 1.0, 1000, 3000, 'all', 0),
  (7, 1, 'measured', 18.7, 12.0, 1000, 450000, 'all', 0),
  (8, 1, 'measured', 18.7, 12.0, 1000, 440000, 'all', 1);
