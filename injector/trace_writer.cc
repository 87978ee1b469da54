#include "injector/trace_writer.h"

#include <time.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "injector/errors.h"
#include "injector/kernel_names.h"
#include "kInjectorTraceSchemaSql.h"

namespace occ::inj {
namespace {

constexpr char kLaunchColumns[] = "INSERT INTO OCC_LAUNCH(start,duration,configId,streamId,correlationId) VALUES ";

std::string LaunchInsertSql(size_t rows) {
  std::string sql = kLaunchColumns;
  for (size_t i = 0; i < rows; ++i) sql += i == 0 ? "(?,?,?,?,?)" : ",(?,?,?,?,?)";
  return sql;
}

std::string UuidString(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

void BindOptional(SqliteStatement& stmt, int index, int64_t value) {
  if (value < 0) {
    stmt.BindNull(index);
  } else {
    stmt.Bind(index, value);
  }
}

}  // namespace

TraceWriter::~TraceWriter() {
  if (db_.get() != nullptr && !failed_) Close();
}

bool TraceWriter::Fail() {
  // The failing SQLite call already printed its one "...; tracing off" line (errors.h).
  if (!failed_) {
    // No COMMIT follows a failure (SQLite may already have rolled the transaction back; Close
    // does otherwise), so everything added since the last one is lost: count it.
    stats_.records_lost += uncommitted_records_;
    stats_.achieved_lost += uncommitted_achieved_;
    stats_.launches -= uncommitted_launches_;
    stats_.achieved -= uncommitted_achieved_;
  }
  uncommitted_records_ = uncommitted_launches_ = uncommitted_achieved_ = 0;
  failed_ = true;
  return false;
}

bool TraceWriter::AcceptRecord() {
  if (failed_) {
    ++stats_.records_lost;
    return false;
  }
  ++uncommitted_records_;
  return true;
}

bool TraceWriter::Open(const std::string& path) {
  path_ = path;
  if (!db_.Open(path)) return Fail();
  // WAL + synchronous=NORMAL: a commit is durable against the process dying (SIGKILL,
  // os._exit) without an fsync per commit; only a power loss can drop the last commits.
  // Readers (occ-report on a live trace) do not block the writer.
  const bool ok = db_.Exec("PRAGMA journal_mode=WAL;") && db_.Exec("PRAGMA synchronous=NORMAL;") &&
                  db_.Exec("PRAGMA cache_size=-16384;") &&
                  db_.Exec(std::string(kInjectorTraceSchemaSql).c_str()) && PrepareStatements() &&
                  db_.Exec("BEGIN");
  if (!ok) return Fail();
  in_transaction_ = true;
  pending_launches_.reserve(kLaunchBatchRows);
  // The schema and its version travel together: readers refuse files without it.
  SetMeta("schema_version", kTraceSchemaVersion);
  return !failed_;
}

bool TraceWriter::PrepareStatements() {
  sqlite3* db = db_.get();
  return insert_string_.Prepare(db, "INSERT INTO StringIds(id,value) VALUES(?,?)") &&
         insert_config_.Prepare(
             db,
             "INSERT INTO OCC_KERNEL_CONFIG(id,deviceId,contextId,greenContextId,demangledName,"
             "shortName,mangledName,launchType,cacheConfig,registersPerThread,gridX,gridY,gridZ,"
             "blockX,blockY,blockZ,staticSharedMemory,dynamicSharedMemory,localMemoryPerThread,"
             "localMemoryTotal,sharedMemoryExecuted,sharedMemoryLimitConfig,"
             "sharedMemoryRequestedPercentage,graphId,graphNodeId,clusterX,clusterY,clusterZ,"
             "clusterSchedulingPolicy,maxPotentialClusterSize,maxActiveClusters,isDeviceLaunched)"
             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)") &&
         insert_launch_.Prepare(db, LaunchInsertSql(1)) &&
         insert_launch_batch_.Prepare(db, LaunchInsertSql(kLaunchBatchRows)) &&
         upsert_meta_.Prepare(db,
                              "INSERT INTO OCC_META(name,value) VALUES(?,?) "
                              "ON CONFLICT(name) DO UPDATE SET value=excluded.value") &&
         insert_achieved_.Prepare(
             db,
             "INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,"
             "warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex,"
             "dramThroughputPct,l2ThroughputPct,l1ThroughputPct,issueSlotsPct,tensorPipePct)"
             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)") &&
         upsert_gpu_.Prepare(
             db,
             "INSERT OR REPLACE INTO TARGET_INFO_GPU(vmId,id,name,busLocation,isDiscrete,"
             "l2CacheSize,totalMemory,memoryBandwidth,clockRate,smCount,uuid,chipName,cuDevice,"
             "constantMemory,maxIPC,maxRegistersPerBlock,maxShmemPerBlock,maxShmemPerBlockOptin,"
             "maxShmemPerSm,maxRegistersPerSm,threadsPerWarp,asyncEngines,maxWarpsPerSm,"
             "maxBlocksPerSm,maxThreadsPerBlock,maxBlockDimX,maxBlockDimY,maxBlockDimZ,"
             "maxGridDimX,maxGridDimY,maxGridDimZ,computeMajor,computeMinor,smMajor,smMinor,"
             "numaNodeId) VALUES(0,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
             "?,?,?,?,?)") &&
         delete_cuda_device_.Prepare(db, "DELETE FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId=?") &&
         insert_cuda_device_.Prepare(
             db,
             "INSERT INTO TARGET_INFO_CUDA_DEVICE(gpuId,cudaId,pid,uuid,numMultiprocessors)"
             " VALUES(?,?,(SELECT CAST(value AS INTEGER) FROM OCC_META WHERE name='pid'),?,?)") &&
         upsert_occ_device_.Prepare(
             db,
             "INSERT OR REPLACE INTO OCC_DEVICE(gpuId,reservedSharedMemPerBlock,"
             "maxThreadsPerMultiprocessor,isMigEnabled,gpuInstanceId,computeInstanceId,"
             "driverVersion) VALUES(?,?,?,?,?,?,?)") &&
         upsert_context_.Prepare(
             db,
             "INSERT OR REPLACE INTO OCC_CONTEXT(contextId,deviceId,nullStreamId,parentContextId,"
             "isGreenContext,numMultiprocessors) VALUES(?,?,?,?,?,?)") &&
         upsert_function_.Prepare(
             db,
             "INSERT OR REPLACE INTO OCC_FUNCTION(moduleId,mangledName,localMemoryPerThread,"
             "minStackSize,maxStackSize,barrierCount,registersPerThread,maxThreadsPerBlock)"
             " VALUES(?,?,?,?,?,?,?,?)") &&
         upsert_module_.Prepare(db, "INSERT OR REPLACE INTO OCC_MODULE(moduleId,library) VALUES(?,?)") &&
         // SQLite's JSON functions read Triton's metadata; json_valid keeps a malformed file
         // from failing the statement (which would turn the writer off).
         upsert_triton_.Prepare(
             db,
             "INSERT OR REPLACE INTO OCC_TRITON_KERNEL(mangledName,numWarps,numStages,numCtas,"
             "sharedBytes,cacheFile) SELECT ?1, json_extract(j,'$.num_warps'),"
             " json_extract(j,'$.num_stages'), json_extract(j,'$.num_ctas'),"
             " json_extract(j,'$.shared'), ?3 FROM (SELECT CASE WHEN json_valid(?2) THEN ?2"
             " ELSE '{}' END AS j)");
}

void TraceWriter::AddBuffer(uint8_t* buffer, size_t valid_size) {
  // Also once failed: each record is then counted as lost (AcceptRecord).
  ForEachActivity(buffer, valid_size, [this](const CUpti_Activity& record) { AddRecord(record); });
}

void TraceWriter::AddRecord(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:  // same struct; only another client would enable it
      AddKernel(reinterpret_cast<const ActivityKernel&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      AddDevice(reinterpret_cast<const ActivityDevice&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      AddContext(reinterpret_cast<const ActivityContext&>(record));
      break;
    default:
      ++stats_.other_records;
      break;
  }
}

int64_t TraceWriter::InternString(const std::string& value) {
  auto [it, inserted] = string_ids_.try_emplace(value, static_cast<int64_t>(string_ids_.size()));
  if (inserted) {
    insert_string_.Bind(1, it->second);
    insert_string_.BindText(2, it->first);
    if (!insert_string_.Run()) Fail();
  }
  return it->second;
}

int64_t TraceWriter::InternKernelName(const char* mangled) {
  if (mangled == nullptr) mangled = "<unknown>";
  // Fast path: CUPTI hands every record of a kernel the same name pointer. The stored copy
  // guards against an address reused for another name after a module unload.
  auto cached = names_by_pointer_.find(mangled);
  if (cached != names_by_pointer_.end() &&
      std::strcmp(cached->second.mangled.c_str(), mangled) == 0) {
    return cached->second.mangled_id;
  }
  std::string name(mangled);
  auto known = mangled_ids_.find(name);
  int64_t mangled_id = 0;
  if (known != mangled_ids_.end()) {
    mangled_id = known->second;
  } else {
    mangled_id = InternString(name);
    mangled_ids_.emplace(name, mangled_id);
    // The other name forms, computed once per kernel name.
    KernelNames names = MakeKernelNames(name);
    name_forms_[mangled_id] = NameForms{InternString(names.demangled), InternString(names.short_name)};
    ++stats_.kernels;
  }
  names_by_pointer_[mangled] = NameEntry{std::move(name), mangled_id};
  return mangled_id;
}

int64_t TraceWriter::InternConfig(const KernelConfigKey& key) {
  auto [it, inserted] = config_ids_.try_emplace(key, static_cast<int64_t>(config_ids_.size()) + 1);
  if (!inserted) return it->second;
  ++stats_.configs;
  const NameForms& forms = name_forms_[key.mangled_name_id];

  SqliteStatement& s = insert_config_;
  int i = 0;
  s.Bind(++i, it->second);
  s.Bind(++i, key.device_id);
  s.Bind(++i, key.context_id);
  BindOptional(s, ++i, key.is_green_context != 0 ? int64_t{key.context_id} : -1);
  s.Bind(++i, forms.demangled_id);
  s.Bind(++i, forms.short_id);
  s.Bind(++i, key.mangled_name_id);
  s.Bind(++i, key.launch_type);
  s.Bind(++i, key.cache_config);
  s.Bind(++i, key.registers_per_thread);
  for (int32_t g : key.grid) s.Bind(++i, g);
  for (int32_t b : key.block) s.Bind(++i, b);
  s.Bind(++i, key.static_shared_memory);
  s.Bind(++i, key.dynamic_shared_memory);
  s.Bind(++i, key.local_memory_per_thread);
  s.Bind(++i, static_cast<int64_t>(key.local_memory_total));
  s.Bind(++i, key.shared_memory_executed);
  s.Bind(++i, key.shared_memory_limit_config);
  BindOptional(s, ++i, key.shared_memory_requested_pct);
  s.Bind(++i, key.graph_id);
  s.Bind(++i, static_cast<int64_t>(key.graph_node_id));
  for (uint32_t c : key.cluster) s.Bind(++i, c);
  s.Bind(++i, key.cluster_scheduling_policy);
  s.Bind(++i, key.max_potential_cluster_size);
  s.Bind(++i, key.max_active_clusters);
  s.Bind(++i, key.is_device_launched);
  if (!s.Run()) Fail();
  return it->second;
}

void TraceWriter::AddKernel(const ActivityKernel& kernel) {
  if (!AcceptRecord()) return;
  KernelConfigKey key = MakeKernelConfigKey(kernel);
  key.mangled_name_id = InternKernelName(kernel.name);
  if (failed_) return;  // counted as lost by Fail()
  if (key.local_memory_per_thread == 0) {
    // CUPTI (CUDA 13) reports 0 even for kernels with 1 KiB of local memory per thread: the
    // cubin's frame size (ptxas "bytes stack frame"; tests/injector/gpu_check compares it
    // with cudaFuncGetAttributes' localSizeBytes) stands in.
    auto cubin = cubin_local_memory_.find(key.mangled_name_id);
    if (cubin != cubin_local_memory_.end()) {
      key.local_memory_per_thread = static_cast<uint32_t>(cubin->second);
    }
  }
  auto green = green_contexts_.find(kernel.contextId);
  if (green != green_contexts_.end() && green->second) {
    key.is_green_context = 1;
  }
  const int64_t config_id = InternConfig(key);
  if (failed_) return;  // counted as lost by Fail()
  // start = end = 0: the range profiler replayed this launch and CUPTI has no timestamps.
  // start set but no end (end 0 or before start): a forced flush handed the record back while
  // the kernel still ran, and CUPTI never sends it again. Both keep the launch with duration 0;
  // the reader tells them apart by start.
  const bool has_end = kernel.end >= kernel.start && (kernel.end != 0 || kernel.start == 0);
  if (!has_end) ++stats_.incomplete_kernels;
  const int64_t duration = has_end ? static_cast<int64_t>(kernel.end - kernel.start) : 0;
  pending_launches_.push_back(LaunchRow{static_cast<int64_t>(kernel.start), duration, config_id,
                                        kernel.streamId, kernel.correlationId});
  ++stats_.launches;
  ++uncommitted_launches_;
  if (pending_launches_.size() == kLaunchBatchRows) FlushLaunches();
}

void TraceWriter::FlushLaunches() {
  if (failed_) return;
  size_t done = 0;
  while (pending_launches_.size() - done >= kLaunchBatchRows) {
    int i = 0;
    for (size_t r = done; r < done + kLaunchBatchRows; ++r) {
      const LaunchRow& row = pending_launches_[r];
      insert_launch_batch_.Bind(++i, row.start);
      insert_launch_batch_.Bind(++i, row.duration);
      insert_launch_batch_.Bind(++i, row.config_id);
      insert_launch_batch_.Bind(++i, row.stream_id);
      insert_launch_batch_.Bind(++i, row.correlation_id);
    }
    if (!insert_launch_batch_.Run()) {
      Fail();
      return;
    }
    done += kLaunchBatchRows;
  }
  for (size_t r = done; r < pending_launches_.size(); ++r) {
    const LaunchRow& row = pending_launches_[r];
    insert_launch_.Bind(1, row.start);
    insert_launch_.Bind(2, row.duration);
    insert_launch_.Bind(3, row.config_id);
    insert_launch_.Bind(4, row.stream_id);
    insert_launch_.Bind(5, row.correlation_id);
    if (!insert_launch_.Run()) {
      Fail();
      return;
    }
  }
  pending_launches_.clear();
}

void TraceWriter::AddDevice(const ActivityDevice& device) {
  if (!AcceptRecord()) return;
  DeviceState& state = devices_[device.id];
  state.record = device;
  // Device5.name is documented as owned by the client; it is copied here and deliberately not
  // freed (its allocator is CUPTI's business; a few bytes per device).
  state.name = device.name != nullptr ? device.name : "";
  state.record->name = nullptr;
  WriteDevice(device.id);
}

void TraceWriter::AddDeviceExtras(const DeviceExtras& extras) {
  if (failed_) return;
  devices_[extras.device_id].extras = extras;
  WriteDevice(extras.device_id);
}

void TraceWriter::WriteDevice(uint32_t device_id) {
  const DeviceState& state = devices_[device_id];
  if (!state.record) return;  // written once the DEVICE record arrives
  const ActivityDevice& d = *state.record;
  const DeviceExtras none;
  const DeviceExtras& x = state.extras ? *state.extras : none;
  const std::string uuid = UuidString(d.uuid);

  SqliteStatement& g = upsert_gpu_;
  int i = 0;
  g.Bind(++i, d.id);
  g.BindText(++i, state.name);
  if (x.bus_location.empty()) g.BindNull(++i); else g.BindText(++i, x.bus_location);
  BindOptional(g, ++i, x.integrated < 0 ? -1 : (x.integrated == 0 ? 1 : 0));
  g.Bind(++i, d.l2CacheSize);
  g.Bind(++i, static_cast<int64_t>(d.globalMemorySize));
  g.Bind(++i, static_cast<int64_t>(d.globalMemoryBandwidth) * 1000);  // CUPTI: KB/s; nsys: B/s
  g.Bind(++i, static_cast<int64_t>(d.coreClockRate) * 1000);          // CUPTI: kHz; nsys: Hz
  g.Bind(++i, d.numMultiprocessors);
  g.BindText(++i, uuid);
  if (x.chip_name.empty()) g.BindNull(++i); else g.BindText(++i, x.chip_name);
  g.Bind(++i, d.id);
  g.Bind(++i, d.constantMemorySize);
  g.Bind(++i, d.maxIPC);
  g.Bind(++i, d.maxRegistersPerBlock);
  g.Bind(++i, d.maxSharedMemoryPerBlock);
  BindOptional(g, ++i, x.max_shared_memory_per_block_optin);
  g.Bind(++i, d.maxSharedMemoryPerMultiprocessor);
  g.Bind(++i, d.maxRegistersPerMultiprocessor);
  g.Bind(++i, d.numThreadsPerWarp);
  BindOptional(g, ++i, x.async_engines);
  g.Bind(++i, d.maxWarpsPerMultiprocessor);
  g.Bind(++i, d.maxBlocksPerMultiprocessor);
  g.Bind(++i, d.maxThreadsPerBlock);
  g.Bind(++i, d.maxBlockDimX);
  g.Bind(++i, d.maxBlockDimY);
  g.Bind(++i, d.maxBlockDimZ);
  g.Bind(++i, d.maxGridDimX);
  g.Bind(++i, d.maxGridDimY);
  g.Bind(++i, d.maxGridDimZ);
  g.Bind(++i, d.computeCapabilityMajor);
  g.Bind(++i, d.computeCapabilityMinor);
  g.Bind(++i, d.computeCapabilityMajor);
  g.Bind(++i, d.computeCapabilityMinor);
  if (d.isNumaNode != 0) g.Bind(++i, d.numaId); else g.BindNull(++i);
  bool ok = g.Run();

  delete_cuda_device_.Bind(1, d.id);
  ok = ok && delete_cuda_device_.Run();
  insert_cuda_device_.Bind(1, d.id);
  insert_cuda_device_.Bind(2, d.id);
  insert_cuda_device_.BindText(3, uuid);
  insert_cuda_device_.Bind(4, d.numMultiprocessors);
  ok = ok && insert_cuda_device_.Run();

  SqliteStatement& o = upsert_occ_device_;
  o.Bind(1, d.id);
  BindOptional(o, 2, x.reserved_shared_memory_per_block);
  BindOptional(o, 3, x.max_threads_per_multiprocessor);
  o.Bind(4, d.isMigEnabled);
  // Without MIG, CUPTI reports the instance ids as 0xFFFFFFFF (seen on H100): store NULL.
  BindOptional(o, 5, d.isMigEnabled != 0 ? static_cast<int64_t>(d.gpuInstanceId) : -1);
  BindOptional(o, 6, d.isMigEnabled != 0 ? static_cast<int64_t>(d.computeInstanceId) : -1);
  BindOptional(o, 7, x.driver_version);
  ok = ok && o.Run();
  if (!ok) Fail();
}

void TraceWriter::AddContext(const ActivityContext& context) {
  if (!AcceptRecord()) return;
  green_contexts_[context.contextId] = context.isGreenContext != 0;
  SqliteStatement& s = upsert_context_;
  s.Bind(1, context.contextId);
  s.Bind(2, context.deviceId);
  s.Bind(3, context.nullStreamId);
  s.Bind(4, context.parentContextId);
  s.Bind(5, context.isGreenContext);
  s.Bind(6, context.numMultiprocessors);
  if (!s.Run()) Fail();
}

void TraceWriter::AddAchieved(const AchievedSample& sample) {
  if (failed_) {
    ++stats_.achieved_lost;
    return;
  }
  SqliteStatement& s = insert_achieved_;
  s.Bind(1, sample.correlation_id);
  s.Bind(2, sample.context_id);
  s.BindText(3, sample.status);
  auto bind_value = [&s](int index, double value) {
    if (value < 0) s.BindNull(index); else s.BindDouble(index, value);
  };
  bind_value(4, sample.achieved_occupancy_pct);
  bind_value(5, sample.warps_active_per_cycle);
  bind_value(6, sample.sm_cycles_active);
  bind_value(7, sample.gpu_time_ns);
  s.BindText(8, sample.policy);
  s.Bind(9, sample.sample_index);
  bind_value(10, sample.dram_throughput_pct);
  bind_value(11, sample.l2_throughput_pct);
  bind_value(12, sample.l1_throughput_pct);
  bind_value(13, sample.issue_slots_pct);
  bind_value(14, sample.tensor_pipe_pct);
  ++stats_.achieved;
  ++uncommitted_achieved_;
  if (!s.Run()) Fail();
}

void TraceWriter::SetTritonCacheRoots(std::vector<std::string> roots) {
  if (roots.empty()) {
    triton_cache_.reset();
  } else {
    triton_cache_.emplace(std::move(roots));
  }
}

void TraceWriter::AddModule(uint32_t module_id, const std::vector<uint8_t>& image, const std::string& library) {
  if (failed_) return;
  upsert_module_.Bind(1, module_id);
  if (library.empty()) {
    upsert_module_.BindNull(2);
  } else {
    upsert_module_.BindText(2, library);
  }
  if (!upsert_module_.Run()) {
    Fail();
    return;
  }
  CubinParseResult parsed = ParseCubin(image.data(), image.size());
  if (!parsed.ok) {
    // Not every module image is a plain cubin (PTX JIT output is, but a compressed or foreign
    // image is not); its kernels are still traced, only without OCC_FUNCTION facts.
    constexpr uint64_t kWarnedModules = 3;
    if (++stats_.modules_skipped <= kWarnedModules) {
      LogLine("module %u (%zu bytes): %s; no per-function facts for it%s", module_id,
              image.size(), parsed.error.c_str(),
              stats_.modules_skipped == kWarnedModules ? " (further such modules counted silently)" : "");
    }
    return;
  }
  ++stats_.modules_parsed;
  for (const CubinFunction& function : parsed.functions) {
    const int64_t name_id = InternString(function.mangled_name);
    if (function.frame_size >= 0) cubin_local_memory_[name_id] = function.frame_size;
    SqliteStatement& s = upsert_function_;
    s.Bind(1, module_id);
    s.Bind(2, name_id);
    BindOptional(s, 3, function.frame_size);
    BindOptional(s, 4, function.min_stack_size);
    BindOptional(s, 5, function.max_stack_size);
    BindOptional(s, 6, function.barrier_count);
    BindOptional(s, 7, function.registers);
    BindOptional(s, 8, function.max_threads_per_block);
    if (!s.Run()) {
      Fail();
      return;
    }
    ++stats_.functions;
    AddTritonMetadata(name_id, function.mangled_name);
    if (failed_) return;
  }
}

void TraceWriter::AddTritonMetadata(int64_t name_id, const std::string& name) {
  if (!triton_cache_ || !TritonCacheIndex::MayBeTritonName(name)) return;
  auto [entry, first_time] = triton_looked_up_.try_emplace(name_id, false);
  if (!first_time && entry->second) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const std::optional<std::string> json_path =
      triton_cache_->Find(name, int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec);
  if (!json_path) return;
  const std::optional<std::string> json = ReadSmallFile(*json_path);
  if (!json) return;
  upsert_triton_.Bind(1, name_id);
  upsert_triton_.BindText(2, *json);
  upsert_triton_.BindText(3, *json_path);
  if (!upsert_triton_.Run()) {
    Fail();
    return;
  }
  entry->second = true;
  ++stats_.triton_kernels;
}

void TraceWriter::SetMeta(std::string_view name, std::string_view value) {
  if (failed_) return;
  upsert_meta_.BindText(1, name);
  upsert_meta_.BindText(2, value);
  if (!upsert_meta_.Run()) Fail();
}

bool TraceWriter::Commit() {
  if (failed_ || db_.get() == nullptr) return false;
  FlushLaunches();
  if (failed_) return false;
  if (in_transaction_ && !db_.Exec("COMMIT")) return Fail();
  in_transaction_ = false;
  uncommitted_records_ = uncommitted_launches_ = uncommitted_achieved_ = 0;
  if (!db_.Exec("BEGIN")) return Fail();
  in_transaction_ = true;
  return true;
}

bool TraceWriter::Close() {
  if (db_.get() == nullptr) return !failed_;
  bool ok = !failed_;
  if (ok) {
    FlushLaunches();
    ok = !failed_ && (!in_transaction_ || db_.Exec("COMMIT"));
    in_transaction_ = false;
    if (ok) uncommitted_records_ = uncommitted_launches_ = uncommitted_achieved_ = 0;
    // Fold the WAL into the main file: one self-contained .db to copy around. Failing here
    // (a reader holds the WAL) loses nothing: the WAL stays next to the file.
    if (ok) static_cast<void>(db_.Exec("PRAGMA journal_mode=DELETE;"));
  }
  // Statements first: sqlite3_close_v2 would otherwise keep the connection as a zombie.
  for (SqliteStatement* s : {&insert_string_, &insert_config_, &insert_launch_,
                             &insert_launch_batch_, &upsert_meta_, &insert_achieved_, &upsert_gpu_,
                             &delete_cuda_device_, &insert_cuda_device_, &upsert_occ_device_,
                             &upsert_context_, &upsert_function_, &upsert_module_, &upsert_triton_}) {
    *s = SqliteStatement();
  }
  db_.Close();
  if (!ok) Fail();
  return ok;
}

bool TraceWriter::WriteMetaAfterFailure(const std::vector<std::pair<std::string, std::string>>& rows) {
  Close();
  if (path_.empty()) return false;
  // Raw calls, not errors.h: failing here is the expected outcome when the cause persists
  // (it was reported when it happened), and the caller says whether this worked.
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  if (opened != SQLITE_OK) return false;
  // A lock held by another connection (the usual transient cause) gets a short grace period;
  // this runs at exit, so never long.
  constexpr int kBusyTimeoutMs = 500;
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  if (sqlite3_exec(db.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) return false;
  sqlite3_stmt* raw_stmt = nullptr;
  constexpr char kUpsert[] =
      "INSERT INTO OCC_META(name,value) VALUES(?,?) ON CONFLICT(name) DO UPDATE SET value=excluded.value";
  if (sqlite3_prepare_v2(db.get(), kUpsert, -1, &raw_stmt, nullptr) != SQLITE_OK) return false;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw_stmt, sqlite3_finalize);
  for (const auto& [name, value] : rows) {
    sqlite3_bind_text(stmt.get(), 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
    sqlite3_bind_text(stmt.get(), 2, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(stmt.get());
    sqlite3_reset(stmt.get());
    if (rc != SQLITE_DONE) return false;  // closing the connection rolls back
  }
  stmt.reset();
  if (sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return false;
  // As Close(): one self-contained file when no reader holds the WAL.
  static_cast<void>(sqlite3_exec(db.get(), "PRAGMA journal_mode=DELETE;", nullptr, nullptr, nullptr));
  return true;
}

}  // namespace occ::inj
