-- Baseline of diff_after_fix: the layer-norm kernel at 128 registers/thread (limited by
-- registers), a softmax kernel with 1024-thread blocks, and a copy kernel that the fix removed.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '100'), ('host', 'node1'),
  ('command_line', './bench --layers 24'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'void layer_norm_fwd<__nv_bfloat16, 1024>(__nv_bfloat16 const*, __nv_bfloat16*, float, int)'),
  (2, 'layer_norm_fwd'), (3, '_Z14layer_norm_fwdI13__nv_bfloat16Li1024EEvPKT_PS1_fi'),
  (4, 'void softmax_fwd<float>(float const*, float*, int)'), (5, 'softmax_fwd'), (6, '_Z11softmax_fwdIfEvPKfPfi'),
  (7, 'copy_kernel(float const*, float*, long)'), (8, 'copy_kernel'), (9, '_Z11copy_kernelPKfPfl');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 128, 2048, 1, 1, 256, 1, 1, 4096, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 40, 528, 1, 1, 1024, 1, 1, 0, 8192, 0, 0, 65536, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 16, 1024, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 800000, 1, 7, 1), (900000, 800000, 1, 7, 2),
  (2000000, 300000, 2, 7, 3), (2400000, 300000, 2, 7, 4),
  (3000000, 50000, 3, 7, 5);
