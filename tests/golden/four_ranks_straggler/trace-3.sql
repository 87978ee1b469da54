-- Rank 3 of a four-rank data-parallel step (torchrun, one node, one H100 per rank), traced as
-- trace-3.db by `occtrace -o 'trace-%q{RANK}.db' -- torchrun --nproc-per-node 4 train.py`.
-- Synthetic: written by hand so every figure of the report can be checked by hand.
-- Every rank: 10 GEMM launches, 20 elementwise launches of 10 us, 10 NCCL all-reduce launches.
-- Rank 2 is slower on the GEMM (130 us per launch against 99-101 us); the other ranks wait for it
-- in the all-reduce (49-51 us per launch against rank 2's 20 us), so every rank's GPU time is
-- 1.70 ms. Rank 0 also runs log_metrics_kernel twice (5 us each), which no other rank runs.

INSERT INTO OCC_META (name, value) VALUES ('schema_version', '1'), ('pid', '7003'),
  ('host', 'node0'), ('command_line', 'python train.py'), ('occtrace_version', '0.1.0'),
  ('achieved_mode', 'sample'), ('rank', '3'), ('local_rank', '3'), ('world_size', '4'),
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
  VALUES (0, 0, 7003, 'GPU-3', 132);
INSERT INTO OCC_DEVICE (gpuId, reservedSharedMemPerBlock, maxThreadsPerMultiprocessor,
  isMigEnabled, gpuInstanceId, computeInstanceId, driverVersion)
  VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG (id, deviceId, contextId, greenContextId, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, sharedMemoryRequestedPercentage, graphId, graphNodeId, clusterX, clusterY, clusterZ, clusterSchedulingPolicy, maxPotentialClusterSize, maxActiveClusters, isDeviceLaunched) VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 128, 64, 32, 1, 256, 1, 1, 0, 65536, 0, 0, 233472, 1, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 20, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 96, 2, 1, 1, 512, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH (start, duration, configId, streamId, correlationId) VALUES
  (1000000, 99000, 1, 7, 1), (1100000, 10000, 2, 7, 2), (1111000, 10000, 2, 7, 3), (1122000, 51000, 3, 7, 4),
  (1174000, 99000, 1, 7, 5), (1274000, 10000, 2, 7, 6), (1285000, 10000, 2, 7, 7), (1296000, 51000, 3, 7, 8),
  (1348000, 99000, 1, 7, 9), (1448000, 10000, 2, 7, 10), (1459000, 10000, 2, 7, 11), (1470000, 51000, 3, 7, 12),
  (1522000, 99000, 1, 7, 13), (1622000, 10000, 2, 7, 14), (1633000, 10000, 2, 7, 15), (1644000, 51000, 3, 7, 16),
  (1696000, 99000, 1, 7, 17), (1796000, 10000, 2, 7, 18), (1807000, 10000, 2, 7, 19), (1818000, 51000, 3, 7, 20),
  (1870000, 99000, 1, 7, 21), (1970000, 10000, 2, 7, 22), (1981000, 10000, 2, 7, 23), (1992000, 51000, 3, 7, 24),
  (2044000, 99000, 1, 7, 25), (2144000, 10000, 2, 7, 26), (2155000, 10000, 2, 7, 27), (2166000, 51000, 3, 7, 28),
  (2218000, 99000, 1, 7, 29), (2318000, 10000, 2, 7, 30), (2329000, 10000, 2, 7, 31), (2340000, 51000, 3, 7, 32),
  (2392000, 99000, 1, 7, 33), (2492000, 10000, 2, 7, 34), (2503000, 10000, 2, 7, 35), (2514000, 51000, 3, 7, 36),
  (2566000, 99000, 1, 7, 37), (2666000, 10000, 2, 7, 38), (2677000, 10000, 2, 7, 39), (2688000, 51000, 3, 7, 40);
INSERT INTO OCC_ACHIEVED (correlationId, contextId, status, achievedOccupancyPct,
  warpsActivePerCycle, smCyclesActive, gpuTimeNs, policy, sampleIndex)
  VALUES (1, 1, 'measured', 45.1, 28.864, 150000, 99000, 'sample', 0);
