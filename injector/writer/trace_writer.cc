#include "injector/writer/trace_writer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string_view>

#include "injector/common/errors.h"
#include "injector/writer/kernel_names.h"
#include "kInjectorTraceSchemaSql.h"
#include "schema/meta_keys.h"

namespace occ::inj {
namespace {

// UndeclaredMetaKeysWritten's list. Taken only for an undeclared key, which a correct build
// never writes.
std::mutex g_undeclared_mutex;
std::vector<std::string>& UndeclaredMetaKeys() {
  static auto* keys = new std::vector<std::string>;  // never destroyed: writers may run at exit
  return *keys;
}

constexpr char kUpsertMetaSql[] =
    "INSERT INTO OCC_META(name,value) VALUES(?,?) "
    "ON CONFLICT(name) DO UPDATE SET value=excluded.value";
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

// Binds are not checked one by one: a failed bind stays with its statement, whose Run()
// returns it, and every Run() is checked (OCC_SQL_OK). These drop the per-bind Status.
void Bind(sql::Stmt& stmt, int index, int64_t value) { static_cast<void>(stmt.BindInt64(index, value)); }
void BindDouble(sql::Stmt& stmt, int index, double value) {
  static_cast<void>(stmt.BindDouble(index, value));
}
void BindNull(sql::Stmt& stmt, int index) { static_cast<void>(stmt.BindNull(index)); }
// SQLITE_STATIC: every text bound here outlives the Run() that follows.
void BindText(sql::Stmt& stmt, int index, std::string_view text) {
  static_cast<void>(stmt.BindTextStatic(index, text));
}
void BindOptional(sql::Stmt& stmt, int index, int64_t value) {
  if (value < 0) {
    BindNull(stmt, index);
  } else {
    Bind(stmt, index, value);
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
    stats_.pm_samples -= uncommitted_pm_samples_;
    stats_.pm_samples_lost += uncommitted_pm_samples_;
  }
  uncommitted_records_ = uncommitted_launches_ = uncommitted_achieved_ = uncommitted_pm_samples_ = 0;
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
  if (!OCC_SQL_ASSIGN(db_, sql::Db::Create(path, /*replace=*/false))) return Fail();
  // WAL + synchronous=NORMAL: a commit is durable against the process dying (SIGKILL,
  // os._exit) without an fsync per commit; only a power loss can drop the last commits.
  // Readers (occ-report on a live trace) do not block the writer.
  const bool ok =
      OCC_SQL_OK(db_.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;")) &&
      OCC_SQL_OK(db_.Exec(kInjectorTraceSchemaSql)) && PrepareStatements() && OCC_SQL_OK(db_.Exec("BEGIN"));
  if (!ok) return Fail();
  in_transaction_ = true;
  pending_launches_.reserve(kLaunchBatchRows);
  // The schema and its version travel together: readers refuse files without it.
  SetMeta("schema_version", kTraceSchemaVersion);
  return !failed_;
}

bool TraceWriter::Prepare(sql::Stmt* stmt, std::string_view sql_text) {
  // Kept for the whole trace and run once per row: persistent.
  return OCC_SQL_ASSIGN(*stmt, db_.PreparePersistent(sql_text));
}

bool TraceWriter::PrepareStatements() {
  return Prepare(&insert_string_, "INSERT INTO StringIds(id,value) VALUES(?,?)") &&
         Prepare(&insert_config_,
             "INSERT INTO OCC_KERNEL_CONFIG(id,deviceId,contextId,greenContextId,demangledName,"
             "shortName,mangledName,launchType,cacheConfig,registersPerThread,gridX,gridY,gridZ,"
             "blockX,blockY,blockZ,staticSharedMemory,dynamicSharedMemory,localMemoryPerThread,"
             "localMemoryTotal,sharedMemoryExecuted,sharedMemoryLimitConfig,"
             "sharedMemoryRequestedPercentage,graphId,graphNodeId,clusterX,clusterY,clusterZ,"
             "clusterSchedulingPolicy,maxPotentialClusterSize,maxActiveClusters,isDeviceLaunched)"
             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)") &&
         Prepare(&insert_launch_, LaunchInsertSql(1)) &&
         Prepare(&insert_launch_batch_, LaunchInsertSql(kLaunchBatchRows)) &&
         Prepare(&upsert_meta_, kUpsertMetaSql) &&
         Prepare(&insert_achieved_,
             "INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,"
             "warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex,"
             "dramThroughputPct,l2ThroughputPct,l1ThroughputPct,issueSlotsPct,tensorPipePct)"
             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)") &&
         Prepare(&insert_pm_sample_,
             "INSERT INTO OCC_PM_SAMPLE(deviceId,start,\"end\",smCyclesActive,warpsActive,dramThroughputPct)"
             " VALUES(?,?,?,?,?,?)") &&
         Prepare(&upsert_gpu_,
             "INSERT OR REPLACE INTO TARGET_INFO_GPU(vmId,id,name,busLocation,isDiscrete,"
             "l2CacheSize,totalMemory,memoryBandwidth,clockRate,smCount,uuid,chipName,cuDevice,"
             "constantMemory,maxIPC,maxRegistersPerBlock,maxShmemPerBlock,maxShmemPerBlockOptin,"
             "maxShmemPerSm,maxRegistersPerSm,threadsPerWarp,asyncEngines,maxWarpsPerSm,"
             "maxBlocksPerSm,maxThreadsPerBlock,maxBlockDimX,maxBlockDimY,maxBlockDimZ,"
             "maxGridDimX,maxGridDimY,maxGridDimZ,computeMajor,computeMinor,smMajor,smMinor,"
             "numaNodeId) VALUES(0,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
             "?,?,?,?,?)") &&
         Prepare(&delete_cuda_device_, "DELETE FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId=?") &&
         Prepare(&insert_cuda_device_,
             "INSERT INTO TARGET_INFO_CUDA_DEVICE(gpuId,cudaId,pid,uuid,numMultiprocessors)"
             " VALUES(?,?,(SELECT CAST(value AS INTEGER) FROM OCC_META WHERE name='pid'),?,?)") &&
         Prepare(&upsert_occ_device_,
             "INSERT OR REPLACE INTO OCC_DEVICE(gpuId,reservedSharedMemPerBlock,"
             "maxThreadsPerMultiprocessor,isMigEnabled,gpuInstanceId,computeInstanceId,"
             "driverVersion) VALUES(?,?,?,?,?,?,?)") &&
         Prepare(&upsert_context_,
             "INSERT OR REPLACE INTO OCC_CONTEXT(contextId,deviceId,nullStreamId,parentContextId,"
             "isGreenContext,numMultiprocessors) VALUES(?,?,?,?,?,?)") &&
         Prepare(&upsert_function_,
             "INSERT OR REPLACE INTO OCC_FUNCTION(moduleId,mangledName,localMemoryPerThread,"
             "minStackSize,maxStackSize,barrierCount,registersPerThread,maxThreadsPerBlock)"
             " VALUES(?,?,?,?,?,?,?,?)") &&
         Prepare(&upsert_module_, "INSERT OR REPLACE INTO OCC_MODULE(moduleId,library,loader) VALUES(?,?,?)") &&
         // SQLite's JSON functions read Triton's metadata; json_valid keeps a malformed file
         // from failing the statement (which would turn the writer off).
         Prepare(&upsert_triton_,
             "INSERT OR REPLACE INTO OCC_TRITON_KERNEL(mangledName,numWarps,numStages,numCtas,"
             "sharedBytes,cacheFile) SELECT ?1, json_extract(j,'$.num_warps'),"
             " json_extract(j,'$.num_stages'), json_extract(j,'$.num_ctas'),"
             " json_extract(j,'$.shared'), ?3 FROM (SELECT CASE WHEN json_valid(?2) THEN ?2"
             " ELSE '{}' END AS j)") &&
         Prepare(&upsert_triton_source_,
             "INSERT OR REPLACE INTO OCC_TRITON_SOURCE(mangledName,sourceFile,sourceLine,sourceNodes,"
             "originalAten,wrapperFile) VALUES(?,?,?,?,?,?)");
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
    Bind(insert_string_, 1, it->second);
    BindText(insert_string_, 2, it->first);
    if (!OCC_SQL_OK(insert_string_.Run())) Fail();
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

  sql::Stmt& s = insert_config_;
  int i = 0;
  Bind(s, ++i, it->second);
  Bind(s, ++i, key.device_id);
  Bind(s, ++i, key.context_id);
  BindOptional(s, ++i, key.is_green_context != 0 ? int64_t{key.context_id} : -1);
  Bind(s, ++i, forms.demangled_id);
  Bind(s, ++i, forms.short_id);
  Bind(s, ++i, key.mangled_name_id);
  Bind(s, ++i, key.launch_type);
  Bind(s, ++i, key.cache_config);
  Bind(s, ++i, key.registers_per_thread);
  for (int32_t g : key.grid) Bind(s, ++i, g);
  for (int32_t b : key.block) Bind(s, ++i, b);
  Bind(s, ++i, key.static_shared_memory);
  Bind(s, ++i, key.dynamic_shared_memory);
  Bind(s, ++i, key.local_memory_per_thread);
  Bind(s, ++i, static_cast<int64_t>(key.local_memory_total));
  Bind(s, ++i, key.shared_memory_executed);
  Bind(s, ++i, key.shared_memory_limit_config);
  BindOptional(s, ++i, key.shared_memory_requested_pct);
  Bind(s, ++i, key.graph_id);
  Bind(s, ++i, static_cast<int64_t>(key.graph_node_id));
  for (uint32_t c : key.cluster) Bind(s, ++i, c);
  Bind(s, ++i, key.cluster_scheduling_policy);
  Bind(s, ++i, key.max_potential_cluster_size);
  Bind(s, ++i, key.max_active_clusters);
  Bind(s, ++i, key.is_device_launched);
  if (!OCC_SQL_OK(s.Run())) Fail();
  return it->second;
}

void TraceWriter::AddKernel(const ActivityKernel& kernel) {
  if (!AcceptRecord()) return;
  KernelConfigKey key = MakeKernelConfigKey(kernel);
  if (light_mode_ && AddTimedLaunch(kernel)) return;
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
  if (pm_join_) pm_join_->AddKernel(kernel.deviceId, kernel.start, kernel.end, config_id);
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

template <typename Row>
bool TraceWriter::InsertBatched(std::vector<Row>* rows, sql::Stmt& batch, sql::Stmt& single,
                                void (*bind_row)(sql::Stmt&, int*, const Row&)) {
  size_t done = 0;
  while (rows->size() - done >= kLaunchBatchRows) {
    int i = 0;
    for (size_t r = done; r < done + kLaunchBatchRows; ++r) bind_row(batch, &i, (*rows)[r]);
    if (!OCC_SQL_OK(batch.Run())) return Fail();
    done += kLaunchBatchRows;
  }
  for (size_t r = done; r < rows->size(); ++r) {
    int i = 0;
    bind_row(single, &i, (*rows)[r]);
    if (!OCC_SQL_OK(single.Run())) return Fail();
  }
  rows->clear();
  return true;
}
template bool TraceWriter::InsertBatched(std::vector<LaunchRow>*, sql::Stmt&, sql::Stmt&,
                                         void (*)(sql::Stmt&, int*, const LaunchRow&));
template bool TraceWriter::InsertBatched(std::vector<CallRow>*, sql::Stmt&, sql::Stmt&,
                                         void (*)(sql::Stmt&, int*, const CallRow&));

void TraceWriter::FlushLaunches() {
  if (failed_) return;
  // One row's five parameters, from parameter `*i + 1` on (the batch INSERT holds 64 rows).
  InsertBatched<LaunchRow>(&pending_launches_, insert_launch_batch_, insert_launch_,
                [](sql::Stmt& stmt, int* i, const LaunchRow& row) {
                  Bind(stmt, ++*i, row.start);
                  Bind(stmt, ++*i, row.duration);
                  Bind(stmt, ++*i, row.config_id);
                  Bind(stmt, ++*i, row.stream_id);
                  Bind(stmt, ++*i, row.correlation_id);
                });
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

  sql::Stmt& g = upsert_gpu_;
  int i = 0;
  Bind(g, ++i, d.id);
  BindText(g, ++i, state.name);
  if (x.bus_location.empty()) BindNull(g, ++i); else BindText(g, ++i, x.bus_location);
  BindOptional(g, ++i, x.integrated < 0 ? -1 : (x.integrated == 0 ? 1 : 0));
  Bind(g, ++i, d.l2CacheSize);
  Bind(g, ++i, static_cast<int64_t>(d.globalMemorySize));
  Bind(g, ++i, static_cast<int64_t>(d.globalMemoryBandwidth) * 1000);  // CUPTI: KB/s; nsys: B/s
  Bind(g, ++i, static_cast<int64_t>(d.coreClockRate) * 1000);          // CUPTI: kHz; nsys: Hz
  Bind(g, ++i, d.numMultiprocessors);
  BindText(g, ++i, uuid);
  if (x.chip_name.empty()) BindNull(g, ++i); else BindText(g, ++i, x.chip_name);
  Bind(g, ++i, d.id);
  Bind(g, ++i, d.constantMemorySize);
  Bind(g, ++i, d.maxIPC);
  Bind(g, ++i, d.maxRegistersPerBlock);
  Bind(g, ++i, d.maxSharedMemoryPerBlock);
  BindOptional(g, ++i, x.max_shared_memory_per_block_optin);
  Bind(g, ++i, d.maxSharedMemoryPerMultiprocessor);
  Bind(g, ++i, d.maxRegistersPerMultiprocessor);
  Bind(g, ++i, d.numThreadsPerWarp);
  BindOptional(g, ++i, x.async_engines);
  Bind(g, ++i, d.maxWarpsPerMultiprocessor);
  Bind(g, ++i, d.maxBlocksPerMultiprocessor);
  Bind(g, ++i, d.maxThreadsPerBlock);
  Bind(g, ++i, d.maxBlockDimX);
  Bind(g, ++i, d.maxBlockDimY);
  Bind(g, ++i, d.maxBlockDimZ);
  Bind(g, ++i, d.maxGridDimX);
  Bind(g, ++i, d.maxGridDimY);
  Bind(g, ++i, d.maxGridDimZ);
  Bind(g, ++i, d.computeCapabilityMajor);
  Bind(g, ++i, d.computeCapabilityMinor);
  Bind(g, ++i, d.computeCapabilityMajor);
  Bind(g, ++i, d.computeCapabilityMinor);
  if (d.isNumaNode != 0) Bind(g, ++i, d.numaId); else BindNull(g, ++i);
  bool ok = OCC_SQL_OK(g.Run());

  Bind(delete_cuda_device_, 1, d.id);
  ok = ok && OCC_SQL_OK(delete_cuda_device_.Run());
  Bind(insert_cuda_device_, 1, d.id);
  Bind(insert_cuda_device_, 2, d.id);
  BindText(insert_cuda_device_, 3, uuid);
  Bind(insert_cuda_device_, 4, d.numMultiprocessors);
  ok = ok && OCC_SQL_OK(insert_cuda_device_.Run());

  sql::Stmt& o = upsert_occ_device_;
  Bind(o, 1, d.id);
  BindOptional(o, 2, x.reserved_shared_memory_per_block);
  BindOptional(o, 3, x.max_threads_per_multiprocessor);
  Bind(o, 4, d.isMigEnabled);
  // Without MIG, CUPTI reports the instance ids as 0xFFFFFFFF (seen on H100): store NULL.
  BindOptional(o, 5, d.isMigEnabled != 0 ? static_cast<int64_t>(d.gpuInstanceId) : -1);
  BindOptional(o, 6, d.isMigEnabled != 0 ? static_cast<int64_t>(d.computeInstanceId) : -1);
  BindOptional(o, 7, x.driver_version);
  ok = ok && OCC_SQL_OK(o.Run());
  if (!ok) Fail();
}

void TraceWriter::AddContext(const ActivityContext& context) {
  if (!AcceptRecord()) return;
  green_contexts_[context.contextId] = context.isGreenContext != 0;
  sql::Stmt& s = upsert_context_;
  Bind(s, 1, context.contextId);
  Bind(s, 2, context.deviceId);
  Bind(s, 3, context.nullStreamId);
  Bind(s, 4, context.parentContextId);
  Bind(s, 5, context.isGreenContext);
  Bind(s, 6, context.numMultiprocessors);
  if (!OCC_SQL_OK(s.Run())) Fail();
}

void TraceWriter::AddAchieved(const AchievedSample& sample) {
  if (failed_) {
    ++stats_.achieved_lost;
    return;
  }
  sql::Stmt& s = insert_achieved_;
  Bind(s, 1, sample.correlation_id);
  Bind(s, 2, sample.context_id);
  BindText(s, 3, sample.status);
  auto bind_value = [&s](int index, double value) {
    if (value < 0) BindNull(s, index); else BindDouble(s, index, value);
  };
  bind_value(4, sample.achieved_occupancy_pct);
  bind_value(5, sample.warps_active_per_cycle);
  bind_value(6, sample.sm_cycles_active);
  bind_value(7, sample.gpu_time_ns);
  BindText(s, 8, sample.policy);
  Bind(s, 9, sample.sample_index);
  bind_value(10, sample.dram_throughput_pct);
  bind_value(11, sample.l2_throughput_pct);
  bind_value(12, sample.l1_throughput_pct);
  bind_value(13, sample.issue_slots_pct);
  bind_value(14, sample.tensor_pipe_pct);
  ++stats_.achieved;
  ++uncommitted_achieved_;
  if (!OCC_SQL_OK(s.Run())) Fail();
}

void TraceWriter::StartPmJoin(const PmJoinSettings& settings) { pm_join_.emplace(settings); }

void TraceWriter::AddPmImage(PmImage&& image, int64_t now_ns) {
  if (failed_) {
    stats_.pm_samples_lost += image.spans.size();
    return;
  }
  if (!pm_join_) pm_join_.emplace();
  pm_join_->AddImage(std::move(image), now_ns);
}

void TraceWriter::PmRecordsThrough(uint64_t cupti_ns) {
  if (pm_join_) pm_join_->RecordsThrough(cupti_ns);
}

bool TraceWriter::PmReport(PmWorkReport* report) { return pm_join_ && pm_join_->Report(report); }

void TraceWriter::JudgePmImages(bool all, int64_t now_ns) {
  if (!pm_join_) return;
  const auto began = std::chrono::steady_clock::now();
  PmSampleJoin::Judged judged;
  while (pm_join_->NextJudged(all, now_ns, &judged)) {
    if (failed_) {
      stats_.pm_samples_lost += judged.evaluate.size();  // the join counted the others
    } else {
      StorePmSamples(judged);
    }
    judged = PmSampleJoin::Judged{};  // the image's pool slot goes back now
  }
  pm_join_->Trim();
  stats_.pm_writer_ns += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count());
}

void TraceWriter::StorePmSamples(const PmSampleJoin::Judged& judged) {
  const PmImage& image = judged.image;
  const size_t count = judged.evaluate.size();
  if (count == 0) return;
  std::vector<PmValues> values;
  std::vector<uint8_t> failed;
  std::string error;
  if (image.evaluator) {
    image.evaluator->Evaluate(image.counter_data, judged.evaluate, &values, &failed, &error);
  } else {
    values.assign(count, PmValues{});
    failed.assign(count, 1);
    error = "the image came without an evaluator";
  }
  stats_.pm_samples_evaluated += count;
  std::vector<uint8_t> stored(count, 0);
  sql::Stmt& s = insert_pm_sample_;
  for (size_t k = 0; k < count; ++k) {
    if (failed[k] != 0) {
      if (stats_.pm_evaluate_errors++ == 0) LogLine("PM sample not evaluated: %s (further ones are only counted)", error.c_str());
      continue;
    }
    // No SM was active during the sample: nothing ran, nothing to attribute.
    if (!(values[k].sm_cycles_active > 0)) {
      ++stats_.pm_samples_idle;
      continue;
    }
    const PmImage::Span& span = image.spans[judged.evaluate[k]];
    Bind(s, 1, image.device_id);
    Bind(s, 2, static_cast<int64_t>(span.start_ns));
    Bind(s, 3, static_cast<int64_t>(span.end_ns));
    BindDouble(s, 4, values[k].sm_cycles_active);
    BindDouble(s, 5, values[k].warps_active);
    if (values[k].dram_throughput_pct < 0) BindNull(s, 6); else BindDouble(s, 6, values[k].dram_throughput_pct);
    ++stats_.pm_samples;
    ++uncommitted_pm_samples_;
    if (!OCC_SQL_OK(s.Run())) {
      Fail();
      stats_.pm_samples_lost += count - k - 1;
      return;
    }
    stored[k] = 1;
  }
  pm_join_->Credit(judged, stored);
}

std::vector<std::pair<std::string, std::string>> TraceWriter::PmMeta() const {
  const PmJoinCounts join = pm_join_ ? pm_join_->counts() : PmJoinCounts{};
  std::vector<std::pair<std::string, std::string>> rows = {
      {"pm_samples", std::to_string(stats_.pm_samples)},
      {"pm_samples_idle", std::to_string(stats_.pm_samples_idle + join.idle)},
      {"pm_samples_idle_unevaluated", std::to_string(join.idle)},
      {"pm_samples_evaluated", std::to_string(stats_.pm_samples_evaluated)},
      {"pm_samples_ahead_of_records", std::to_string(join.ahead_of_records)},
      {"pm_evaluate_errors", std::to_string(stats_.pm_evaluate_errors)},
      {"pm_samples_rejected_long", std::to_string(join.rejected_long)},
      {"pm_samples_lost_idle", std::to_string(join.lost_idle)},
      {"pm_samples_lost_busy", std::to_string(join.lost_busy)},
      {"pm_samples_lost_write_error", std::to_string(stats_.pm_samples_lost)},
      {"pm_samples_waiting", std::to_string(pm_join_ ? pm_join_->waiting_samples() : 0)},
      {"pm_late_kernel_records", std::to_string(join.late_kernel_records)},
      {"pm_images_judged", std::to_string(join.images_judged)},
      {"pm_images_judged_caught_up", std::to_string(join.images_judged_caught_up)},
      {"pm_images_held_max", std::to_string(join.most_images_held)},
      {"pm_writer_ms", std::to_string(stats_.pm_writer_ns / 1'000'000)},
  };
  if (pm_join_) {
    for (auto& row : pm_join_->CoverageMeta()) rows.push_back(std::move(row));
  }
  return rows;
}

void TraceWriter::WritePmMeta() {
  for (const auto& [name, value] : PmMeta()) SetMeta(name, value);
}

void TraceWriter::SetTritonCacheRoots(std::vector<std::string> roots) {
  std::vector<std::string> inductor_roots;
  for (const std::string& root : roots) {
    const std::filesystem::path triton_root(root);
    if (triton_root.filename() == "triton" && triton_root.has_parent_path()) {
      inductor_roots.push_back(triton_root.parent_path().string());
    }
  }
  if (inductor_roots.empty()) {
    inductor_outputs_.reset();
  } else {
    inductor_outputs_.emplace(std::move(inductor_roots));
  }
  if (roots.empty()) {
    triton_cache_.reset();
  } else {
    triton_cache_.emplace(std::move(roots));
  }
}

void TraceWriter::AddModule(uint32_t module_id, const std::vector<uint8_t>& image, const std::string& library,
                            const std::string& loader, int64_t loader_capture_ns) {
  if (failed_) return;
  if (loader_capture_ns >= 0) {
    ++stats_.loader_captures;
    stats_.loader_capture_ns_total += static_cast<uint64_t>(loader_capture_ns);
    stats_.loader_capture_ns_max = std::max(stats_.loader_capture_ns_max, static_cast<uint64_t>(loader_capture_ns));
  }
  if (!loader.empty()) ++stats_.loaders_found;
  Bind(upsert_module_, 1, module_id);
  if (library.empty()) {
    BindNull(upsert_module_, 2);
  } else {
    BindText(upsert_module_, 2, library);
  }
  if (loader.empty()) {
    BindNull(upsert_module_, 3);
  } else {
    BindText(upsert_module_, 3, loader);
  }
  if (!OCC_SQL_OK(upsert_module_.Run())) {
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
    sql::Stmt& s = upsert_function_;
    Bind(s, 1, module_id);
    Bind(s, 2, name_id);
    BindOptional(s, 3, function.frame_size);
    BindOptional(s, 4, function.min_stack_size);
    BindOptional(s, 5, function.max_stack_size);
    BindOptional(s, 6, function.barrier_count);
    BindOptional(s, 7, function.registers);
    BindOptional(s, 8, function.max_threads_per_block);
    if (!OCC_SQL_OK(s.Run())) {
      Fail();
      return;
    }
    ++stats_.functions;
    AddTritonMetadata(name_id, function.mangled_name,
                      std::string_view(reinterpret_cast<const char*>(image.data()), image.size()));
    if (failed_) return;
  }
}

void TraceWriter::AddTritonMetadata(int64_t name_id, const std::string& name, std::string_view image) {
  if (!triton_cache_ || !TritonCacheIndex::MayBeTritonName(name)) return;
  auto [entry, first_time] = triton_looked_up_.try_emplace(name_id, false);
  if (!first_time && entry->second) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const std::optional<TritonCacheIndex::Found> found =
      triton_cache_->Find(name, int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec, image);
  if (!found) {
    // Triton's cubins are tens of KB; past the byte cap (a CUDA C module of many extern "C"
    // kernels would be copied once per name) the retry goes by name only.
    constexpr size_t kMaxMisses = 1024;
    constexpr size_t kMaxImageBytes = 16 << 20;
    if (triton_misses_.size() < kMaxMisses && !triton_misses_.contains(name_id)) {
      const bool keep_image = triton_miss_image_bytes_ + image.size() <= kMaxImageBytes;
      if (keep_image) triton_miss_image_bytes_ += image.size();
      triton_misses_.emplace(name_id, TritonMiss{name, keep_image ? std::string(image) : std::string()});
    }
    return;
  }
  triton_misses_.erase(name_id);
  const std::optional<std::string> json = ReadSmallFile(found->json_path);
  if (!json) return;
  Bind(upsert_triton_, 1, name_id);
  BindText(upsert_triton_, 2, *json);
  BindText(upsert_triton_, 3, found->json_path);
  if (!OCC_SQL_OK(upsert_triton_.Run())) {
    Fail();
    return;
  }
  entry->second = true;
  ++stats_.triton_kernels;
  // Another program's compilation of the same name would name another source.
  if (found->exact) AddTritonSource(name_id, name, found->json_path);
}

void TraceWriter::AddTritonSource(int64_t name_id, const std::string& name, const std::string& json_path) {
  const std::optional<SourceLocation> location = TritonSourceLocation(json_path);
  std::optional<InductorKernelOrigin> inductor;
  // Inductor names every kernel it generates triton_<kind>_...; its kernel file is then known
  // exactly from the location, and only a module that declares that file describes it.
  if (inductor_outputs_ && location && name.rfind("triton_", 0) == 0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    inductor = inductor_outputs_->Find(name, location->file, int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec);
  }
  if (!location && !inductor) return;
  sql::Stmt& s = upsert_triton_source_;
  Bind(s, 1, name_id);
  if (location) {
    BindText(s, 2, location->file);
    Bind(s, 3, location->line);
  } else {
    BindNull(s, 2);
    BindNull(s, 3);
  }
  if (inductor) {
    BindText(s, 4, inductor->source_nodes);
    BindText(s, 5, inductor->original_aten);
    BindText(s, 6, inductor->wrapper_path);
  } else {
    for (int i = 4; i <= 6; ++i) BindNull(s, i);
  }
  if (!OCC_SQL_OK(s.Run())) {
    Fail();
    return;
  }
  ++stats_.triton_sources;
}

void CheckMetaKey(std::string_view name) {
  if (meta::IsDeclared(name, meta::kInjector)) return;
  std::lock_guard lock(g_undeclared_mutex);
  std::vector<std::string>& keys = UndeclaredMetaKeys();
  if (std::find(keys.begin(), keys.end(), name) == keys.end()) keys.emplace_back(name);
}

std::vector<std::string> UndeclaredMetaKeysWritten() {
  std::lock_guard lock(g_undeclared_mutex);
  return UndeclaredMetaKeys();
}

void TraceWriter::SetMeta(std::string_view name, std::string_view value) {
  CheckMetaKey(name);
  if (failed_) return;
  BindText(upsert_meta_, 1, name);
  BindText(upsert_meta_, 2, value);
  if (!OCC_SQL_OK(upsert_meta_.Run())) Fail();
}

bool TraceWriter::Commit() {
  if (failed_ || db_.get() == nullptr) return false;
  FlushLaunches();
  FlushLaunchCalls();
  if (failed_) return false;
  if (in_transaction_ && !OCC_SQL_OK(db_.Exec("COMMIT"))) return Fail();
  in_transaction_ = false;
  uncommitted_records_ = uncommitted_launches_ = uncommitted_achieved_ = uncommitted_pm_samples_ = 0;
  if (!OCC_SQL_OK(db_.Exec("BEGIN"))) return Fail();
  in_transaction_ = true;
  return true;
}

void TraceWriter::RetryTritonMisses() {
  if (!triton_cache_ || triton_misses_.empty()) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t now_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  triton_cache_->Refresh(now_ns);
  if (inductor_outputs_) inductor_outputs_->Refresh(now_ns);
  // One scan for all of them: Find does not rescan again within the interval.
  std::unordered_map<int64_t, TritonMiss> misses = std::move(triton_misses_);
  triton_misses_.clear();
  triton_miss_image_bytes_ = 0;
  for (const auto& [name_id, miss] : misses) {
    if (failed_) return;
    AddTritonMetadata(name_id, miss.name, miss.image);
  }
  triton_misses_.clear();
}

bool TraceWriter::Close() {
  if (db_.get() == nullptr) return !failed_;
  if (!failed_) RetryTritonMisses();
  bool ok = !failed_;
  if (ok) {
    FlushLaunches();
    FlushLaunchCalls();
    ok = !failed_ && (!in_transaction_ || OCC_SQL_OK(db_.Exec("COMMIT")));
    in_transaction_ = false;
    if (ok) uncommitted_records_ = uncommitted_launches_ = uncommitted_achieved_ = 0;
    // Fold the WAL into the main file: one self-contained .db to copy around. Failing here
    // (a reader holds the WAL) loses nothing: the WAL stays next to the file.
    if (ok) static_cast<void>(db_.Exec("PRAGMA journal_mode=DELETE;"));
  }
  // Statements first: sqlite3_close_v2 would otherwise keep the connection as a zombie.
  for (sql::Stmt* s : {&insert_string_, &insert_config_, &insert_launch_, &insert_launch_batch_,
                        &upsert_meta_, &insert_achieved_, &upsert_gpu_, &delete_cuda_device_,
                        &insert_cuda_device_, &upsert_occ_device_, &upsert_context_,
                        &upsert_function_, &upsert_module_, &upsert_triton_,
                        &upsert_triton_source_}) {
    *s = sql::Stmt();
  }
  db_ = sql::Db();
  if (!ok) Fail();
  return ok;
}

bool TraceWriter::WriteMetaAfterFailure(const std::vector<std::pair<std::string, std::string>>& rows) {
  for (const auto& row : rows) CheckMetaKey(row.first);
  Close();
  if (path_.empty()) return false;
  // Not through errors.h: failing here is the expected outcome when the cause persists (it
  // was reported when it happened), and the caller says whether this worked.
  StatusOr<sql::Db> db = sql::Db::OpenReadWrite(path_);
  if (!db.ok()) return false;
  // A lock held by another connection (the usual transient cause) gets a short grace period;
  // this runs at exit, so never long.
  constexpr int kBusyTimeoutMs = 500;
  if (!db->SetBusyTimeout(kBusyTimeoutMs).ok()) return false;
  StatusOr<sql::Transaction> transaction = sql::Transaction::BeginImmediate(*db);
  if (!transaction.ok()) return false;
  {
    StatusOr<sql::Stmt> upsert = db->Prepare(kUpsertMetaSql);
    if (!upsert.ok()) return false;
    for (const auto& [name, value] : rows) {
      BindText(*upsert, 1, name);
      BindText(*upsert, 2, value);
      if (!upsert->Run().ok()) return false;  // the transaction rolls back on the way out
    }
  }
  if (!transaction->Commit().ok()) return false;
  // As Close(): one self-contained file when no reader holds the WAL.
  static_cast<void>(db->Exec("PRAGMA journal_mode=DELETE;"));
  return true;
}

}  // namespace occ::inj
