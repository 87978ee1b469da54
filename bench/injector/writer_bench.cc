// writer_bench: how fast the injector's writer turns CUPTI kernel records into the trace file,
// and how many bytes a launch costs on disk.
//
// Workload: N synthetic CUpti_ActivityKernel10 records (60 kernel names with realistic
// mangled template names, 240 launch configurations, streams, ns timestamps 2-9 us apart),
// laid out in 4 MB buffers exactly as CUPTI delivers them. Both sides run on one pinned core:
//   occtrace  TraceWriter::AddBuffer (cuptiActivityGetNextRecord walk, name and config
//             interning, batched OCC_LAUNCH inserts) + a commit every 250k launches + Close;
//   baseline  the straightforward design: one row per record with every kernel column
//             (nsys' CUPTI_ACTIVITY_KIND_KERNEL layout, names interned the same way),
//             single-row prepared INSERT, same transactions and pragmas.
// Runs are interleaved (occtrace, baseline, occtrace, ...) and medians reported. Bytes per
// launch exclude names: OCC_LAUNCH + OCC_KERNEL_CONFIG pages (dbstat) / launches, and the
// same for the baseline's table.
//   writer_bench [launches=2000000] [repeats=5]
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "injector/writer/activity_records.h"
#include "injector/writer/trace_writer.h"
#include "sqlite/sqlite_db.h"

namespace {

using occ::inj::ActivityKernel;
using Clock = std::chrono::steady_clock;

constexpr size_t kBufferBytes = 4 << 20;
constexpr uint64_t kCommitEvery = 250000;  // ~250 ms of launches at 1M launches/s

struct Workload {
  std::vector<std::string> names;
  std::vector<uint8_t*> buffers;
  std::vector<size_t> sizes;
  uint64_t launches = 0;
  ~Workload() {
    for (uint8_t* b : buffers) std::free(b);
  }
};

void BuildWorkload(uint64_t launches, Workload* w) {
  for (int i = 0; i < 60; ++i) {
    w->names.push_back("_ZN2at6native29vectorized_elementwise_kernelILi" + std::to_string(i) +
                       "ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_");
  }
  uint64_t time = 1'763'000'000'000'000'000ull;
  uint64_t lcg = 12345;
  uint8_t* buffer = nullptr;
  size_t used = kBufferBytes;
  for (uint64_t i = 0; i < launches; ++i) {
    if (used + sizeof(ActivityKernel) > kBufferBytes) {
      buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
      w->buffers.push_back(buffer);
      w->sizes.push_back(0);
      used = 0;
    }
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t r = static_cast<uint32_t>(lcg >> 33);
    ActivityKernel k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    const uint32_t config = r % 240;
    k.name = w->names[config % 60].c_str();
    k.gridX = static_cast<int32_t>(66 * (1 + config / 60));
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 4096;
    k.sharedMemoryExecuted = 233472;
    k.contextId = 1;
    k.streamId = 7 + (r >> 8) % 4;
    k.correlationId = static_cast<uint32_t>(i + 1);
    time += 2000 + (r >> 12) % 7000;
    k.start = time;
    k.end = time + 1500 + (r >> 4) % 6000;
    k.clusterX = k.clusterY = k.clusterZ = 1;
    std::memcpy(buffer + used, &k, sizeof(k));
    used += sizeof(k);
    w->sizes.back() = used;
  }
  w->launches = launches;
}

std::string TempDb(const char* stem) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/writer_bench-" + stem + "-" +
                     std::to_string(getpid()) + ".db";
  for (const char* s : {"", "-wal", "-shm", "-journal"}) std::remove((path + s).c_str());
  return path;
}

// Exits on an SQLite failure: a figure measured past one would mean nothing.
template <typename T>
T OrExit(occ::StatusOr<T> result) {
  if (!result.ok()) {
    std::fprintf(stderr, "writer_bench: %s\n", result.status().message().c_str());
    std::exit(1);
  }
  return std::move(result).value();
}
void OrExit(const occ::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "writer_bench: %s\n", status.message().c_str());
    std::exit(1);
  }
}

double TableBytes(const std::string& path, const char* tables) {
  occ::sql::Db db = OrExit(occ::sql::Db::OpenReadOnly(path));
  occ::sql::Stmt stmt =
      OrExit(db.Prepare(std::string("SELECT sum(pgsize) FROM dbstat WHERE name IN (") + tables + ")"));
  return OrExit(stmt.Step()) ? stmt.Double(0) : -1;
}

struct Result {
  double launches_per_s;
  double bytes_per_launch;
};

Result RunOcctrace(Workload& w) {
  const std::string path = TempDb("occtrace");
  occ::inj::TraceWriter writer;
  if (!writer.Open(path)) std::exit(1);
  const auto begin = Clock::now();
  uint64_t since_commit = 0;
  for (size_t b = 0; b < w.buffers.size(); ++b) {
    writer.AddBuffer(w.buffers[b], w.sizes[b]);
    since_commit += w.sizes[b] / sizeof(ActivityKernel);
    if (since_commit >= kCommitEvery) {
      writer.Commit();
      since_commit = 0;
    }
  }
  writer.Close();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  if (writer.failed() || writer.stats().launches != w.launches) std::exit(1);
  Result r{static_cast<double>(w.launches) / seconds,
           TableBytes(path, "'OCC_LAUNCH','OCC_KERNEL_CONFIG'") / static_cast<double>(w.launches)};
  for (const char* s : {"", "-wal", "-shm", "-journal"}) std::remove((path + s).c_str());
  return r;
}

// The naive design, on the same records with the same walk.
Result RunBaseline(Workload& w) {
  const std::string path = TempDb("baseline");
  occ::sql::Db db = OrExit(occ::sql::Db::Create(path, /*replace=*/false));
  OrExit(db.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;"
                 "CREATE TABLE names(id INTEGER PRIMARY KEY, value TEXT);"
                 "CREATE TABLE kernel(start INT, \"end\" INT, deviceId INT, contextId INT, streamId INT,"
                 " correlationId INT, demangledName INT, launchType INT, cacheConfig INT,"
                 " registersPerThread INT, gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT,"
                 " blockZ INT, staticSharedMemory INT, dynamicSharedMemory INT, localMemoryPerThread INT,"
                 " sharedMemoryExecuted INT, sharedMemoryLimitConfig INT, graphId INT, graphNodeId INT,"
                 " clusterX INT, clusterY INT, clusterZ INT); BEGIN;"));
  occ::sql::Stmt insert =
      OrExit(db.Prepare("INSERT INTO kernel VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  std::unordered_map<const char*, int64_t> name_ids;
  const auto begin = Clock::now();
  uint64_t since_commit = 0;
  for (size_t b = 0; b < w.buffers.size(); ++b) {
    occ::inj::ForEachActivity(w.buffers[b], w.sizes[b], [&](const CUpti_Activity& record) {
      const auto& k = reinterpret_cast<const ActivityKernel&>(record);
      auto [it, inserted] = name_ids.try_emplace(k.name, static_cast<int64_t>(name_ids.size()));
      int i = 0;
      // A failed bind is returned by Run() (occ::sql::Stmt).
      auto bind = [&](int64_t v) { static_cast<void>(insert.BindInt64(++i, v)); };
      bind(static_cast<int64_t>(k.start)); bind(static_cast<int64_t>(k.end)); bind(k.deviceId);
      bind(k.contextId); bind(k.streamId); bind(k.correlationId); bind(it->second); bind(k.launchType);
      bind(k.cacheConfig.config.requested); bind(k.registersPerThread); bind(k.gridX); bind(k.gridY);
      bind(k.gridZ); bind(k.blockX); bind(k.blockY); bind(k.blockZ); bind(k.staticSharedMemory);
      bind(k.dynamicSharedMemory); bind(k.localMemoryPerThread); bind(k.sharedMemoryExecuted);
      bind(k.shmemLimitConfig); bind(k.graphId); bind(static_cast<int64_t>(k.graphNodeId));
      bind(k.clusterX); bind(k.clusterY); bind(k.clusterZ);
      OrExit(insert.Run());
    });
    since_commit += w.sizes[b] / sizeof(ActivityKernel);
    if (since_commit >= kCommitEvery) {
      OrExit(db.Exec("COMMIT; BEGIN;"));
      since_commit = 0;
    }
  }
  OrExit(db.Exec("COMMIT; PRAGMA journal_mode=DELETE;"));
  insert = occ::sql::Stmt();
  db = occ::sql::Db();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  Result r{static_cast<double>(w.launches) / seconds, TableBytes(path, "'kernel'") / static_cast<double>(w.launches)};
  for (const char* s : {"", "-wal", "-shm", "-journal"}) std::remove((path + s).c_str());
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  // One core: the writer thread is single-threaded; pin so both sides see the same core.
  cpu_set_t one;
  CPU_ZERO(&one);
  const int cpu = sched_getcpu();
  CPU_SET(static_cast<size_t>(cpu < 0 ? 0 : cpu), &one);
  sched_setaffinity(0, sizeof(one), &one);

  Workload workload;
  BuildWorkload(launches, &workload);
  std::printf("writer_bench: %llu launches in %zu x 4 MB CUPTI buffers, %d interleaved repeats, core %d\n",
              static_cast<unsigned long long>(launches), workload.buffers.size(), repeats, cpu);
  RunOcctrace(workload);  // warm-up: page cache, allocator
  std::vector<double> occ_rate, occ_bytes, base_rate, base_bytes;
  for (int i = 0; i < repeats; ++i) {
    Result o = RunOcctrace(workload);
    Result b = RunBaseline(workload);
    occ_rate.push_back(o.launches_per_s);
    occ_bytes.push_back(o.bytes_per_launch);
    base_rate.push_back(b.launches_per_s);
    base_bytes.push_back(b.bytes_per_launch);
    std::printf("  run %d: occtrace %.0f launches/s %.1f B/launch | baseline %.0f launches/s %.1f B/launch\n", i + 1,
                o.launches_per_s, o.bytes_per_launch, b.launches_per_s, b.bytes_per_launch);
  }
  const double o_rate = Median(occ_rate), b_rate = Median(base_rate);
  const double o_bytes = Median(occ_bytes), b_bytes = Median(base_bytes);
  std::printf("median occtrace writer: %.0f launches/s (target >= 1000000), %.1f bytes/launch excluding names (target <= 40)\n",
              o_rate, o_bytes);
  std::printf("median baseline (one full row per record): %.0f launches/s, %.1f bytes/launch\n", b_rate, b_bytes);
  std::printf("ratio occtrace/baseline: speed %.2fx, size %.2fx\n", o_rate / b_rate, o_bytes / b_bytes);
  return o_rate >= 1e6 && o_bytes <= 40 ? 0 : 1;
}
