-- Rank 2 of a four-rank data-parallel step (torchrun, one node, one H100 per rank), traced as
-- trace-2.db by `occtrace -o 'trace-%q{RANK}.db' -- torchrun --nproc-per-node 4 train.py`.
-- Synthetic: written by hand so every figure of the report can be checked by hand.
-- Every rank: 10 GEMM launches, 20 elementwise launches of 10 us, 10 NCCL all-reduce launches.
-- Rank 2 is slower on the GEMM (130 us per launch against 99-101 us); the other ranks wait for it
-- in the all-reduce (49-51 us per launch against rank 2's 20 us), so every rank's GPU time is
-- 1.70 ms. Rank 0 also runs log_metrics_kernel twice (5 us each), which no other rank runs.

INSERT INTO OCC_META (name, value) VALUES ('schema_version', '1'), ('pid', '7002'),
  ('host', 'node0'), ('command_line', 'python train.py'), ('occtrace_version', '0.1.0'),
  ('achieved_mode', 'sample'), ('rank', '2'), ('local_rank', '2'), ('world_size', '4'),
  ('local_world_size', '4'), ('rank_source', 'torchrun');
INSERT INTO StringIds (id, value) VALUES
  (1, 'void gemm_tn_kernel<128, 128, 32>(float const*, float const*, float*, int, int, int)'),
  (2, 'gemm_tn_kernel'),
  (3, '_Z14gemm_tn_kernelILi128ELi128ELi32EEvPKfS1_Pfiii'),
  (4, 'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)'),
  (5, 'vectorized_elementwise_kernel'),
  (6, '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_'),
  (7, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (8, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (9, '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors)
  VALUES (0, 0, 7002, 'GPU-2', 132);
INSERT INTO OCC_DEVICE (gpuId, reservedSharedMemPerBlock, maxThreadsPerMultiprocessor,
  isMigEnabled, gpuInstanceId, computeInstanceId, driverVersion)
  VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG (id, deviceId, contextId, greenContextId, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, sharedMemoryRequestedPercentage, graphId, graphNodeId, clusterX, clusterY, clusterZ, clusterSchedulingPolicy, maxPotentialClusterSize, maxActiveClusters, isDeviceLaunched) VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 128, 64, 32, 1, 256, 1, 1, 0, 65536, 0, 0, 233472, 1, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 20, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 96, 2, 1, 1, 512, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH (start, duration, configId, streamId, correlationId) VALUES
  (1000000, 130000, 1, 7, 1), (1131000, 10000, 2, 7, 2), (1142000, 10000, 2, 7, 3), (1153000, 20000, 3, 7, 4),
  (1174000, 130000, 1, 7, 5), (1305000, 10000, 2, 7, 6), (1316000, 10000, 2, 7, 7), (1327000, 20000, 3, 7, 8),
  (1348000, 130000, 1, 7, 9), (1479000, 10000, 2, 7, 10), (1490000, 10000, 2, 7, 11), (1501000, 20000, 3, 7, 12),
  (1522000, 130000, 1, 7, 13), (1653000, 10000, 2, 7, 14), (1664000, 10000, 2, 7, 15), (1675000, 20000, 3, 7, 16),
  (1696000, 130000, 1, 7, 17), (1827000, 10000, 2, 7, 18), (1838000, 10000, 2, 7, 19), (1849000, 20000, 3, 7, 20),
  (1870000, 130000, 1, 7, 21), (2001000, 10000, 2, 7, 22), (2012000, 10000, 2, 7, 23), (2023000, 20000, 3, 7, 24),
  (2044000, 130000, 1, 7, 25), (2175000, 10000, 2, 7, 26), (2186000, 10000, 2, 7, 27), (2197000, 20000, 3, 7, 28),
  (2218000, 130000, 1, 7, 29), (2349000, 10000, 2, 7, 30), (2360000, 10000, 2, 7, 31), (2371000, 20000, 3, 7, 32),
  (2392000, 130000, 1, 7, 33), (2523000, 10000, 2, 7, 34), (2534000, 10000, 2, 7, 35), (2545000, 20000, 3, 7, 36),
  (2566000, 130000, 1, 7, 37), (2697000, 10000, 2, 7, 38), (2708000, 10000, 2, 7, 39), (2719000, 20000, 3, 7, 40);
INSERT INTO OCC_ACHIEVED (correlationId, contextId, status, achievedOccupancyPct,
  warpsActivePerCycle, smCyclesActive, gpuTimeNs, policy, sampleIndex)
  VALUES (1, 1, 'measured', 44.8, 28.672, 150000, 130000, 'sample', 0);
