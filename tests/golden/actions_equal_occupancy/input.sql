-- A CUDA C++ kernel compiled with __launch_bounds__(1024) (OCC_FUNCTION.maxThreadsPerBlock) on
-- an H100, loaded by the program: 1024 threads x 64 registers = 65,536 registers, 1 block/SM,
-- 32 of 64 warps (50 %). 128 threads per block also gives 32 warps (8 blocks x 4 warps, 50 %):
-- no block size to suggest; a 32-register cap reaches 2 blocks/SM (100 %). Times made up.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'h100'),
  ('command_line', './heavy_prog'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'heavy(float const*, float*, int)'), (2, 'heavy'), (3, '_Z5heavyPKfPfi');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 64, 1056, 1, 1, 1024, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 200000, 1, 7, 1), (202000, 200000, 1, 7, 2), (403000, 200000, 1, 7, 3), (604000, 200000, 1, 7, 4), (805000, 200000, 1, 7, 5), (1006000, 200000, 1, 7, 6),
  (1207000, 200000, 1, 7, 7), (1408000, 200000, 1, 7, 8), (1609000, 200000, 1, 7, 9), (1810000, 200000, 1, 7, 10);
INSERT INTO OCC_FUNCTION VALUES (1, 3, 0, 0, NULL, 1, 64, 1024);
INSERT INTO OCC_MODULE VALUES (1, NULL, '/home/alice/heavy/heavy_prog');
