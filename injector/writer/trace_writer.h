// TraceWriter: turns CUPTI activity records into rows of the trace file
// (schema/trace_schema.sql). Single-threaded: owned and called by the session's writer thread
// (or directly by tests and the writer benchmark). It interns names (StringIds, each form
// stored once) and kernel configurations (OCC_KERNEL_CONFIG), appends one compact OCC_LAUNCH
// row per launch with multi-row prepared INSERTs, and keeps one open transaction that
// Commit() closes and reopens. The first SQLite failure is reported once and turns the
// writer off (failed()); every later call writes nothing, so the traced program is unaffected,
// but still counts what it was handed (WriterStats::records_lost): a write error never loses
// data silently.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/writer/activity_records.h"
#include "injector/writer/cubin_parser.h"
#include "injector/light/launch_calls.h"
#include "injector/achieved/pm_samples.h"
#include "injector/writer/pm_sample_join.h"
#include "injector/writer/triton_cache.h"
#include "sqlite/sqlite_db.h"

namespace occ::inj {

// Device facts that CUpti_ActivityDevice5 lacks, read with cuDeviceGetAttribute in the
// CONTEXT_CREATED callback (a thread where the driver is usable) and passed on as data.
// -1 / empty: unknown.
struct DeviceExtras {
  uint32_t device_id = 0;
  int64_t max_shared_memory_per_block_optin = -1;  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
  int64_t reserved_shared_memory_per_block = -1;   // CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
  int64_t max_threads_per_multiprocessor = -1;     // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
  int64_t async_engines = -1;                      // CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT
  int64_t integrated = -1;                         // CU_DEVICE_ATTRIBUTE_INTEGRATED
  int64_t driver_version = -1;                     // cuDriverGetVersion
  std::string bus_location;                        // cuDeviceGetPCIBusId
  std::string chip_name;                           // cuptiDeviceGetChipName ("GH100")
};

struct WriterStats {
  uint64_t launches = 0;       // OCC_LAUNCH rows (after a write error: the committed ones)
  uint64_t kernels = 0;        // distinct kernel (mangled) names
  uint64_t configs = 0;        // OCC_KERNEL_CONFIG rows
  uint64_t achieved = 0;       // OCC_ACHIEVED rows (after a write error: the committed ones)
  // Lost to a write error: kernel/device/context records and achieved samples that were in
  // the transaction open when SQLite failed (rolled back) or were handed over afterwards.
  uint64_t records_lost = 0;
  uint64_t achieved_lost = 0;
  uint64_t other_records = 0;  // records of kinds occtrace does not store
  // Kernel records handed back by a forced flush before the kernel ended (start, no end):
  // stored with duration 0.
  uint64_t incomplete_kernels = 0;
  uint64_t modules_parsed = 0;   // cubins read into OCC_FUNCTION
  uint64_t modules_skipped = 0;  // images that are not a readable cubin (warned about)
  uint64_t functions = 0;        // OCC_FUNCTION rows
  // Loading-thread stack captures for OCC_MODULE.loader: how many, their summed and largest
  // cost on the loading thread, and how many found a loader.
  uint64_t loader_captures = 0;
  uint64_t loader_capture_ns_total = 0;
  uint64_t loader_capture_ns_max = 0;
  uint64_t loaders_found = 0;
  uint64_t triton_kernels = 0;   // OCC_TRITON_KERNEL rows
  uint64_t triton_sources = 0;   // OCC_TRITON_SOURCE rows
  // Light tracing (OCC_LAUNCH_CALL): launches from launch callbacks, graph launches among the
  // calls, kernel records that timed one of them, kernel records matching no light
  // configuration (stored as in a full trace), graph launches whose nodes were not known.
  uint64_t launch_calls = 0;
  uint64_t graph_launches = 0;
  uint64_t timed_launches = 0;
  // Launch calls (graph nodes counted one by one) of configurations with fewer than
  // kWellTimedLaunches timed launches when the call was stored: what asks for timing windows.
  uint64_t under_timed_launch_calls = 0;
  uint64_t timed_unmatched = 0;
  uint64_t timed_dropped_at_switch = 0;  // running when records were switched off (KernelRecordsStoppedAt)
  uint64_t unknown_graph_launches = 0;
  // PM sampling (AddPmImage, JudgePmImages): OCC_PM_SAMPLE rows (after a write error: the
  // committed ones), samples evaluated, evaluated samples in which no SM was active (not
  // stored; the join counts the idle ones it did not evaluate: PmJoinCounts), samples whose
  // evaluation failed, samples lost to a write error.
  uint64_t pm_samples = 0;
  uint64_t pm_samples_evaluated = 0;
  uint64_t pm_samples_idle = 0;
  uint64_t pm_evaluate_errors = 0;
  uint64_t pm_samples_lost = 0;
  uint64_t pm_writer_ns = 0;  // writer-thread time judging, evaluating and storing PM samples
};

class TraceWriter {
 public:
  TraceWriter() = default;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();

  // Opens (creates) the database, applies the schema and pragmas, prepares the statements and
  // begins the first transaction.
  bool Open(const std::string& path);

  // Parses every record of a completed CUPTI buffer.
  void AddBuffer(uint8_t* buffer, size_t valid_size);
  void AddRecord(const CUpti_Activity& record);
  void AddKernel(const ActivityKernel& kernel);
  void AddDevice(const ActivityDevice& device);
  void AddContext(const ActivityContext& context);
  void AddDeviceExtras(const DeviceExtras& extras);
  void AddAchieved(const AchievedSample& sample);
  // PM sampling (pm_sample_join.h). StartPmJoin: kernel records feed the join from now on
  // (before the first image: the sampling policy needs them to know what wants samples).
  // AddPmImage: the image waits in the join for the kernel records of its time;
  // JudgePmImages(all, now_ns) evaluates the due ones (one CUPTI lock hold per image) and
  // stores one OCC_PM_SAMPLE row per evaluated sample in which an SM was active, then drops the
  // image (its pool slot goes back); `all` at the end. PmRecordsThrough: kernel records are
  // complete up to this CUPTI time. PmReport: what the sampling policy follows; false when
  // unchanged.
  void StartPmJoin(const PmJoinSettings& settings);
  void AddPmImage(PmImage&& image, int64_t now_ns = 0);
  void JudgePmImages(bool all, int64_t now_ns);
  void PmRecordsThrough(uint64_t cupti_ns);
  bool PmReport(PmWorkReport* report);
  // The writer's PM rows of OCC_META (docs/schema.md lists them); WritePmMeta sets them.
  std::vector<std::pair<std::string, std::string>> PmMeta() const;
  void WritePmMeta();
  // A module's image (CUPTI_CBID_RESOURCE_MODULE_LOADED): one OCC_FUNCTION row per function.
  // Non-cubin or malformed images are skipped with a warning (the first few) and counted.
  // `library` (may be empty): the shared object it was mapped from, for OCC_MODULE; `loader`
  // (may be empty): the object that loaded it (module_loader.h), whose stack capture cost
  // `loader_capture_ns` on the loading thread (< 0: none was taken). Kernels
  // whose name can be Triton's get their compile metadata from Triton's cache when found
  // there (OCC_TRITON_KERNEL).
  void AddModule(uint32_t module_id, const std::vector<uint8_t>& image, const std::string& library = {},
                 const std::string& loader = {}, int64_t loader_capture_ns = -1);
  void SetTritonCacheRoots(std::vector<std::string> roots);

  // Light tracing (trace_writer_light.cc). After SetLightMode, AddLaunchCall stores one
  // OCC_LAUNCH_CALL row per launch (a graph launch: one per kernel node) with a configuration
  // built from the function's facts, and kernel records (from timing windows) are stored as
  // OCC_LAUNCH rows of the configuration their launch call made, the record's carveout filling
  // in what the facts lack. Records no light configuration matches are stored as in a full trace.
  void SetLightMode();
  bool light_mode() const { return light_mode_; }
  void AddLaunchCall(const LaunchCall& call);
  // Light tracing: CUPTI's timestamps just before kernel records were switched off and just
  // after they were switched on again (0: not known; the window then counts from the last
  // switch-off). A kernel that was running or still queued at a switch-off comes back with a
  // wrong end (on an H100 with CUDA 13.0, graph kernels ended 248 ms late; with the launch hook,
  // queued graph kernels that started after the switch-off came back ~250 ms long), so a timed
  // launch counts only if it ran entirely inside one window: others are dropped
  // (timed_dropped_at_switch). Records are on from the start; calls come in time order.
  void KernelRecordsStoppedAt(uint64_t cupti_ns) {
    if (records_windows_.back().off_ns == UINT64_MAX) records_windows_.back().off_ns = cupti_ns;
  }
  void KernelRecordsStartedAt(uint64_t cupti_ns) {
    if (records_windows_.back().off_ns == UINT64_MAX) return;  // already on
    records_windows_.push_back({cupti_ns != 0 ? cupti_ns : records_windows_.back().off_ns, UINT64_MAX});
  }
  // One OCC_META row. `name` must be declared in schema/meta_keys.h; an undeclared one is still
  // written (a missing declaration must not lose data) but recorded for the tests
  // (UndeclaredMetaKeysWritten).
  void SetMeta(std::string_view name, std::string_view value);

  // Makes everything added so far durable and visible to readers (WAL commit).
  bool Commit();
  // Final commit; folds the WAL back into the main file (journal_mode=DELETE) so the trace
  // is one self-contained file; closes the connection.
  bool Close();
  // After a failure (the connection is closed first): writes `rows` into OCC_META through a
  // fresh connection if the file still takes writes (the cause was transient: another
  // connection's lock, a disk full since freed). Never creates the file. Quiet, since the
  // cause usually persists and was reported when it happened: returns whether it worked.
  bool WriteMetaAfterFailure(const std::vector<std::pair<std::string, std::string>>& rows);

  bool failed() const { return failed_; }
  bool open() const { return db_.get() != nullptr && !failed_; }
  const WriterStats& stats() const { return stats_; }
  const std::string& path() const { return path_; }

 private:
  struct NameEntry {
    std::string mangled;  // verifies the pointer cache (CUPTI may reuse an address)
    int64_t mangled_id = 0;
  };
  struct NameForms {
    int64_t demangled_id = 0;
    int64_t short_id = 0;
  };
  struct LaunchRow {
    int64_t start, duration, config_id, stream_id, correlation_id;
  };
  struct CallRow {
    int64_t api_start, config_id, stream_id, correlation_id;
  };
  // What a kernel record and a launch call both say about a launch: how timed launches find
  // their light configuration. No padding: compared and hashed as bytes.
  struct TimingKey {
    uint64_t graph_node_id = 0;
    int64_t mangled_name_id = 0;
    uint32_t context_id = 0;
    int32_t grid[3] = {};
    int32_t block[3] = {};
    int32_t dynamic_shared_memory = 0;
    bool operator==(const TimingKey& other) const { return std::memcmp(this, &other, sizeof(*this)) == 0; }
  };
  struct TimingKeyHash {
    size_t operator()(const TimingKey& key) const;
  };
  // A launch's grid and block in the form TimingKey holds them (kernel records' and launch
  // calls' integer types differ).
  template <typename T>
  static void CopyShape(const T grid[3], const T block[3], int32_t out_grid[3], int32_t out_block[3]) {
    for (int i = 0; i < 3; ++i) {
      out_grid[i] = static_cast<int32_t>(grid[i]);
      out_block[i] = static_cast<int32_t>(block[i]);
    }
  }
  // A kernel record's shape, its name interned as `name_id` (trace_writer_light.cc).
  static TimingKey RecordShape(const ActivityKernel& kernel, int64_t name_id);
  // A launch call's shape, its function's name interned (trace_writer_light.cc); false once the
  // writer failed.
  bool CallShape(const LaunchCall& call, const FunctionFacts& function, const uint32_t grid[3],
                 const uint32_t block[3], uint32_t dynamic_shared_memory, uint64_t graph_node_id, TimingKey* shape);
  // INSERT INTO OCC_LAUNCH_CALL of `rows` rows (trace_writer_light.cc).
  static std::string CallInsertSql(size_t rows);
  struct LightConfig {
    int64_t id = 0;
    bool record_facts_filled = false;  // the record's carveout etc. written into its row
    uint32_t timed = 0;                // its launches timed so far (kernel records matched)
  };
  struct DeviceState {
    std::optional<ActivityDevice> record;
    std::string name;
    std::optional<DeviceExtras> extras;
  };

  bool Fail();
  // Every stored record passes here first: counted as uncommitted, or as lost once failed.
  bool AcceptRecord();
  bool Prepare(sql::Stmt* stmt, std::string_view sql_text);
  bool PrepareStatements();
  int64_t InternString(const std::string& value);
  int64_t InternKernelName(const char* mangled);
  int64_t InternConfig(const KernelConfigKey& key);
  void FlushLaunches();
  void FlushLaunchCalls();
  // Inserts `rows` kLaunchBatchRows at a time through `batch` (a multi-row INSERT), the rest one
  // by one through `single`; `bind_row(stmt, &i, row)` binds one row from parameter i + 1 on.
  // Clears `rows`; false (and failed) on a SQLite error.
  // Instantiated for LaunchRow and CallRow in trace_writer.cc.
  template <typename Row>
  bool InsertBatched(std::vector<Row>* rows, sql::Stmt& batch, sql::Stmt& single,
                     void (*bind_row)(sql::Stmt&, int*, const Row&));
  // What a kernel record of the call's launch would make of its configuration, from the call
  // and the function's facts (the record's executed carveout, cache config and cluster
  // occupancy are not known).
  KernelConfigKey ConfigKeyFromCall(const LaunchCall& call, const FunctionFacts& function, const TimingKey& timing,
                                    uint32_t graph_id);
  void AddLightLaunch(const LaunchCall& call, const FunctionFacts& function, const uint32_t grid[3],
                      const uint32_t block[3], uint32_t dynamic_shared_memory, uint32_t graph_id,
                      uint64_t graph_node_id);
  // A kernel record in light mode: true when it timed a light configuration's launch.
  bool AddTimedLaunch(const ActivityKernel& kernel);
  void AddTritonMetadata(int64_t name_id, const std::string& name, std::string_view image);
  void AddTritonSource(int64_t name_id, const std::string& name, const std::string& json_path);
  void WriteDevice(uint32_t device_id);
  // One judged image: evaluation, rows, credits.
  void StorePmSamples(const PmSampleJoin::Judged& judged);

  sql::Db db_;
  std::string path_;
  bool failed_ = false;
  bool in_transaction_ = false;
  WriterStats stats_;
  // Added since the last successful COMMIT: what a failure rolls back.
  uint64_t uncommitted_records_ = 0;
  uint64_t uncommitted_launches_ = 0;
  uint64_t uncommitted_achieved_ = 0;
  uint64_t uncommitted_pm_samples_ = 0;

  sql::Stmt insert_string_, insert_config_, insert_launch_, insert_launch_batch_,
      upsert_meta_, insert_achieved_, upsert_gpu_, delete_cuda_device_, insert_cuda_device_,
      upsert_occ_device_, upsert_context_, upsert_function_, upsert_module_, upsert_triton_,
      upsert_triton_source_,
      insert_call_, insert_call_batch_, update_config_from_record_, insert_pm_sample_;

  std::unordered_map<std::string, int64_t> string_ids_;
  std::unordered_map<const char*, NameEntry> names_by_pointer_;
  std::unordered_map<std::string, int64_t> mangled_ids_;  // mangled name -> its StringIds id
  std::unordered_map<int64_t, NameForms> name_forms_;       // by mangled id
  std::unordered_map<KernelConfigKey, int64_t, KernelConfigKeyHash> config_ids_;
  // Cubin frame size by mangled-name id (the latest loaded module wins): replaces CUPTI's
  // localMemoryPerThread when that is 0 (CUDA 13 reports 0 even for spilling kernels).
  std::unordered_map<int64_t, int64_t> cubin_local_memory_;
  std::unordered_map<uint32_t, bool> green_contexts_;  // contextId -> isGreenContext
  std::map<uint32_t, DeviceState> devices_;
  std::vector<LaunchRow> pending_launches_;
  bool light_mode_ = false;
  std::vector<CallRow> pending_calls_;
  std::unordered_map<TimingKey, LightConfig, TimingKeyHash> light_configs_;
  // The same without the graph node id: a record whose node id differs from the one read at
  // instantiation still finds its configuration (the first one made for that launch shape).
  // Points into light_configs_ (its nodes never move).
  std::unordered_map<TimingKey, LightConfig*, TimingKeyHash> light_configs_any_node_;
  struct RecordsWindow {
    uint64_t on_ns = 0;
    uint64_t off_ns = UINT64_MAX;
  };
  std::vector<RecordsWindow> records_windows_{RecordsWindow{}};  // on from the start
  std::optional<PmSampleJoin> pm_join_;  // PM sampling: made by StartPmJoin or the first image
  bool InsideOneRecordsWindow(uint64_t start, uint64_t end) const;
  std::optional<TritonCacheIndex> triton_cache_;
  // Inductor's cache: the parent of a Triton root named "triton" (Inductor keeps Triton's cache
  // in <its cache>/triton).
  std::optional<InductorOutputIndex> inductor_outputs_;
  std::unordered_map<int64_t, bool> triton_looked_up_;  // name id -> found
  // Names whose lookup missed, with the image that loaded them, looked up again at Close: with
  // Inductor's compile workers a kernel's JSON can be written just after the rescan another
  // kernel's miss made, and the next rescan is then up to an interval away (a real H100 run of
  // a cold torch.compile lost 9 of 21 kernels' metadata that way). Bounded: names that are not
  // Triton's (plain extern "C" kernels) miss too.
  struct TritonMiss {
    std::string name;
    std::string image;
  };
  std::unordered_map<int64_t, TritonMiss> triton_misses_;
  size_t triton_miss_image_bytes_ = 0;
  void RetryTritonMisses();
};

// OCC_META keys written in this process (through SetMeta, WriteMetaAfterFailure or
// CheckMetaKey) that schema/meta_keys.h does not declare for the injector, each once, in the
// order first seen. Any thread. Empty in a correct build: the injector's test executables fail
// when it is not (tests/injector/meta_keys_checked.cc).
std::vector<std::string> UndeclaredMetaKeysWritten();
// The check SetMeta makes, for rows that reach no writer in a test (an achieved profiler's
// SessionMeta): records `name` when schema/meta_keys.h does not declare it for the injector.
void CheckMetaKey(std::string_view name);

// OCC_META.schema_version of schema/trace_schema.sql (its header comment says the same).
inline constexpr std::string_view kTraceSchemaVersion = "1";

// Timed launches after which a light configuration's mean duration is taken as known: with
// the few-percent spread of a kernel's durations between launches, 16 put the estimate's error
// well inside the 5 % that light tracing promises (docs/tracing.md). Fewer ask for windows.
inline constexpr uint32_t kWellTimedLaunches = 16;

// Rows per multi-row INSERT into OCC_LAUNCH: amortizes sqlite3_step over many rows.
inline constexpr size_t kLaunchBatchRows = 64;

}  // namespace occ::inj
