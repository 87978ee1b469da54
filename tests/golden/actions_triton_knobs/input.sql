-- Triton launch semantics (grid = cdiv(n, XBLOCK) programs of 32 x num_warps threads) on an H100:
-- an Inductor reduction whose 128 programs fill 0.12 of one wave (64 registers, num_warps=4:
-- 8 programs/SM, 50 % theoretical; every program is resident at once, so occupancy cannot
-- matter) and an Inductor pointwise kernel over 16,384 programs at num_warps=1 (32 programs/SM
-- x 1 warp = 50 %; num_warps=2 keeps the grid and reaches 64 warps = 100 %). Names, grids,
-- registers and times are made up; no loader recorded (names and Triton's cache decide).
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '4242'), ('host', 'h100'),
  ('command_line', 'python3 gpt_step.py'), ('occtrace_version', '0.1.0'), ('achieved_mode', 'off');
INSERT INTO StringIds VALUES
  (1, 'triton_per_fused__softmax_0'),
  (2, 'triton_poi_fused_gelu_1');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 1, 1, 0, 0, 64, 128, 1, 1, 128, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 2, 2, 2, 0, 0, 32, 16384, 1, 1, 32, 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES
  (1000, 40000, 1, 7, 1), (42000, 30000, 2, 7, 2), (73000, 40000, 1, 7, 3), (114000, 30000, 2, 7, 4), (145000, 40000, 1, 7, 5), (186000, 30000, 2, 7, 6),
  (217000, 40000, 1, 7, 7), (258000, 30000, 2, 7, 8), (289000, 40000, 1, 7, 9), (330000, 30000, 2, 7, 10), (361000, 40000, 1, 7, 11), (402000, 30000, 2, 7, 12),
  (433000, 40000, 1, 7, 13), (474000, 30000, 2, 7, 14), (505000, 40000, 1, 7, 15), (546000, 30000, 2, 7, 16), (577000, 40000, 1, 7, 17), (618000, 30000, 2, 7, 18),
  (649000, 40000, 1, 7, 19), (690000, 30000, 2, 7, 20), (721000, 40000, 1, 7, 21), (762000, 30000, 2, 7, 22), (793000, 40000, 1, 7, 23), (834000, 30000, 2, 7, 24),
  (865000, 40000, 1, 7, 25), (906000, 30000, 2, 7, 26), (937000, 40000, 1, 7, 27), (978000, 30000, 2, 7, 28), (1009000, 40000, 1, 7, 29), (1050000, 30000, 2, 7, 30),
  (1081000, 40000, 1, 7, 31), (1122000, 30000, 2, 7, 32), (1153000, 40000, 1, 7, 33), (1194000, 30000, 2, 7, 34), (1225000, 40000, 1, 7, 35), (1266000, 30000, 2, 7, 36),
  (1297000, 40000, 1, 7, 37), (1338000, 30000, 2, 7, 38), (1369000, 40000, 1, 7, 39), (1410000, 30000, 2, 7, 40);
INSERT INTO OCC_TRITON_KERNEL VALUES
  (1, 4, 1, 1, 0, '/tmp/torchinductor_alice/triton/0/A1/triton_per_fused__softmax_0.json'),
  (2, 1, 1, 1, 0, '/tmp/torchinductor_alice/triton/0/A2/triton_poi_fused_gelu_1.json');
