-- One CUDA C++ function of the program over the same 4,194,304 threads at blocks 32, 64 and 512
-- on an H100 (16 registers): block 32 is 50 % theoretical (32 blocks/SM x 1 warp), 64 and 512
-- are 100 %. Block 64 at 100 % runs 2.5x slower than 512 (250 µs vs 100 µs, 10 launches each),
-- so only the measurement tells 512 from the model's block size. Times made up.
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'h100'),
  ('command_line', './scale_prog'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'scale(float*, int, float)'), (2, 'scale'), (3, '_Z5scalePfif');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 16, 131072, 1, 1, 32, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 1, 2, 3, 0, 0, 16, 65536, 1, 1, 64, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 1, 2, 3, 0, 0, 16, 8192, 1, 1, 512, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 300000, 1, 7, 1), (302000, 250000, 2, 7, 2), (553000, 100000, 3, 7, 3), (654000, 300000, 1, 7, 4), (955000, 250000, 2, 7, 5), (1206000, 100000, 3, 7, 6),
  (1307000, 300000, 1, 7, 7), (1608000, 250000, 2, 7, 8), (1859000, 100000, 3, 7, 9), (1960000, 300000, 1, 7, 10), (2261000, 250000, 2, 7, 11), (2512000, 100000, 3, 7, 12),
  (2613000, 300000, 1, 7, 13), (2914000, 250000, 2, 7, 14), (3165000, 100000, 3, 7, 15), (3266000, 300000, 1, 7, 16), (3567000, 250000, 2, 7, 17), (3818000, 100000, 3, 7, 18),
  (3919000, 300000, 1, 7, 19), (4220000, 250000, 2, 7, 20), (4471000, 100000, 3, 7, 21), (4572000, 300000, 1, 7, 22), (4873000, 250000, 2, 7, 23), (5124000, 100000, 3, 7, 24),
  (5225000, 300000, 1, 7, 25), (5526000, 250000, 2, 7, 26), (5777000, 100000, 3, 7, 27), (5878000, 300000, 1, 7, 28), (6179000, 250000, 2, 7, 29), (6430000, 100000, 3, 7, 30);
INSERT INTO OCC_FUNCTION VALUES (1, 3, 0, 0, NULL, 1, 16, NULL);
INSERT INTO OCC_MODULE VALUES (1, NULL, '/home/alice/scale/scale_prog');
