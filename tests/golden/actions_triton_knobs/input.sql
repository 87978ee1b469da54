-- Triton launch semantics (grid = cdiv(n, XBLOCK) programs of 32 x num_warps threads) on an H100:
-- an Inductor reduction whose 128 programs fill 0.12 of one wave (64 registers, num_warps=4:
-- 8 programs/SM, 50 % theoretical; every program is resident at once, so occupancy cannot
-- matter) and an Inductor pointwise kernel over 16,384 programs at num_warps=1 (32 programs/SM
-- x 1 warp = 50 %; num_warps=2 keeps the grid and reaches 64 warps = 100 %), and a hand-written
-- Triton add_kernel over the same 524,288 elements at num_warps=4 / 4,096 programs (20 µs) and
-- num_warps=8 / 2,048 programs (12 µs): BLOCK_SIZE doubled with num_warps. Names, grids,
-- registers and times are made up; no loader recorded (names and Triton's cache decide).
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'h100'),
  ('command_line', 'python3 gpt_step.py'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'triton_per_fused__softmax_0'),
  (2, 'triton_poi_fused_gelu_1'),
  (3, 'add_kernel');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 1, 1, 0, 0, 64, 128, 1, 1, 128, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 2, 2, 2, 0, 0, 32, 16384, 1, 1, 32, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (3, 0, 1, NULL, 3, 3, 3, 0, 0, 32, 4096, 1, 1, 128, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (4, 0, 1, NULL, 3, 3, 3, 0, 0, 32, 2048, 1, 1, 256, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 40000, 1, 7, 1), (42000, 30000, 2, 7, 2), (73000, 20000, 3, 7, 3), (94000, 12000, 4, 7, 4), (107000, 40000, 1, 7, 5), (148000, 30000, 2, 7, 6),
  (179000, 20000, 3, 7, 7), (200000, 12000, 4, 7, 8), (213000, 40000, 1, 7, 9), (254000, 30000, 2, 7, 10), (285000, 20000, 3, 7, 11), (306000, 12000, 4, 7, 12),
  (319000, 40000, 1, 7, 13), (360000, 30000, 2, 7, 14), (391000, 20000, 3, 7, 15), (412000, 12000, 4, 7, 16), (425000, 40000, 1, 7, 17), (466000, 30000, 2, 7, 18),
  (497000, 20000, 3, 7, 19), (518000, 12000, 4, 7, 20), (531000, 40000, 1, 7, 21), (572000, 30000, 2, 7, 22), (603000, 20000, 3, 7, 23), (624000, 12000, 4, 7, 24),
  (637000, 40000, 1, 7, 25), (678000, 30000, 2, 7, 26), (709000, 20000, 3, 7, 27), (730000, 12000, 4, 7, 28), (743000, 40000, 1, 7, 29), (784000, 30000, 2, 7, 30),
  (815000, 20000, 3, 7, 31), (836000, 12000, 4, 7, 32), (849000, 40000, 1, 7, 33), (890000, 30000, 2, 7, 34), (921000, 20000, 3, 7, 35), (942000, 12000, 4, 7, 36),
  (955000, 40000, 1, 7, 37), (996000, 30000, 2, 7, 38), (1027000, 20000, 3, 7, 39), (1048000, 12000, 4, 7, 40), (1061000, 40000, 1, 7, 41), (1102000, 30000, 2, 7, 42),
  (1133000, 40000, 1, 7, 43), (1174000, 30000, 2, 7, 44), (1205000, 40000, 1, 7, 45), (1246000, 30000, 2, 7, 46), (1277000, 40000, 1, 7, 47), (1318000, 30000, 2, 7, 48),
  (1349000, 40000, 1, 7, 49), (1390000, 30000, 2, 7, 50), (1421000, 40000, 1, 7, 51), (1462000, 30000, 2, 7, 52), (1493000, 40000, 1, 7, 53), (1534000, 30000, 2, 7, 54),
  (1565000, 40000, 1, 7, 55), (1606000, 30000, 2, 7, 56), (1637000, 40000, 1, 7, 57), (1678000, 30000, 2, 7, 58), (1709000, 40000, 1, 7, 59), (1750000, 30000, 2, 7, 60);
INSERT INTO OCC_TRITON_KERNEL VALUES
  (1, 4, 1, 1, 0, '/tmp/torchinductor_alice/triton/0/A1/triton_per_fused__softmax_0.json'),
  (2, 1, 1, 1, 0, '/tmp/torchinductor_alice/triton/0/A2/triton_poi_fused_gelu_1.json'),
  (3, 4, 3, 1, 0, '/root/.triton/cache/AB/add_kernel.json');
