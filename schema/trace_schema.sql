-- occtrace trace file schema, version 1 (OCC_META.schema_version).
--
-- Tables that the Nsight Systems SQLite export (`nsys export --type sqlite`) also has keep its
-- table and column names, so scripts written for nsys exports read occtrace traces unchanged:
-- StringIds, TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE and CUPTI_ACTIVITY_KIND_KERNEL (here a
-- view). occtrace's own data lives in OCC_* tables. docs/schema.md documents every column.
--
-- Storage layout: a launch row (OCC_LAUNCH) holds only what changes per launch; everything
-- that is the same for many launches of a kernel (name, grid, block, resources, executed
-- carveout, graph node) is interned once in OCC_KERNEL_CONFIG. This keeps a launch at about
-- 30 bytes on disk and lets the analyzer aggregate by configId without string work.

CREATE TABLE IF NOT EXISTS OCC_META (
  name  TEXT PRIMARY KEY NOT NULL,
  value TEXT
);

-- Interned strings (kernel names), as in nsys exports.
CREATE TABLE IF NOT EXISTS StringIds (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL
);

-- One row per CUDA device used, nsys column names. Values the CUPTI device record does not
-- carry come from cuDeviceGetAttribute at trace time.
CREATE TABLE IF NOT EXISTS TARGET_INFO_GPU (
  vmId                  INTEGER,
  id                    INTEGER PRIMARY KEY,  -- = TARGET_INFO_CUDA_DEVICE.gpuId
  name                  TEXT,
  busLocation           TEXT,
  isDiscrete            INTEGER,
  l2CacheSize           INTEGER,
  totalMemory           INTEGER,
  memoryBandwidth       INTEGER,
  clockRate             INTEGER,              -- Hz
  smCount               INTEGER,
  pwGpuId               INTEGER,
  uuid                  TEXT,
  luid                  INTEGER,
  chipName              TEXT,
  cuDevice              INTEGER,
  ctxswDevPath          TEXT,
  ctrlDevPath           TEXT,
  revision              INTEGER,
  nodeMask              INTEGER,
  constantMemory        INTEGER,
  maxIPC                INTEGER,
  maxRegistersPerBlock  INTEGER,
  maxShmemPerBlock      INTEGER,              -- default (non-opt-in) limit, 48 KiB
  maxShmemPerBlockOptin INTEGER,
  maxShmemPerSm         INTEGER,
  maxRegistersPerSm     INTEGER,
  threadsPerWarp        INTEGER,
  asyncEngines          INTEGER,
  maxWarpsPerSm         INTEGER,
  maxBlocksPerSm        INTEGER,
  maxThreadsPerBlock    INTEGER,
  maxBlockDimX          INTEGER,
  maxBlockDimY          INTEGER,
  maxBlockDimZ          INTEGER,
  maxGridDimX           INTEGER,
  maxGridDimY           INTEGER,
  maxGridDimZ           INTEGER,
  computeMajor          INTEGER,
  computeMinor          INTEGER,
  smMajor               INTEGER,
  smMinor               INTEGER,
  numaNodeId            INTEGER
);

CREATE TABLE IF NOT EXISTS TARGET_INFO_CUDA_DEVICE (
  gpuId              INTEGER NOT NULL,  -- TARGET_INFO_GPU.id
  cudaId             INTEGER NOT NULL,  -- CUDA ordinal = kernel deviceId
  pid                INTEGER,
  uuid               TEXT,
  numMultiprocessors INTEGER
);

-- Device facts the occupancy model needs that nsys does not export.
CREATE TABLE IF NOT EXISTS OCC_DEVICE (
  gpuId                       INTEGER PRIMARY KEY,  -- TARGET_INFO_GPU.id
  reservedSharedMemPerBlock   INTEGER,              -- CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
  maxThreadsPerMultiprocessor INTEGER,              -- CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
  isMigEnabled                INTEGER,
  gpuInstanceId               INTEGER,
  computeInstanceId           INTEGER,
  driverVersion               INTEGER               -- cuDriverGetVersion
);

-- One row per CUDA context (CUpti_ActivityContext3): green contexts and their SM counts.
CREATE TABLE IF NOT EXISTS OCC_CONTEXT (
  contextId          INTEGER PRIMARY KEY,
  deviceId           INTEGER NOT NULL,
  nullStreamId       INTEGER,
  parentContextId    INTEGER,          -- green context: its primary context; else 0
  isGreenContext     INTEGER NOT NULL,
  numMultiprocessors INTEGER           -- SMs of a green context; 0 for a regular context
);

-- One row per distinct launch configuration. Columns named as in nsys' kernel table.
CREATE TABLE IF NOT EXISTS OCC_KERNEL_CONFIG (
  id                              INTEGER PRIMARY KEY,
  deviceId                        INTEGER NOT NULL,
  contextId                       INTEGER NOT NULL,
  greenContextId                  INTEGER,
  demangledName                   INTEGER NOT NULL,  -- StringIds.id
  shortName                       INTEGER NOT NULL,  -- StringIds.id
  mangledName                     INTEGER NOT NULL,  -- StringIds.id
  launchType                      INTEGER NOT NULL,  -- CUpti_ActivityLaunchType
  cacheConfig                     INTEGER NOT NULL,  -- requested CUfunc_cache
  registersPerThread              INTEGER NOT NULL,
  gridX                           INTEGER NOT NULL,
  gridY                           INTEGER NOT NULL,
  gridZ                           INTEGER NOT NULL,
  blockX                          INTEGER NOT NULL,
  blockY                          INTEGER NOT NULL,
  blockZ                          INTEGER NOT NULL,
  staticSharedMemory              INTEGER NOT NULL,
  dynamicSharedMemory             INTEGER NOT NULL,
  localMemoryPerThread            INTEGER NOT NULL,
  localMemoryTotal                INTEGER,
  sharedMemoryExecuted            INTEGER NOT NULL,  -- executed carveout (bytes); 0 = not reported
  sharedMemoryLimitConfig         INTEGER NOT NULL,  -- CUpti_FuncShmemLimitConfig: 0 default, 1 opt-in
  sharedMemoryRequestedPercentage INTEGER,           -- requested carveout %, NULL if none requested
  graphId                         INTEGER NOT NULL,  -- 0 unless launched from a graph
  graphNodeId                     INTEGER NOT NULL,
  clusterX                        INTEGER NOT NULL,
  clusterY                        INTEGER NOT NULL,
  clusterZ                        INTEGER NOT NULL,
  clusterSchedulingPolicy         INTEGER NOT NULL,
  maxPotentialClusterSize         INTEGER NOT NULL,
  maxActiveClusters               INTEGER NOT NULL,
  isDeviceLaunched                INTEGER NOT NULL
);

-- One row per function of each loaded module, read from the module's cubin (ELF) by
-- occtrace: facts CUPTI's kernel record lacks (barriers) or reports as 0 (local memory).
-- NULL: the cubin does not say.
CREATE TABLE IF NOT EXISTS OCC_FUNCTION (
  moduleId              INTEGER NOT NULL,  -- CUpti_ModuleResourceData.moduleId
  mangledName           INTEGER NOT NULL,  -- StringIds.id (= OCC_KERNEL_CONFIG.mangledName)
  localMemoryPerThread  INTEGER,           -- EIATTR_FRAME_SIZE (ptxas "N bytes stack frame")
  minStackSize          INTEGER,           -- EIATTR_MIN_STACK_SIZE
  maxStackSize          INTEGER,           -- EIATTR_MAX_STACK_SIZE (with callees)
  barrierCount          INTEGER,           -- named barriers (ptxas "used N barriers")
  registersPerThread    INTEGER,           -- EIATTR_REGCOUNT
  maxThreadsPerBlock    INTEGER,           -- __launch_bounds__ (EIATTR_MAX_THREADS x*y*z)
  PRIMARY KEY (moduleId, mangledName)
);

-- occtrace: where each loaded module came from (CUPTI_CBID_RESOURCE_MODULE_LOADED).
CREATE TABLE IF NOT EXISTS OCC_MODULE (
  moduleId INTEGER PRIMARY KEY,  -- CUpti_ModuleResourceData.moduleId (= OCC_FUNCTION.moduleId)
  library  TEXT,                 -- shared object whose mapped image held the module (dladdr);
                                 -- NULL: loaded from memory (JIT, Triton, a compressed fatbin)
  loader   TEXT                  -- shared object that called CUDA to load it: the first frame of
                                 -- the loading thread outside libcuda, libcudart, libcupti,
                                 -- libffi and occtrace (dladdr); NULL: not found
);

-- occtrace: Triton's compile metadata, from the JSON Triton writes beside each compiled kernel
-- in its cache (Triton and TorchInductor kernels). NULL: the JSON lacks the field.
CREATE TABLE IF NOT EXISTS OCC_TRITON_KERNEL (
  mangledName INTEGER PRIMARY KEY,  -- StringIds.id of the kernel name (Triton names are unmangled)
  numWarps    INTEGER,
  numStages   INTEGER,
  numCtas     INTEGER,
  sharedBytes INTEGER,
  cacheFile   TEXT                  -- the JSON it came from
);

-- occtrace: where a Triton kernel comes from in the user's source, for the compilation that
-- loaded (the cache's only one of its name, or the one whose cubin is the loaded image).
CREATE TABLE IF NOT EXISTS OCC_TRITON_SOURCE (
  mangledName  INTEGER PRIMARY KEY, -- StringIds.id of the kernel name
  sourceFile   TEXT,                -- the @triton.jit function's file (first location of Triton's
  sourceLine   INTEGER,             -- IR); for torch.compile, Inductor's generated kernel file
  sourceNodes  TEXT,                -- torch.compile: the FX source nodes Inductor's output code
                                    -- names for it ("add, h, layer_norm"); NULL: not Inductor's
  originalAten TEXT,                -- torch.compile: the ATen ops ("aten.add, aten.relu")
  wrapperFile  TEXT                 -- torch.compile: the output code module that declared it
);

-- One row per kernel launch: only what differs between launches of one configuration.
CREATE TABLE IF NOT EXISTS OCC_LAUNCH (
  start         INTEGER NOT NULL,  -- ns (CUPTI timestamp); 0 when the profiler replayed it
  duration      INTEGER NOT NULL,  -- ns, end - start
  configId      INTEGER NOT NULL,  -- OCC_KERNEL_CONFIG.id
  streamId      INTEGER NOT NULL,
  correlationId INTEGER NOT NULL
);

-- Light tracing (OCC_META trace_mode = 'light'): one row per kernel launch, from the launch
-- callbacks, timed or not; a graph launch gives one row per kernel node. OCC_LAUNCH then holds
-- only the launches timed in a window (kernel records switched on for a while), with the same
-- configId and correlationId as their row here. Empty in a full trace.
CREATE TABLE IF NOT EXISTS OCC_LAUNCH_CALL (
  apiStart      INTEGER NOT NULL,  -- ns (CUPTI timestamp) when the launch API returned
  configId      INTEGER NOT NULL,  -- OCC_KERNEL_CONFIG.id
  streamId      INTEGER NOT NULL,
  correlationId INTEGER NOT NULL   -- the driver launch API's (the runtime call's in older traces made with OCCTRACE_LIGHT_RUNTIME_CALLBACKS=1), as the light trace's OCC_ACHIEVED rows carry it
);

-- Achieved occupancy: one row per launch the range profiler was asked to measure.
CREATE TABLE IF NOT EXISTS OCC_ACHIEVED (
  correlationId              INTEGER NOT NULL,  -- OCC_LAUNCH.correlationId
  contextId                  INTEGER NOT NULL,
  status                     TEXT NOT NULL,     -- 'measured' or why not ('graph', 'capturing', 'no-range', ...)
  achievedOccupancyPct       REAL,              -- sm__warps_active.avg.pct_of_peak_sustained_active
  warpsActivePerCycle        REAL,              -- sm__warps_active.avg.per_cycle_active
  smCyclesActive             REAL,              -- sm__cycles_active.avg
  gpuTimeNs                  REAL,              -- gpu__time_duration.sum
  policy                     TEXT NOT NULL,     -- 'sample' or 'all'
  sampleIndex                INTEGER,           -- n-th sample of its signature (0-based)
  -- How close the launch ran to the hardware's ceilings, % of sustained peak; NULL where the
  -- chip could not fit them in the occupancy metrics' single pass (and in older traces).
  dramThroughputPct          REAL,              -- dram__throughput.avg.pct_of_peak_sustained_elapsed
  l2ThroughputPct            REAL,              -- lts__t_sectors.avg.pct_of_peak_sustained_elapsed
  l1ThroughputPct            REAL,              -- l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed
  issueSlotsPct              REAL,              -- sm__inst_issued.avg.pct_of_peak_sustained_active
  tensorPipePct              REAL               -- sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
);

-- occtrace: PM sampling (OCCTRACE_ACHIEVED=pm): one row per hardware sample in which any SM
-- was active (idle samples are dropped). Device-wide: every context and process on the device.
CREATE TABLE IF NOT EXISTS OCC_PM_SAMPLE (
  deviceId          INTEGER NOT NULL,
  start             INTEGER NOT NULL,  -- ns, same clock as OCC_LAUNCH.start
  "end"             INTEGER NOT NULL,  -- ns
  smCyclesActive    REAL NOT NULL,     -- sm__cycles_active.sum over the sample (all SMs)
  warpsActive       REAL NOT NULL,     -- sm__warps_active.sum over the sample (all SMs)
  dramThroughputPct REAL               -- dram__throughput.avg.pct_of_peak_sustained_elapsed; NULL if not collected
);

-- nsys-compatible kernel table, as a view over the compact storage: one row per launch of the
-- run, so that its count is OCC_META launch_count in every mode. Launches with a kernel record
-- come from OCC_LAUNCH; the others are OCC_LAUNCH_CALL rows without one (light tracing's untimed
-- launches; in a full trace written before 2026-11-28, the launches made while kernel replay's
-- re-attach, since deleted, had CUPTI finalized), flagged
-- occTimeEstimated = 1: start is when the launch call returned, on the same clock, and the
-- duration is the mean of its configuration's recorded launches (0 if none was recorded).
CREATE VIEW IF NOT EXISTS CUPTI_ACTIVITY_KIND_KERNEL AS
-- In a light trace a timed launch is both a call and a record: a launch call's records (its
-- correlationId's) describe that many of its calls, those whose configuration has a record first,
-- and the rest count as calls. By count, not by (correlationId, configId): a graph's records can
-- sit on another node's configuration of the same shape (CUPTI gives the executed graph's node
-- ids, not those read at instantiation), which counted such kernels twice. In a full trace the
-- writer kept only the calls without a record, and correlation ids may repeat across CUPTI
-- attachments, so every call counts. The CTEs are computed only when OCC_LAUNCH_CALL has rows;
-- the launches come through a co-routine (the CROSS JOIN keeps them the outer loop) so that a
-- full trace without calls is not copied.
WITH timed AS (SELECT correlationId, configId, COUNT(*) AS n FROM OCC_LAUNCH
               WHERE (SELECT value FROM OCC_META WHERE name = 'trace_mode') = 'light'
               GROUP BY correlationId, configId),
     timed_per_call AS (SELECT correlationId, SUM(n) AS n FROM timed GROUP BY correlationId),
     calls AS (SELECT k.apiStart, k.configId, k.streamId, k.correlationId,
                      row_number() OVER (PARTITION BY k.correlationId
                                         ORDER BY t.correlationId IS NULL, k.configId, k.apiStart) AS nth
               FROM OCC_LAUNCH_CALL k
               LEFT JOIN timed t ON t.correlationId = k.correlationId AND t.configId = k.configId),
     mean_duration AS (SELECT configId, CAST(avg(duration) AS INTEGER) AS duration
                       FROM OCC_LAUNCH WHERE duration > 0 GROUP BY configId)
SELECT
  l.start                              AS start,
  l.start + l.duration                 AS "end",
  c.deviceId                           AS deviceId,
  c.contextId                          AS contextId,
  c.greenContextId                     AS greenContextId,
  l.streamId                           AS streamId,
  l.correlationId                      AS correlationId,
  CAST((SELECT value FROM OCC_META WHERE name = 'pid') AS INTEGER) AS globalPid,
  c.demangledName                      AS demangledName,
  c.shortName                          AS shortName,
  c.mangledName                        AS mangledName,
  c.launchType                         AS launchType,
  c.cacheConfig                        AS cacheConfig,
  c.registersPerThread                 AS registersPerThread,
  c.gridX AS gridX, c.gridY AS gridY, c.gridZ AS gridZ,
  c.blockX AS blockX, c.blockY AS blockY, c.blockZ AS blockZ,
  c.staticSharedMemory                 AS staticSharedMemory,
  c.dynamicSharedMemory                AS dynamicSharedMemory,
  c.localMemoryPerThread               AS localMemoryPerThread,
  c.localMemoryTotal                   AS localMemoryTotal,
  NULL                                 AS gridId,
  c.sharedMemoryExecuted               AS sharedMemoryExecuted,
  c.graphNodeId                        AS graphNodeId,
  c.sharedMemoryLimitConfig            AS sharedMemoryLimitConfig,
  NULL AS qmdBulkReleaseDone, NULL AS qmdPreexitDone, NULL AS qmdLastCtaDone,
  c.graphId                            AS graphId,
  c.clusterX AS clusterX, c.clusterY AS clusterY, c.clusterZ AS clusterZ,
  c.clusterSchedulingPolicy            AS clusterSchedulingPolicy,
  c.maxPotentialClusterSize            AS maxPotentialClusterSize,
  c.maxActiveClusters                  AS maxActiveClusters,
  c.sharedMemoryRequestedPercentage    AS sharedMemoryRequestedPercentage,
  NULL                                 AS tensorSizeMinusOneElements,
  c.id                                 AS occConfigId,
  l.estimated                          AS occTimeEstimated
FROM (SELECT start, duration, configId, streamId, correlationId, 0 AS estimated FROM OCC_LAUNCH
      UNION ALL
      SELECT k.apiStart, coalesce(m.duration, 0), k.configId, k.streamId, k.correlationId, 1
      FROM calls k
      LEFT JOIN timed_per_call p ON p.correlationId = k.correlationId
      LEFT JOIN mean_duration m ON m.configId = k.configId
      WHERE k.nth > coalesce(p.n, 0)) l
CROSS JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId;
