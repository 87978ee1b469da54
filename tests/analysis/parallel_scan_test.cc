// The launch-table scan over rowid ranges on several threads (analyzer/read/parallel_scan.h) gives
// exactly what one range gives: every field of every configuration, in the same order, the
// file's totals and its warnings; and `occ-report --jobs 4` prints the report `--jobs 1` prints.
// Totals the scans must reach are computed by SQLite from the same rows, not by the code under
// test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/read/parallel_scan.h"
#include "analyzer/read/registry/input_formats.h"
#include "sqlite/sqlite_db.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::ExpectSameConfig;
using testing::MakeDb;
using testing::MakeOccTrace;
using testing::NsysSchemaSql;
using testing::RunCli;
using testing::ScratchDir;

constexpr char kDevices[] = R"sql(
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024),
         (1, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 42, 'GPU-0', 132), (1, 1, 42, 'GPU-1', 132);
)sql";

// 4,000 kernel rows of ~100 configurations first seen all along the table, contexts and graphs
// that change between launches of one configuration, bad rows (end before start, negative
// start), and rowid gaps: a deleted stretch and rows far beyond the others.
std::string NsysExportSql() {
  return NsysSchemaSql() + kDevices + R"sql(
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1');
INSERT INTO StringIds VALUES (1, 'gemm(float const*)'), (2, 'gemm'), (3, '_Z4gemmPKf'),
  (4, 'scale(int)'), (5, 'scale'), (6, '_Z5scalei');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  correlationId, demangledName, shortName, mangledName, cacheConfig, registersPerThread, gridX,
  gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
  localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, graphId,
  clusterX, clusterY, clusterZ, sharedMemoryRequestedPercentage)
SELECT CASE WHEN i % 89 = 0 THEN -5 ELSE 1000 * i END,
       CASE WHEN i % 97 = 0 THEN 1000 * i - 1 ELSE 1000 * i + 100 + (i * 7919) % 5000 END,
       i % 2, 1 + i % 3, 7 + i % 4, i, 1 + 3 * (i % 2), 2 + 3 * (i % 2), 3 + 3 * (i % 2), 0,
       32 + 8 * ((i * 5) % 3), 64 * (1 + (i * 31) % (1 + i / 200)), 1, 1, 32 * (1 + (i * 17) % 8),
       1, 1, 0, 0, 0, 0, 32768, 0, CASE WHEN i % 11 = 0 THEN 1 + i % 5 ELSE 0 END, 0, 0, 0, 0
FROM n;
DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid BETWEEN 1200 AND 2100;
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (rowid, start, "end", deviceId, contextId, streamId,
  correlationId, demangledName, shortName, mangledName, cacheConfig, registersPerThread, gridX,
  gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
  localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, graphId,
  clusterX, clusterY, clusterZ, sharedMemoryRequestedPercentage)
VALUES (1000000, 9000000, 9000500, 1, 9, 7, 9001, 4, 5, 6, 0, 40, 7777, 1, 1, 96, 1, 1, 0, 0, 0, 0,
        32768, 0, 3, 0, 0, 0, 0),
       (5000000, 9100000, 9100400, 0, 9, 7, 9002, 1, 2, 3, 0, 32, 64, 1, 1, 32, 1, 1, 0, 0, 0, 0,
        32768, 0, 0, 0, 0, 0, 0);
)sql";
}

// 20 configurations, 3,000 launches with unknown configIds, negative and absurd durations,
// untimed launches, profiler replays, and achieved rows with fractional percentages (so that a
// different summation order would show) and not-measured statuses.
std::string OcctraceInserts(bool light) {
  std::string sql = std::string(R"sql(
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '42'), ('achieved_mode', 'sample'),
  ('occtrace_version', '0.1.0');
INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'gemm'), (3, '_Z4gemmv');
)sql") + kDevices + R"sql(
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
INSERT INTO OCC_KERNEL_CONFIG SELECT i, i % 2, 1 + i % 2, NULL, 1, 2, 3, 0, 0, 32, 64 * i, 1, 1,
  128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
INSERT INTO OCC_LAUNCH SELECT 1000 * i,
  CASE WHEN i % 101 = 0 THEN -1 WHEN i % 103 = 0 THEN 2000000000000000 WHEN i % 37 = 0 THEN 0
       ELSE 100 + (i * 7919) % 5000 END,
  CASE WHEN i % 211 = 0 THEN 999 ELSE 1 + (i * 13) % 20 END, 7, i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
INSERT INTO OCC_ACHIEVED (correlationId, contextId, status, achievedOccupancyPct, gpuTimeNs,
  policy, dramThroughputPct, l2ThroughputPct)
SELECT i, 1 + ((1 + (i * 13) % 20) % 2), CASE WHEN i % 35 = 0 THEN 'graph' ELSE 'measured' END,
  10 + (i * 0.7310585786) % 80, CASE WHEN i % 74 = 0 THEN NULL ELSE 1000.25 + i END, 'sample',
  (i * 0.1234567) % 100, NULL
FROM n WHERE i % 7 = 0 OR i % 37 = 0;
)sql";
  if (light) {
    sql += R"sql(
UPDATE OCC_META SET value = 'off' WHERE name = 'achieved_mode';
INSERT INTO OCC_META VALUES ('trace_mode', 'light');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9000)
INSERT INTO OCC_LAUNCH_CALL SELECT 500 * i, 1 + (i * 7) % 21, 7, i FROM n;
DELETE FROM OCC_ACHIEVED;
)sql";
  }
  return sql;
}

struct ScanResult {
  TraceScan scan;
  std::vector<std::string> warnings;
};

ScanResult ScanWithJobs(const std::string& path, int jobs) {
  ScanResult r;
  auto reader = OpenInput(path, 0);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return r;
  auto scan = (*reader)->Scan("", jobs);
  EXPECT_TRUE(scan.ok()) << scan.status().message();
  if (scan.ok()) r.scan = std::move(*scan);
  for (const auto& w : (*reader)->info().warnings()) r.warnings.push_back(w);
  return r;
}

// Field by field, floating-point sums included: the scan adds achieved samples in row order
// whatever the split, so they are equal, not merely close.
void ExpectSameScan(const ScanResult& expected, const ScanResult& got, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(expected.warnings, got.warnings);
  EXPECT_EQ(expected.scan.launches, got.scan.launches);
  EXPECT_EQ(expected.scan.total_ns, got.scan.total_ns);
  EXPECT_EQ(expected.scan.first_start, got.scan.first_start);
  EXPECT_EQ(expected.scan.last_end, got.scan.last_end);
  EXPECT_EQ(expected.scan.busy_ns, got.scan.busy_ns);
  ASSERT_EQ(expected.scan.configs.size(), got.scan.configs.size());
  for (size_t n = 0; n < expected.scan.configs.size(); ++n) {
    SCOPED_TRACE("configuration " + std::to_string(n));
    ExpectSameConfig(expected.scan.configs[n], got.scan.configs[n]);
  }
}

int64_t QueryInt(const std::string& path, const std::string& query) {
  auto db = sql::Db::OpenReadOnly(path);
  EXPECT_TRUE(db.ok());
  auto stmt = db->Prepare(query);
  EXPECT_TRUE(stmt.ok()) << stmt.status().message();
  auto row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row);
  return stmt->Int64(0);
}

TEST(ParallelScan, NsysExportEqualsOneRange) {
  ScratchDir dir;
  const std::string path = dir.Path("export.sqlite");
  MakeDb(path, NsysExportSql());
  const ScanResult one = ScanWithJobs(path, 1);
  // What the rows hold, counted by SQLite.
  const std::string good = " FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= 0 AND \"end\" >= start";
  EXPECT_EQ(one.scan.launches, QueryInt(path, "SELECT count(*)" + good));
  EXPECT_EQ(one.scan.total_ns, QueryInt(path, "SELECT sum(\"end\" - start)" + good));
  EXPECT_EQ(static_cast<int64_t>(one.scan.configs.size()),
            QueryInt(path, "SELECT count(*) FROM (SELECT DISTINCT deviceId, demangledName, "
                           "registersPerThread, gridX, blockX" + good + ")"));
  const int64_t bad = QueryInt(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "
                                     "start < 0 OR \"end\" < start");
  ASSERT_GT(bad, 0);
  ASSERT_FALSE(one.warnings.empty());
  EXPECT_EQ(one.warnings[0].rfind(std::to_string(bad) + " kernel rows", 0), 0u) << one.warnings[0];
  ASSERT_GT(one.scan.configs.size(), 50u);
  for (int jobs : {2, 3, 4, 7, 16, 64}) {
    ExpectSameScan(one, ScanWithJobs(path, jobs), "--jobs " + std::to_string(jobs));
  }
}

TEST(ParallelScan, OcctraceEqualsOneRange) {
  ScratchDir dir;
  const std::string path = dir.Path("trace.db");
  MakeOccTrace(path, OcctraceInserts(/*light=*/false));
  const ScanResult one = ScanWithJobs(path, 1);
  EXPECT_EQ(one.scan.launches,
            QueryInt(path, "SELECT count(*) FROM OCC_LAUNCH WHERE configId <= 20 AND "
                           "duration >= 0 AND duration <= 1000000000000000"));
  int64_t samples = 0;
  for (const auto& c : one.scan.configs) samples += c.achieved_samples;
  EXPECT_EQ(samples, QueryInt(path, "SELECT count(*) FROM OCC_ACHIEVED a JOIN OCC_LAUNCH l USING "
                                    "(correlationId) WHERE a.status = 'measured' AND "
                                    "l.configId <= 20 AND l.duration >= 0 AND "
                                    "l.duration <= 1000000000000000"));
  EXPECT_GE(one.warnings.size(), 4u);  // unknown configId, negative, absurd, untimed
  for (int jobs : {2, 3, 5, 8, 64}) {
    ExpectSameScan(one, ScanWithJobs(path, jobs), "--jobs " + std::to_string(jobs));
  }
}

// Every record, and every launch call its records do not describe, of the configurations the
// trace has: a launch call's records (its correlationId's) describe that many of its calls, those
// whose configuration has a record of that launch first, then in configuration and start order.
// Counted here row by row, apart from the SQL the view and the scan use.
int64_t LightLaunchesCountedByHand(const std::string& path) {
  auto db = sql::Db::OpenReadOnly(path);
  EXPECT_TRUE(db.ok());
  std::set<int64_t> configs;
  std::map<int64_t, std::set<int64_t>> record_configs;  // correlationId -> configIds recorded
  std::map<int64_t, int64_t> records;                   // correlationId -> records
  int64_t launches = 0;
  auto each = [&](const char* query, const std::function<void(sql::Stmt&)>& row) {
    auto stmt = db->Prepare(query);
    EXPECT_TRUE(stmt.ok());
    while (true) {
      auto step = stmt->Step();
      if (!step.ok() || !*step) break;
      row(*stmt);
    }
  };
  each("SELECT id FROM OCC_KERNEL_CONFIG", [&](sql::Stmt& s) { configs.insert(s.Int64(0)); });
  each("SELECT correlationId, configId FROM OCC_LAUNCH", [&](sql::Stmt& s) {
    ++records[s.Int64(0)];
    record_configs[s.Int64(0)].insert(s.Int64(1));
    launches += configs.count(s.Int64(1)) > 0 ? 1 : 0;
  });
  std::map<int64_t, std::vector<std::tuple<bool, int64_t, int64_t>>> calls;  // (no record, configId, start)
  each("SELECT correlationId, configId, apiStart FROM OCC_LAUNCH_CALL", [&](sql::Stmt& s) {
    const int64_t correlation = s.Int64(0), config = s.Int64(1);
    calls[correlation].emplace_back(record_configs[correlation].count(config) == 0, config, s.Int64(2));
  });
  for (auto& [correlation, list] : calls) {
    std::sort(list.begin(), list.end());
    for (size_t i = static_cast<size_t>(records[correlation]); i < list.size(); ++i) {
      launches += configs.count(std::get<1>(list[i])) > 0 ? 1 : 0;
    }
  }
  return launches;
}

TEST(ParallelScan, LightTraceEqualsOneRange) {
  ScratchDir dir;
  const std::string path = dir.Path("light.db");
  MakeOccTrace(path, OcctraceInserts(/*light=*/true));
  const ScanResult one = ScanWithJobs(path, 1);
  // The rows of the CUPTI_ACTIVITY_KIND_KERNEL view (light_trace_test).
  const int64_t launches = LightLaunchesCountedByHand(path);
  ASSERT_GT(launches, 3000);
  EXPECT_EQ(one.scan.launches, launches);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), launches);
  for (int jobs : {2, 4, 9}) {
    ExpectSameScan(one, ScanWithJobs(path, jobs), "--jobs " + std::to_string(jobs));
  }
}

TEST(ParallelScan, MoreRangesThanRowsAndEmptyTables) {
  ScratchDir dir;
  const std::string few = dir.Path("few.sqlite");
  MakeDb(few, NsysSchemaSql() + kDevices + R"sql(
INSERT INTO StringIds VALUES (1, 'k');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
  staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal)
VALUES (100, 200, 0, 1, 7, 1, 1, 32, 1, 1, 1, 64, 1, 1, 0, 0, 0, 0),
       (300, 350, 0, 1, 7, 1, 1, 32, 1, 1, 1, 64, 1, 1, 0, 0, 0, 0),
       (400, 700, 0, 1, 7, 1, 1, 32, 2, 1, 1, 64, 1, 1, 0, 0, 0, 0);
)sql");
  const ScanResult one = ScanWithJobs(few, 1);
  ASSERT_EQ(one.scan.configs.size(), 2u);
  EXPECT_EQ(one.scan.configs[0].launches, 2);
  EXPECT_EQ(one.scan.configs[0].min_ns, 50);
  EXPECT_EQ(one.scan.configs[0].max_ns, 100);
  EXPECT_EQ(one.scan.first_start, 100);
  EXPECT_EQ(one.scan.last_end, 700);
  ExpectSameScan(one, ScanWithJobs(few, 8), "3 rows, --jobs 8");

  const std::string empty_nsys = dir.Path("empty.sqlite");
  MakeDb(empty_nsys, NsysSchemaSql() + kDevices);
  const ScanResult empty_one = ScanWithJobs(empty_nsys, 1);
  EXPECT_EQ(empty_one.scan.launches, 0);
  ExpectSameScan(empty_one, ScanWithJobs(empty_nsys, 4), "empty export, --jobs 4");

  const std::string empty_trace = dir.Path("empty.db");
  MakeOccTrace(empty_trace, "INSERT INTO OCC_META VALUES ('schema_version', '1');");
  ExpectSameScan(ScanWithJobs(empty_trace, 1), ScanWithJobs(empty_trace, 4),
                 "empty trace, --jobs 4");
}

TEST(ParallelScan, SqlDumpReadsInOneRange) {
  ScratchDir dir;
  const std::string dump = dir.Path("export.sql");
  testing::WriteFile(dump, NsysExportSql());
  const std::string file = dir.Path("export.sqlite");
  MakeDb(file, NsysExportSql());
  const ScanResult from_file = ScanWithJobs(file, 1);
  ExpectSameScan(from_file, ScanWithJobs(dump, 4), ".sql dump, --jobs 4");
}

TEST(ParallelScan, SplitsRowidsEvenlyAndFallsBackToOneRange) {
  auto db = sql::Db::OpenMemory("test");
  ASSERT_TRUE(db.ok());
  const Status made = db->Exec("CREATE TABLE t (x INTEGER);"
                       "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) "
                       "INSERT INTO t SELECT i FROM n;"
                       "CREATE TABLE no_rowid (a INTEGER PRIMARY KEY, b) WITHOUT ROWID;"
                       "INSERT INTO no_rowid VALUES (1, 1), (2, 2), (3, 3);"
                       "CREATE TABLE shadow (rowid TEXT, b); INSERT INTO shadow VALUES ('a', 1);"
                       "CREATE TABLE wide (x); INSERT INTO wide (rowid, x) VALUES "
                       "(-9223372036854775807, 1), (9223372036854775807, 2);"
                       "CREATE TABLE no_rows (x);");
  ASSERT_TRUE(made.ok()) << made.message();
  const std::vector<RowidRange> four = SplitRowids(*db, "t", 4);
  ASSERT_EQ(four.size(), 4u);
  int64_t next = 1;
  for (const RowidRange& r : four) {
    EXPECT_FALSE(r.whole_table);
    EXPECT_EQ(r.first, next);
    EXPECT_GE(r.last, r.first);
    EXPECT_LE(r.last - r.first, 2);
    next = r.last + 1;
  }
  EXPECT_EQ(next, 11);
  EXPECT_EQ(SplitRowids(*db, "t", 50).size(), 10u);  // one row per range at most
  // Automatic: too few rows for threads.
  EXPECT_TRUE(SplitRowids(*db, "t", 0).at(0).whole_table);
  EXPECT_TRUE(SplitRowids(*db, "t", 1).at(0).whole_table);
  for (const char* table : {"no_rowid", "shadow", "no_rows", "missing"}) {
    const std::vector<RowidRange> r = SplitRowids(*db, table, 4);
    ASSERT_EQ(r.size(), 1u) << table;
    EXPECT_TRUE(r[0].whole_table) << table;
  }
  const std::vector<RowidRange> wide = SplitRowids(*db, "wide", 3);
  ASSERT_EQ(wide.size(), 3u);
  EXPECT_EQ(wide.front().first, -9223372036854775807);
  EXPECT_EQ(wide.back().last, 9223372036854775807);
  EXPECT_EQ(wide[1].first, wide[0].last + 1);
  EXPECT_EQ(wide[2].first, wide[1].last + 1);
}

TEST(ParallelScan, FirstFailedRangeInRangeOrderIsTheError) {
  ScratchDir dir;
  const std::string path = dir.Path("t.db");
  MakeDb(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
  auto db = sql::Db::OpenReadOnly(path);
  ASSERT_TRUE(db.ok());
  std::vector<RowidRange> ranges(5);
  std::atomic<int> ran{0};
  Status status = RunRangePasses(*db, path, ranges, [&](const RangePass& pass) -> Status {
    ++ran;
    if (pass.index == 3) return BadInput("range 3 failed");
    if (pass.index == 1) return BadInput("range 1 failed");
    return OkStatus();
  });
  EXPECT_EQ(status.message(), "range 1 failed");
  EXPECT_GE(ran.load(), 2);
  // A connection a thread cannot open is an error, not a crash.
  Status unopened = RunRangePasses(*db, dir.Path("missing/none.db"), ranges,
                                   [](const RangePass&) { return OkStatus(); });
  EXPECT_FALSE(unopened.ok());
  EXPECT_NE(unopened.message().find("none.db"), std::string::npos) << unopened.message();
}

TEST(ParallelScan, ReportIsTheSameForEveryJobs) {
  ScratchDir dir;
  const std::string nsys = dir.Path("export.sqlite");
  MakeDb(nsys, NsysExportSql());
  const std::string trace = dir.Path("trace.db");
  MakeOccTrace(trace, OcctraceInserts(/*light=*/false));
  for (const std::string& path : {nsys, trace}) {
    SCOPED_TRACE(path);
    const auto one = RunCli({path, "--format", "json", "--top", "0", "--jobs", "1"});
    const auto four = RunCli({path, "--format", "json", "--top", "0", "--jobs", "4"});
    EXPECT_EQ(one.code, 0) << one.err;
    EXPECT_EQ(one.code, four.code);
    EXPECT_EQ(one.err, four.err);
    EXPECT_EQ(one.out, four.out);
    EXPECT_NE(one.out.find("\"launches\""), std::string::npos);
  }
  const auto bad = RunCli({nsys, "--jobs", "-1"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--jobs"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace occ
