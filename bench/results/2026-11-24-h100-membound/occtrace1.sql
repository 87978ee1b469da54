BEGIN TRANSACTION;
CREATE TABLE OCC_ACHIEVED (
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
INSERT INTO "OCC_ACHIEVED" VALUES(3,1,'measured',2.52370662543011334841e+01,1.61517224027527248608e+01,5.13078181818181838043e+04,28864.0,'all',0,1.63773834745762698612e+01,1.9140188275740719348e+01,1.30446690743253146393e+00,9.21828839954688206148e+00,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(4,1,'measured',2.23207250079128058936e+01,1.42852640050641959139e+01,5.06706590909090882641e+04,28640.0,'all',1,1.31690140845070420279e+01,1.90270561885086628706e+01,1.31428152770253681147e+00,9.33615876858985593855e+00,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(5,1,'measured',2.13493238192185934569e+01,13.6635672442999,5.05991969696969681518e+04,28704.0,'all',2,9.74292935756334799179e+00,1.87184925486027360364e+01,1.31302953141044898011e+00,9.35158645768423113509e+00,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(6,1,'measured',2.07245211791257197839e+01,1.32636935546404615142e+01,5.05495227272727279356e+04,28608.0,'all',3,8.85503394389650289042e+00,1.85091891061738493817e+01,1.31501255163856201058e+00,9.35484509115498319431e+00,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(7,1,'measured',2.12315791488007263873e+01,1.35882106552324639632e+01,5.06242954545454558685e+04,28672.0,'all',4,9.68675328554361,1.86437528989659213607e+01,1.31394143401181473507e+00,9.34134586534462663109e+00,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(8,1,'measured',2.74914849593242323062e+01,1.75945503739675075389e+01,3.84908257575757597806e+04,22144.0,'all',0,1.19069519752130137391e+01,2.41058415141063058233e+01,1.70374958707851242856e+00,1.23004222375697942477e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(9,1,'measured',2.73246102148233909194e+01,1.74877505374869706149e+01,3.84540681818181838023e+04,22112.0,'all',1,1.17477300409699925154e+01,2.41533379386081428199e+01,1.70587592209861038661e+00,1.23123474542729738345e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(10,1,'measured',2.76675330804935661879e+01,1.77072211715158829288e+01,3.84301363636363603297e+04,22080.0,'all',2,1.24902993348115298744e+01,2.42152888534467471961e+01,1.70756313731375630737e+00,1.23147316913927653561e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(11,1,'measured',2.74342682186019466423e+01,1.75579316599052468461e+01,3.84609393939393921762e+04,22240.0,'all',3,1.23170463299218670984e+01,2.40553627357826549371e+01,1.69499299098052169654e+00,1.23018257011639509101e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(12,1,'measured',27.6211669670747,1.76775468589278084152e+01,3.84746060606060636928e+04,22272.0,'all',4,1.2121097614598218328e+01,2.40582951271781908531e+01,1.69253400770235207239e+00,1.23056126354888153431e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(13,1,'measured',5.11227947567306699721e+01,3.2718588644307629921e+01,2.58698181818181801639e+04,15488.0,'all',0,1.72596686175260956015e+01,3.45031115744250698189e+01,2.43915147779767726987e+00,2.04900644719949802667e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(14,1,'measured',5.28914108151160107258e+01,3.38505029216742485691e+01,2.59385833333333321211e+04,15552.0,'all',1,1.91564519943244562227e+01,3.464790996784566346e+01,2.43141728298814241426e+00,2.04207389074366538759e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(15,1,'measured',5.23217558153057353802e+01,3.34859237217956717813e+01,2.58620681818181801653e+04,15360.0,'all',2,1.83570090851131659803e+01,3.4995307951585715501e+01,2.46134370377343936198e+00,2.04879440551902263227e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(16,1,'measured',5.20384181295245085152e+01,3.33045876028956868699e+01,2.59079318181818198346e+04,15424.0,'all',3,1.78358134920634903153e+01,3.47255481410867474769e+01,2.45089068674503529621e+00,2.04586711042920939003e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(17,1,'measured',5.17118579323558620348e+01,3.30955890767077534056e+01,2.58191666666666678792e+04,15424.0,'all',4,1.72482735354818217388e+01,3.46601190703112109763e+01,2.4508002546933536081e+00,2.0533467033241102229e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(18,1,'measured',5.88568787825085450995e+01,3.76684024208054708533e+01,2.1074878787878787989e+04,13056.0,'all',0,2.22432679677237778994e+01,4.10818120351588902386e+01,2.89869944216312624973e+00,2.24552856984690940578e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(19,1,'measured',5.90902376021173338918e+01,3.78177520653550942593e+01,2.07435530303030318463e+04,12896.0,'all',1,2.08258079847908739168e+01,4.16715757907875925534e+01,2.93638840714430404688e+00,2.28122081742081945772e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(20,1,'measured',5.80332670570656432556e+01,3.71412909165220099798e+01,2.06302803030303039122e+04,12960.0,'all',2,1.92722117202268421465e+01,4.09732945771641396967e+01,2.92182200140527115195e+00,2.29510112562550574457e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(21,1,'measured',6.02781287244678196666e+01,38.5780023836594,2.09825075757575759782e+04,13056.0,'all',3,2.14759389671361482503e+01,4.12520461644740734632e+01,2.89766044810215372962e+00,2.25607387250057840328e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(22,1,'measured',6.00843350741253843247e+01,3.84539744474402453997e+01,2.09805227272727279341e+04,13056.0,'all',4,2.0795166290868092318e+01,4.1148411553431621713e+01,2.89874901806292450956e+00,2.26290148619083559817e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(23,1,'measured',6.24989405724089550639e+01,3.9999321966341732093e+01,20603.25,12960.0,'all',0,19.7311904087605,4.12833946356673564537e+01,2.91910633251039453028e+00,2.29551163044665287307e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(24,1,'measured',6.33173209961307534862e+01,4.05230854375236830815e+01,2.03685075757575759789e+04,12832.0,'all',1,1.9089272085479869645e+01,4.16318807689956571493e+01,2.94621679796728308531e+00,2.32405064562308929501e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(25,1,'measured',63.2660124025203,4.04902479376129917918e+01,2.08211590909090919006e+04,12896.0,'all',2,21.1718009478673,4.14945135944315239822e+01,2.92918048261871799553e+00,2.27340122027672144602e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(26,1,'measured',6.31246879710326638237e+01,4.03998003014609068355e+01,2.05916439393939399446e+04,12832.0,'all',3,1.98566590345353937152e+01,41.6877052310042,2.94642166703732710786e+00,2.29700503697991642582e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(27,1,'measured',6.33214434577409122093e+01,4.05257238129541832441e+01,2.04017424242424240225e+04,12832.0,'all',4,1.96791993120580954723e+01,4.16082904884318764953e+01,2.95004513415407076948e+00,2.31897528063185305309e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(28,1,'measured',6.14791784121164184293e+01,3.93466741837545086468e+01,2.29510757575757561423e+04,14368.0,'all',0,1.86183481152993337559e+01,3.72975191100191096884e+01,2.63063389007020242971e+00,2.0594622883590986361e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(29,1,'measured',6.18492693878130239681e+01,3.95835324082003339176e+01,2.29565681818181801642e+04,14432.0,'all',1,1.878337995930824178e+01,3.70888017118402331102e+01,2.61780857594345128802e+00,2.05906608229571865811e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(30,1,'measured',6.21305098209967709976e+01,3.97635262854379334385e+01,2.27924621212121201107e+04,14304.0,'all',2,1.81772929690845259642e+01,3.75564916539796200822e+01,2.64290887739283775204e+00,2.0726507800126636738e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(31,1,'measured',6.22638933216944963095e+01,3.98488917258844779203e+01,2.25733181818181801651e+04,14112.0,'all',3,1.78052830352491788801e+01,37.8210465180981,2.6812877731160971173e+00,2.09279324812949596434e+01,0.0);
INSERT INTO "OCC_ACHIEVED" VALUES(32,1,'measured',6.16207820434833166691e+01,3.94373005078293203951e+01,2.32764318181818198345e+04,14560.0,'all',4,1.83870426317556265871e+01,3.6599603334677958343e+01,2.59065200078217161561e+00,2.03122126718761215609e+01,0.0);
CREATE TABLE OCC_CONTEXT (
  contextId          INTEGER PRIMARY KEY,
  deviceId           INTEGER NOT NULL,
  nullStreamId       INTEGER,
  parentContextId    INTEGER,          -- green context: its primary context; else 0
  isGreenContext     INTEGER NOT NULL,
  numMultiprocessors INTEGER           -- SMs of a green context; 0 for a regular context
);
INSERT INTO "OCC_CONTEXT" VALUES(1,0,7,0,0,0);
CREATE TABLE OCC_DEVICE (
  gpuId                       INTEGER PRIMARY KEY,  -- TARGET_INFO_GPU.id
  reservedSharedMemPerBlock   INTEGER,              -- CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
  maxThreadsPerMultiprocessor INTEGER,              -- CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
  isMigEnabled                INTEGER,
  gpuInstanceId               INTEGER,
  computeInstanceId           INTEGER,
  driverVersion               INTEGER               -- cuDriverGetVersion
);
INSERT INTO "OCC_DEVICE" VALUES(0,1024,2048,0,NULL,NULL,13000);
CREATE TABLE OCC_FUNCTION (
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
INSERT INTO "OCC_FUNCTION" VALUES(26,0,0,0,NULL,0,14,NULL);
INSERT INTO "OCC_FUNCTION" VALUES(26,1,0,0,NULL,0,10,NULL);
CREATE TABLE OCC_KERNEL_CONFIG (
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
INSERT INTO "OCC_KERNEL_CONFIG" VALUES(1,0,1,NULL,2,3,1,0,0,16,43691,1,1,96,1,1,0,0,0,155713536,0,0,NULL,0,0,0,0,0,1,0,0,0);
INSERT INTO "OCC_KERNEL_CONFIG" VALUES(2,0,1,NULL,2,3,1,0,0,16,32768,1,1,128,1,1,0,0,0,155713536,0,0,NULL,0,0,0,0,0,1,0,0,0);
INSERT INTO "OCC_KERNEL_CONFIG" VALUES(3,0,1,NULL,2,3,1,0,0,16,20972,1,1,200,1,1,0,0,0,155713536,0,0,NULL,0,0,0,0,0,1,0,0,0);
INSERT INTO "OCC_KERNEL_CONFIG" VALUES(4,0,1,NULL,2,3,1,0,0,16,16384,1,1,256,1,1,0,0,0,155713536,0,0,NULL,0,0,0,0,0,1,0,0,0);
INSERT INTO "OCC_KERNEL_CONFIG" VALUES(5,0,1,NULL,2,3,1,0,0,16,8192,1,1,512,1,1,0,0,0,155713536,0,0,NULL,0,0,0,0,0,1,0,0,0);
INSERT INTO "OCC_KERNEL_CONFIG" VALUES(6,0,1,NULL,2,3,1,0,0,16,4096,1,1,1024,1,1,0,0,0,155713536,0,0,NULL,0,0,0,0,0,1,0,0,0);
CREATE TABLE OCC_LAUNCH (
  start         INTEGER NOT NULL,  -- ns (CUPTI timestamp); 0 when the profiler replayed it
  duration      INTEGER NOT NULL,  -- ns, end - start
  configId      INTEGER NOT NULL,  -- OCC_KERNEL_CONFIG.id
  streamId      INTEGER NOT NULL,
  correlationId INTEGER NOT NULL
);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,1,7,3);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,1,7,4);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,1,7,5);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,1,7,6);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,1,7,7);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,2,7,8);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,2,7,9);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,2,7,10);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,2,7,11);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,2,7,12);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,3,7,13);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,3,7,14);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,3,7,15);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,3,7,16);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,3,7,17);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,4,7,18);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,4,7,19);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,4,7,20);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,4,7,21);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,4,7,22);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,5,7,23);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,5,7,24);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,5,7,25);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,5,7,26);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,5,7,27);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,6,7,28);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,6,7,29);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,6,7,30);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,6,7,31);
INSERT INTO "OCC_LAUNCH" VALUES(0,0,6,7,32);
CREATE TABLE OCC_META (
  name  TEXT PRIMARY KEY NOT NULL,
  value TEXT
);
INSERT INTO "OCC_META" VALUES('schema_version','1');
INSERT INTO "OCC_META" VALUES('occtrace_version','0.1.0');
INSERT INTO "OCC_META" VALUES('command_line','.gpu-stage/bin/membound_sweep');
INSERT INTO "OCC_META" VALUES('pid','515');
INSERT INTO "OCC_META" VALUES('host','vm');
INSERT INTO "OCC_META" VALUES('start_time_utc','2026-11-24T23:52:13Z');
INSERT INTO "OCC_META" VALUES('start_time_ns','1795564333009970941');
INSERT INTO "OCC_META" VALUES('setting_flush_period_ms','250');
INSERT INTO "OCC_META" VALUES('setting_buffer_bytes','4194304');
INSERT INTO "OCC_META" VALUES('setting_zeroed_buffers','1');
INSERT INTO "OCC_META" VALUES('setting_cupti_device_buffer_bytes','0');
INSERT INTO "OCC_META" VALUES('setting_cupti_device_buffers','0');
INSERT INTO "OCC_META" VALUES('setting_max_buffers','64');
INSERT INTO "OCC_META" VALUES('setting_max_record_age_ms','500');
INSERT INTO "OCC_META" VALUES('status','complete');
INSERT INTO "OCC_META" VALUES('launch_count','30');
INSERT INTO "OCC_META" VALUES('cupti_version','130001');
INSERT INTO "OCC_META" VALUES('cupti_api_version_compiled','130001');
INSERT INTO "OCC_META" VALUES('cuda_driver_version','13.0');
INSERT INTO "OCC_META" VALUES('cuda_runtime_version','unknown');
INSERT INTO "OCC_META" VALUES('setting_output_pattern','/tmp/occ-membound.kqKxzB/logs/membound/occtrace1.db');
INSERT INTO "OCC_META" VALUES('setting_force','0');
INSERT INTO "OCC_META" VALUES('output_path','/tmp/occ-membound.kqKxzB/logs/membound/occtrace1.db');
INSERT INTO "OCC_META" VALUES('subscriber_watch','0 call sites in 0 libraries');
INSERT INTO "OCC_META" VALUES('stale_forced_flushes','1');
INSERT INTO "OCC_META" VALUES('achieved_mode','all');
INSERT INTO "OCC_META" VALUES('achieved_status','ok');
INSERT INTO "OCC_META" VALUES('achieved_metrics','sm__warps_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,sm__cycles_active.avg,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed,sm__inst_issued.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active');
INSERT INTO "OCC_META" VALUES('achieved_chip','GH100');
INSERT INTO "OCC_META" VALUES('achieved_launches_measured','30');
INSERT INTO "OCC_META" VALUES('achieved_launches_not_measured','0');
INSERT INTO "OCC_META" VALUES('achieved_signatures_measured','6');
INSERT INTO "OCC_META" VALUES('achieved_signatures_seen','6');
INSERT INTO "OCC_META" VALUES('achieved_signature_cap','1048576');
INSERT INTO "OCC_META" VALUES('achieved_launches_over_signature_cap','0');
INSERT INTO "OCC_META" VALUES('achieved_samples_per_signature','1');
INSERT INTO "OCC_META" VALUES('achieved_sample_budget','0.050000');
INSERT INTO "OCC_META" VALUES('achieved_budget_applies','0');
INSERT INTO "OCC_META" VALUES('achieved_profiling_ns','836602098');
INSERT INTO "OCC_META" VALUES('achieved_setup_ns','0');
INSERT INTO "OCC_META" VALUES('achieved_background_setup','1');
INSERT INTO "OCC_META" VALUES('achieved_background_setup_ns','825790555');
INSERT INTO "OCC_META" VALUES('achieved_budget_pauses','0');
INSERT INTO "OCC_META" VALUES('achieved_sample_burst_ms','1000');
INSERT INTO "OCC_META" VALUES('achieved_idle_park_s','0.200000');
INSERT INTO "OCC_META" VALUES('achieved_parks','0');
INSERT INTO "OCC_META" VALUES('achieved_unparks','0');
INSERT INTO "OCC_META" VALUES('achieved_park_deinit','0');
INSERT INTO "OCC_META" VALUES('achieved_phase_ms','start=0.0,launch=832.8,stop=0.0,decode=0.2,evaluate=2.8,reset=0.7');
INSERT INTO "OCC_META" VALUES('achieved_profiler_session_ends','0');
INSERT INTO "OCC_META" VALUES('achieved_skipped_for_budget','0');
INSERT INTO "OCC_META" VALUES('achieved_context_wait_timeouts','0');
INSERT INTO "OCC_META" VALUES('kernel_count','1');
INSERT INTO "OCC_META" VALUES('config_count','6');
INSERT INTO "OCC_META" VALUES('achieved_count','30');
INSERT INTO "OCC_META" VALUES('dropped_records','0');
INSERT INTO "OCC_META" VALUES('records_lost_write_error','0');
INSERT INTO "OCC_META" VALUES('incomplete_kernel_records','0');
INSERT INTO "OCC_META" VALUES('achieved_lost_write_error','0');
INSERT INTO "OCC_META" VALUES('refused_buffer_requests','0');
INSERT INTO "OCC_META" VALUES('unserialized_flushes','0');
INSERT INTO "OCC_META" VALUES('cubin_modules_parsed','1');
INSERT INTO "OCC_META" VALUES('cubin_modules_skipped','0');
INSERT INTO "OCC_META" VALUES('cubin_modules_dropped','0');
INSERT INTO "OCC_META" VALUES('function_count','2');
INSERT INTO "OCC_META" VALUES('foreign_activity_records','0');
INSERT INTO "OCC_META" VALUES('end_time_ns','1795564335057765574');
CREATE TABLE OCC_MODULE (
  moduleId INTEGER PRIMARY KEY,  -- CUpti_ModuleResourceData.moduleId (= OCC_FUNCTION.moduleId)
  library  TEXT                  -- shared object whose mapped image held the module (dladdr);
                                 -- NULL: loaded from memory (JIT, Triton, a compressed fatbin)
);
INSERT INTO "OCC_MODULE"(moduleId,library) VALUES(26,NULL);
CREATE TABLE OCC_TRITON_KERNEL (
  mangledName INTEGER PRIMARY KEY,  -- StringIds.id of the kernel name (Triton names are unmangled)
  numWarps    INTEGER,
  numStages   INTEGER,
  numCtas     INTEGER,
  sharedBytes INTEGER,
  cacheFile   TEXT                  -- the JSON it came from
);
CREATE TABLE StringIds (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT INTO "StringIds" VALUES(0,'_Z8l2_flushP5uint4m');
INSERT INTO "StringIds" VALUES(1,'_Z5saxpyifPKfPf');
INSERT INTO "StringIds" VALUES(2,'saxpy(int, float, float const*, float*)');
INSERT INTO "StringIds" VALUES(3,'saxpy');
CREATE TABLE TARGET_INFO_CUDA_DEVICE (
  gpuId              INTEGER NOT NULL,  -- TARGET_INFO_GPU.id
  cudaId             INTEGER NOT NULL,  -- CUDA ordinal = kernel deviceId
  pid                INTEGER,
  uuid               TEXT,
  numMultiprocessors INTEGER
);
INSERT INTO "TARGET_INFO_CUDA_DEVICE" VALUES(0,0,515,'GPU-1998eef4-41b9-788c-e978-4c87d9b9b2bb',132);
CREATE TABLE TARGET_INFO_GPU (
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
INSERT INTO "TARGET_INFO_GPU" VALUES(0,0,'NVIDIA H100 80GB HBM3','0000:00:06.0',1,52428800,85017493504,3352320000000,1980000000,132,NULL,'GPU-1998eef4-41b9-788c-e978-4c87d9b9b2bb',NULL,'GH100',0,NULL,NULL,NULL,NULL,65536,4294967295,65536,49152,232448,233472,65536,32,3,64,32,1024,1024,1024,64,2147483647,65535,65535,9,0,9,0,NULL);
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
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
  c.id                                 AS occConfigId
FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId;
COMMIT;
