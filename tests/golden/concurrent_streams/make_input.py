#!/usr/bin/env python3
"""Writes input.sql: a hand-built trace of one stencil kernel launched on 4 streams at once, one
block size per stream (32, 64, 256, 512) over the same 16,777,216 threads, on an H200 (device rows
from tests/golden/h200_cupy_sweep, a real trace). 200 launches per block size:

- every 5th round, each block size runs alone, one after the other (40 solo launches each):
  block 32 120 us, 64 80 us, 256 60 us, 512 63.5 us;
- the other 160 rounds start all four streams at the same instant; sharing the SMs, they take
  block 32 300 us, 64 200 us, 256 180 us, 512 90 us.

Launches are 5 us apart. Expected, worked by hand (see args): over all launches block 512's mean
(84.7 us) is below 0.9 x block 256's (156 us), so comparing all launches would tell block 256 to
use 512; alone, 256 (60 us) is the faster, and 32 and 64 should use 256."""

SOLO = {32: 120_000, 64: 80_000, 256: 60_000, 512: 63_500}
SHARED = {32: 300_000, 64: 200_000, 256: 180_000, 512: 90_000}
STREAM = {32: 13, 64: 14, 256: 15, 512: 16}
CONFIG = {32: 1, 64: 2, 256: 3, 512: 4}
THREADS = 16_777_216
GAP = 5_000
T0 = 1_000_000_000

out = []
out.append("-- Hand-built (tests/golden/concurrent_streams/make_input.py): one kernel on 4 concurrent streams.")
out.append("INSERT INTO OCC_META VALUES ('schema_version', '1'), ('occtrace_version', '0.1.0'), "
           "('command_line', './stencil_streams'), ('pid', '4242'), ('host', 'vm'), ('trace_mode', 'full'), "
           "('achieved_mode', 'off'), ('cuda_driver_version', '13.0'), ('cupti_version', '130001');")
out.append("INSERT INTO TARGET_INFO_GPU(vmId, id, name, busLocation, isDiscrete, l2CacheSize, totalMemory, "
           "memoryBandwidth, clockRate, smCount, pwGpuId, uuid, luid, chipName, cuDevice, ctxswDevPath, ctrlDevPath, "
           "revision, nodeMask, constantMemory, maxIPC, maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, "
           "maxShmemPerSm, maxRegistersPerSm, threadsPerWarp, asyncEngines, maxWarpsPerSm, maxBlocksPerSm, "
           "maxThreadsPerBlock, maxBlockDimX, maxBlockDimY, maxBlockDimZ, maxGridDimX, maxGridDimY, maxGridDimZ, "
           "computeMajor, computeMinor, smMajor, smMinor, numaNodeId) VALUES(0,0,'NVIDIA H200','0000:00:06.0',1,"
           "62914560,150109880320,4814304000000,1980000000,132,NULL,'GPU-af18943b-5062-94e0-4b74-c9d741b9a45d',NULL,"
           "'GH100',0,NULL,NULL,NULL,NULL,65536,4294967295,65536,49152,232448,233472,65536,32,3,64,32,1024,1024,1024,"
           "64,2147483647,65535,65535,9,0,9,0,NULL);")
out.append("INSERT INTO TARGET_INFO_CUDA_DEVICE(gpuId, cudaId, pid, uuid, numMultiprocessors) "
           "VALUES(0,0,4242,'GPU-af18943b-5062-94e0-4b74-c9d741b9a45d',132);")
out.append("INSERT INTO OCC_DEVICE(gpuId, reservedSharedMemPerBlock, maxThreadsPerMultiprocessor, isMigEnabled, "
           "gpuInstanceId, computeInstanceId, driverVersion) VALUES(0,1024,2048,0,NULL,NULL,13000);")
out.append("INSERT INTO OCC_CONTEXT VALUES (1, 0, 7, 0, 0, 0);")
out.append("INSERT INTO StringIds VALUES (1, 'stencil5(float const*, float*, int, int)'), (2, 'stencil5'), "
           "(3, '_Z8stencil5PKfPfii');")
out.append("INSERT INTO OCC_MODULE(moduleId, library, loader) VALUES (1, '/home/u/stencil_streams', '/home/u/stencil_streams');")
out.append("INSERT INTO OCC_FUNCTION(moduleId, mangledName, localMemoryPerThread, barrierCount, registersPerThread) "
           "VALUES (1, 3, 0, 1, 30);")
rows = []
for block, cid in CONFIG.items():
    rows.append(f"({cid}, 0, 1, NULL, 1, 2, 3, 0, 0, 30, {THREADS // block}, 1, 1, {block}, 1, 1, 0, 0, 0, 0, "
                f"0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0)")
out.append("INSERT INTO OCC_KERNEL_CONFIG VALUES\n  " + ",\n  ".join(rows) + ";")
launches = []
t = T0
correlation = 1
for round_ in range(200):
    if round_ % 5 == 0:
        for block in (32, 64, 256, 512):
            launches.append((t, SOLO[block], CONFIG[block], STREAM[block], correlation))
            correlation += 1
            t += SOLO[block] + GAP
    else:
        for block in (32, 64, 256, 512):
            launches.append((t, SHARED[block], CONFIG[block], STREAM[block], correlation))
            correlation += 1
        t += max(SHARED.values()) + GAP
for i in range(0, len(launches), 8):
    out.append("INSERT INTO OCC_LAUNCH VALUES " + ", ".join(f"({a}, {b}, {c}, {d}, {e})" for a, b, c, d, e in launches[i:i + 8]) + ";")
with open("input.sql", "w") as f:
    f.write("\n".join(out) + "\n")
