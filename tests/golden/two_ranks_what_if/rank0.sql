-- Rank 0 of a two-process data-parallel run (one trace per process, same kernels), analyzed
-- together and re-evaluated for an A100 (--gpu A100: what-if; times stay those of the H100).
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '5000'), ('host', 'node0'),
  ('command_line', 'torchrun --nproc-per-node 1 train.py --rank 0'), ('occtrace_version', '0.1.0'),
  ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, true, false>(Flash_fwd_params)'),
  (2, 'flash_fwd_kernel'), (3, '_Z16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tEELb0ELb1ELb0EEv16Flash_fwd_params'),
  (4, 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)'),
  (5, 'vectorized_elementwise_kernel'), (6, '_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 5000, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 255, 16, 32, 1, 128, 1, 1, 0, 98304, 0, 0, 233472, 1, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 18, 2048, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 700000, 1, 7, 1), (800000, 690000, 1, 7, 2),
  (1600000, 12000, 2, 7, 3), (1700000, 11000, 2, 7, 4);
