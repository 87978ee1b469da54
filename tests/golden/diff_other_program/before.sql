-- A trace of another program (a Python training script) given as the --diff base of ./bench's
-- trace (after.sql) by mistake: the commands name different programs and only softmax_fwd, in
-- the same configuration, ran in both (150 µs of 2.25 ms here, 605 µs of 1.695 ms there).
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '7'), ('host', 'node1'),
  ('command_line', 'python3 -u train_resnet.py --epochs 1'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'void gemm_nn_kernel<128, 64>(float const*, float const*, float*, int)'),
  (2, 'gemm_nn_kernel'), (3, '_Z14gemm_nn_kernelILi128ELi64EEvPKfS1_Pfi'),
  (4, 'void softmax_fwd<float>(float const*, float*, int)'), (5, 'softmax_fwd'), (6, '_Z11softmax_fwdIfEvPKfPfi'),
  (7, 'void relu_kernel<float>(float*, int)'), (8, 'relu_kernel'), (9, '_Z11relu_kernelIfEvPfi');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 96, 512, 1, 1, 256, 1, 1, 0, 32768, 0, 0, 102400, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 40, 528, 1, 1, 1024, 1, 1, 0, 8192, 0, 0, 65536, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 16, 4096, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 900000, 1, 7, 1), (1000000, 900000, 1, 7, 2),
  (2000000, 150000, 2, 7, 3),
  (2200000, 100000, 3, 7, 4), (2400000, 100000, 3, 7, 5), (2600000, 100000, 3, 7, 6);
