-- One training step on an H100 SXM as occtrace records it (schema/trace_schema.sql is
-- prepended by the test). Device limits as the CUDA runtime reports them for an H100 80GB HBM3.
-- Kernel names are real demangled shapes (PyTorch, CUTLASS, a template expression with |, an
-- address template argument with &) plus one hostile name, to exercise shortening and escaping
-- in every format; its 300 registers per thread make it an unjudged row.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'gpu-node-17'),
  ('command_line', 'python train.py --batch 64 --tag "a|b"'), ('occtrace_version', '0.1.0'),
  ('cuda_driver_version', '13.0'), ('cuda_runtime_version', '12.8'), ('cupti_version', '13.0'),
  ('achieved_mode', 'sample');
INSERT INTO StringIds VALUES
  (1, 'void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)'),
  (2, 'indexSelectLargeIndex'),
  (3, '_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIflLj2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EES7_NS4_IKT0_S6_EEiiS6_S6_l'),
  (4, 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4::Params)'),
  (5, 'Kernel2'),
  (6, '_ZN7cutlass7Kernel2I52cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4EEvNT_6ParamsE'),
  (7, 'void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})'),
  (8, 'elementwise_kernel'),
  (9, '_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_'),
  (10, 'void conv3d_fwd_kernel<float, 8, 8, 4>(float const*, float const*, float*, int, int, int)'),
  (11, 'conv3d_fwd_kernel'),
  (12, '_Z17conv3d_fwd_kernelIfLi8ELi8ELi4EEvPKfS1_Pfiii'),
  (13, 'void bitmask_kernel<(Flags)1|(Flags)4>(unsigned int*, int)'),
  (14, 'bitmask_kernel'),
  (15, '_Z14bitmask_kernelIXorLi1ELi4EEEvPji'),
  (16, 'void apply_op<&(anonymous namespace)::scale_op, true>(float const*, float*, int)'),
  (17, 'apply_op'),
  (18, '_Z8apply_opIXadL_ZN12_GLOBAL__N_18scale_opEEELb1EEvPKfPfi'),
  (19, 'void evil_kernel<"</script><img src=x onerror=alert(1)>", ''q'' & co>(char const*)'),
  (20, 'evil_kernel'),
  (21, '_Z11evil_kernelPKc');
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
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 230, 8, 16, 1, 128, 1, 1, 0, 81920, 0, 0, 233472, 1, NULL, 3, 11, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 32, 65535, 1, 1, 100, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (4, 0, 1, NULL, 10, 11, 12, 0, 0, 40, 16, 16, 8, 8, 8, 4, 18432, 30720, 0, 0, 233472, 1, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (5, 0, 1, NULL, 13, 14, 15, 0, 0, 16, 66, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (6, 0, 1, NULL, 16, 17, 18, 0, 0, 24, 4096, 1, 1, 48, 1, 1, 0, 0, 16, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (7, 0, 1, NULL, 19, 20, 21, 0, 0, 300, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
-- start, duration, configId, streamId, correlationId
INSERT INTO OCC_LAUNCH VALUES
  (1000000, 612000, 1, 7, 1), (2000000, 598000, 1, 7, 2), (3000000, 640000, 1, 7, 3),
  (4000000, 605000, 1, 7, 4),
  (5000000, 636000, 2, 7, 5), (6000000, 641000, 2, 7, 6), (7000000, 629000, 2, 7, 7),
  (8000000, 18500, 3, 7, 8), (8100000, 18200, 3, 7, 9), (8200000, 19100, 3, 7, 10),
  (8300000, 18400, 3, 7, 11), (8400000, 24100, 3, 7, 12),
  (9000000, 350000, 4, 8, 13), (9500000, 352000, 4, 8, 14),
  (10000000, 51000, 5, 7, 15), (10100000, 52000, 5, 7, 16),
  (10200000, 20000, 6, 7, 17), (10300000, 21000, 6, 7, 18),
  (10400000, 9000, 7, 7, 19);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES
  (1, 1, 'measured', 35.2, 22.5, 1000, 612000, 'sample', 0),
  (2, 1, 'measured', 34.8, 22.3, 1000, 598000, 'sample', 1),
  (5, 1, 'graph', NULL, NULL, NULL, NULL, 'sample', 0),
  (8, 1, 'measured', 71.4, 45.7, 1000, 18500, 'sample', 0),
  (13, 1, 'measured', 44.1, 28.2, 1000, 350000, 'sample', 0),
  (15, 1, 'measured', 12.4, 7.9, 1000, 51000, 'sample', 0),
  (16, 1, 'measured', 12.6, 8.1, 1000, 52000, 'sample', 1);
