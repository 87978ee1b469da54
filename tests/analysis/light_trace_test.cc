// occ-report on light traces (OCC_META trace_mode = 'light'): every launch counted from
// OCC_LAUNCH_CALL, GPU time estimated from the launches timed in OCC_LAUNCH. Expected values are
// worked out by hand from the rows below.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analyzer/analyze/analysis.h"
#include "sqlite/sqlite_db.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::MakeOccTrace;
using testing::ScratchDir;

// An H100, three configurations of two kernels:
//   config 1: 10 launches, 4 timed (100, 110, 90, 100 us): mean 100 us, sample variance
//             (0 + 100 + 100 + 0) / 3 = 66.67 us^2, estimate 10 x 100 = 1000 us, variance
//             10^2 x 66.67 / 4 x (1 - 4/10) = 1000 us^2, 95 % interval 1.96 x 31.62 = 61.98 us;
//   config 2: 5 launches, none timed: counted, 0 ns;
//   config 3: 3 launches, all timed (50 us each): 150 us, no sampling error.
constexpr char kLightTrace[] = R"sql(
INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '42'), ('trace_mode', 'light'),
  ('achieved_mode', 'off'), ('occtrace_version', '0.1.0');
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'gemm_kernel'), (3, '_Z11gemm_kernelv'),
  (4, 'scale_kernel'), (5, 'scale_kernel'), (6, '_Z12scale_kernelv');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 42, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 64, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 32, 512, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (3, 0, 1, NULL, 4, 5, 6, 0, 0, 32, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH_CALL VALUES
  (1000, 1, 7, 1), (2000, 1, 7, 2), (3000, 1, 7, 3), (4000, 1, 7, 4), (5000, 1, 7, 5),
  (6000, 1, 7, 6), (7000, 1, 7, 7), (8000, 1, 7, 8), (9000, 1, 7, 9), (10000, 1, 7, 10),
  (11000, 2, 7, 11), (12000, 2, 7, 12), (13000, 2, 7, 13), (14000, 2, 7, 14), (15000, 2, 7, 15),
  (16000, 3, 7, 16), (17000, 3, 7, 17), (18000, 3, 7, 18);
INSERT INTO OCC_LAUNCH VALUES
  (1500, 100000, 1, 7, 1), (2500, 110000, 1, 7, 2), (3500, 90000, 1, 7, 3), (4500, 100000, 1, 7, 4),
  (16500, 50000, 3, 7, 16), (17500, 50000, 3, 7, 17), (18500, 50000, 3, 7, 18);
)sql";

// One integer from `query` over the trace at `path`.
int64_t QueryInt(const std::string& path, const std::string& query) {
  auto db = sql::Db::OpenReadOnly(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  if (!db.ok()) return -1;
  auto stmt = db->Prepare(query);
  EXPECT_TRUE(stmt.ok()) << stmt.status().message();
  if (!stmt.ok()) return -1;
  auto row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row) << query;
  return row.ok() && *row ? stmt->Int64(0) : -1;
}

// The trace above with trace_mode 'full' (and without its calls when `drop_calls`), reported.
StatusOr<occtrace::Report> ReportAsFullTrace(const ScratchDir& dir, bool drop_calls) {
  const std::string path = dir.Path(drop_calls ? "full-no-calls.db" : "full.db");
  std::string full = kLightTrace;
  full.replace(full.find("('trace_mode', 'light')"), sizeof("('trace_mode', 'light')") - 1, "('trace_mode', 'full')");
  if (drop_calls) {
    const size_t calls = full.find("INSERT INTO OCC_LAUNCH_CALL");
    full.erase(calls, full.find("INSERT INTO OCC_LAUNCH VALUES") - calls);
  }
  MakeOccTrace(path, full);
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  return BuildReport(options);
}

const occtrace::KernelGroup* GroupWithGrid(const occtrace::Report& report, int grid_x) {
  for (const auto& g : report.groups()) {
    if (g.grid_x() == grid_x) return &g;
  }
  return nullptr;
}

TEST(LightTrace, CountsEveryLaunchAndEstimatesTimeFromTheTimedOnes) {
  ScratchDir dir;
  const std::string path = dir.Path("light.db");
  MakeOccTrace(path, kLightTrace);
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->files_size(), 1);
  EXPECT_EQ(report->files(0).trace_mode(), "light");
  EXPECT_EQ(report->files(0).launches(), 18);

  const occtrace::KernelGroup* sampled = GroupWithGrid(*report, 264);
  ASSERT_NE(sampled, nullptr);
  EXPECT_EQ(sampled->launches(), 10);
  EXPECT_TRUE(sampled->time_estimated());
  EXPECT_EQ(sampled->timed_launches(), 4);
  EXPECT_EQ(sampled->total_ns(), 1'000'000);
  EXPECT_DOUBLE_EQ(sampled->mean_ns(), 100'000);
  EXPECT_NEAR(static_cast<double>(sampled->time_ci95_ns()), 1.96 * std::sqrt(1000.0) * 1000, 1);

  const occtrace::KernelGroup* untimed = GroupWithGrid(*report, 512);
  ASSERT_NE(untimed, nullptr);
  EXPECT_EQ(untimed->launches(), 5);
  EXPECT_EQ(untimed->timed_launches(), 0);
  EXPECT_EQ(untimed->total_ns(), 0);

  const occtrace::KernelGroup* all_timed = GroupWithGrid(*report, 1024);
  ASSERT_NE(all_timed, nullptr);
  EXPECT_EQ(all_timed->launches(), 3);
  EXPECT_EQ(all_timed->total_ns(), 150'000);
  EXPECT_EQ(all_timed->time_ci95_ns(), 0);

  // Shares are of the estimated total, 1000 + 0 + 150 us.
  EXPECT_NEAR(sampled->time_pct(), 100.0 * 1000 / 1150, 1e-6);
  bool warned = false;
  for (const auto& w : report->files(0).warnings()) warned |= w.find("never ran in a timing window") != std::string::npos;
  EXPECT_TRUE(warned);
  bool noted = false;
  for (const auto& n : report->notes()) noted |= n.find("light trace") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A full trace whose CUPTI re-attached after sampling (written before 2026-11-28, when that
// re-attach was deleted; such traces are still read): its OCC_LAUNCH_CALL rows are the launches
// made meanwhile, which have no kernel record. Here the
// light trace above read as a full one: config 1 has 4 timed launches (mean 100 us) and 10 calls,
// config 2 only 5 calls (never timed), config 3 3 timed launches (50 us) and 3 calls.
TEST(LightTrace, AFullTracesCallsAreReattachGapLaunchesTimedByTheirConfigurationsMean) {
  ScratchDir dir;
  auto report = ReportAsFullTrace(dir, /*drop_calls=*/false);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->files(0).launches(), 7 + 18);
  const occtrace::KernelGroup* g = GroupWithGrid(*report, 264);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->time_estimated()) << "the timed launches are every launch CUPTI recorded";
  EXPECT_EQ(g->launches(), 14);
  EXPECT_EQ(g->total_ns(), 400'000 + 10 * 100'000);
  const occtrace::KernelGroup* never_timed = GroupWithGrid(*report, 512);
  ASSERT_NE(never_timed, nullptr);
  EXPECT_EQ(never_timed->launches(), 5);
  EXPECT_EQ(never_timed->total_ns(), 0);
  const occtrace::KernelGroup* all_timed = GroupWithGrid(*report, 1024);
  ASSERT_NE(all_timed, nullptr);
  EXPECT_EQ(all_timed->launches(), 6);
  EXPECT_EQ(all_timed->total_ns(), 300'000);
  bool warned = false;
  for (const auto& w : report->files(0).warnings()) {
    warned |= w.find("18 launches were made while CUPTI re-attached") != std::string::npos &&
              w.find("(1150 us)") != std::string::npos && w.find("5 of them of configurations never timed") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(LightTrace, AFullTraceWithoutCallsIsNotEstimated) {
  ScratchDir dir;
  auto report = ReportAsFullTrace(dir, /*drop_calls=*/true);
  ASSERT_TRUE(report.ok()) << report.status().message();
  // A full trace's launches are its OCC_LAUNCH rows: the 7 timed ones, with their own times.
  EXPECT_EQ(report->files(0).launches(), 7);
  const occtrace::KernelGroup* g = GroupWithGrid(*report, 264);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->time_estimated());
  EXPECT_EQ(g->total_ns(), 400'000);
  for (const auto& w : report->files(0).warnings()) EXPECT_EQ(w.find("re-attached"), std::string::npos) << w;
}

// #28: whatever the mode, the nsys-style view CUPTI_ACTIVITY_KIND_KERNEL has one row per launch,
// the count occ-report gives; the launches without a kernel record are flagged, timed by their
// configuration's mean. Expected rows worked out by hand from kLightTrace.
TEST(LightTrace, TheNsysViewHasEveryLaunchTheReportCounts) {
  ScratchDir dir;
  const std::string light = dir.Path("light.db");
  MakeOccTrace(light, kLightTrace);
  constexpr char kView[] = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL";
  // Light: the 18 calls, of which 7 are also the timed records (same correlationId, configId).
  EXPECT_EQ(QueryInt(light, kView), 18);
  EXPECT_EQ(QueryInt(light, std::string(kView) + " WHERE occTimeEstimated = 1"), 11);
  EXPECT_EQ(QueryInt(light, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE occTimeEstimated = 1 AND "
                            "occConfigId = 1 AND \"end\" - start = 100000"), 6) << "config 1's mean, 100 us";
  EXPECT_EQ(QueryInt(light, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE occConfigId = 2 AND "
                            "\"end\" = start"), 5) << "config 2 was never timed";
  EXPECT_EQ(QueryInt(light, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 5"), 5000)
      << "an estimated launch starts at its call";
  EXPECT_EQ(QueryInt(light, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 4"), 4500)
      << "a timed launch is its record";
  ReportOptions options;
  options.inputs = {light};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->files(0).launches(), 18);

  // A full trace with re-attach gap calls: every call is a launch of its own (correlation ids
  // may repeat across CUPTI attachments), 7 records + 18 calls.
  ScratchDir full_dir;
  auto full = ReportAsFullTrace(full_dir, /*drop_calls=*/false);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(QueryInt(full_dir.Path("full.db"), kView), 25);
  EXPECT_EQ(full->files(0).launches(), 25);
  EXPECT_EQ(QueryInt(full_dir.Path("full.db"), std::string(kView) + " WHERE occTimeEstimated = 1"), 18);

  // Light, with a timed launch that has no call (a graph node light tracing could not read) and
  // one handed back without an end (duration 0): both ran, both count, once each.
  const std::string odd = dir.Path("odd.db");
  MakeOccTrace(odd, std::string(kLightTrace) +
                        "INSERT INTO OCC_LAUNCH VALUES (19500, 50000, 3, 7, 99), (20500, 0, 1, 7, 10);\n");
  EXPECT_EQ(QueryInt(odd, kView), 19);
  options.inputs = {odd};
  auto odd_report = BuildReport(options);
  ASSERT_TRUE(odd_report.ok()) << odd_report.status().message();
  EXPECT_EQ(odd_report->files(0).launches(), 19);
  const occtrace::KernelGroup* sampled = GroupWithGrid(*odd_report, 264);
  ASSERT_NE(sampled, nullptr);
  EXPECT_EQ(sampled->launches(), 10);
  EXPECT_EQ(sampled->timed_launches(), 4) << "the record without an end is no timing sample";
  const occtrace::KernelGroup* all_timed = GroupWithGrid(*odd_report, 1024);
  ASSERT_NE(all_timed, nullptr);
  EXPECT_EQ(all_timed->launches(), 4);
}

}  // namespace
}  // namespace occ
