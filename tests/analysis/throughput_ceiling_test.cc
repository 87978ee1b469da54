// The throughput judge: Nsight Compute's Speed of Light thresholds (busiest unit >= 80 % of peak:
// near the ceiling; every unit < 60 %: latency-bound), the cap a ceiling puts on what any launch
// configuration can recover, and reading the columns from traces with and without them.
// Throughput values are the H100 membound traces' (bench/results/2026-11-24-h100-membound).
#include "analyzer/analyze/throughput_ceiling.h"

#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <string>

#include "analyzer/analyze/analysis.h"
#include "sqlite/sqlite_db.h"
#include "test_traces.h"

namespace occ {
namespace {

ThroughputSums Sums(std::initializer_list<std::array<double, kThroughputUnits>> launches) {
  ThroughputSums sums;
  for (const auto& values : launches) {
    double pct[kThroughputUnits];
    for (int i = 0; i < kThroughputUnits; ++i) pct[i] = values[static_cast<size_t>(i)];
    sums.AddLaunch(pct);
  }
  return sums;
}

occtrace::KernelGroup JudgedGroup(double time_pct, int64_t total_ns, double priority, int64_t recoverable_ns) {
  occtrace::KernelGroup g;
  g.set_time_pct(time_pct);
  g.set_total_ns(total_ns);
  g.set_priority(priority);
  g.set_recoverable_ns_upper_bound(recoverable_ns);
  return g;
}

// l2_flush: DRAM 90.7 / 91.9 % of peak on two launches.
TEST(ThroughputCeiling, NearTheDramCeilingCapsWhatOccupancyCanRecover) {
  occtrace::KernelGroup g = JudgedGroup(/*time_pct=*/50, /*total_ns=*/1'000'000, /*priority=*/25,
                                        /*recoverable_ns=*/500'000);
  JudgeThroughput(Sums({{90.7, 35.0, 2.3, 5.5, 0.0}, {91.9, 36.3, 2.4, 5.6, 0.0}}), &g);
  ASSERT_TRUE(g.achieved().has_throughput());
  const occtrace::Throughput& t = g.achieved().throughput();
  EXPECT_EQ(t.verdict(), "near_ceiling");
  EXPECT_EQ(t.busiest_unit(), "DRAM");
  EXPECT_NEAR(t.busiest_pct(), 91.3, 1e-4);
  EXPECT_NEAR(t.l2_pct(), 35.65, 1e-4);
  EXPECT_EQ(t.samples(), 2);
  EXPECT_NE(t.summary().find("raising occupancy will not make it faster"), std::string::npos) << t.summary();
  EXPECT_TRUE(NearCeiling(g));
  // At 91.3 % of peak, at most 8.7 % of the kernel's time is left to gain.
  EXPECT_EQ(g.recoverable_ns_upper_bound(), 87'000);
  EXPECT_NEAR(g.priority(), 50 * 0.087, 1e-4);
}

// Warm-cache saxpy at block 96: DRAM 16.4 %, L2 19.1 %: latency-bound, nothing capped.
TEST(ThroughputCeiling, EveryUnitBelowSixtyPercentIsLatencyBound) {
  occtrace::KernelGroup g = JudgedGroup(10, 1'000'000, 3, 300'000);
  JudgeThroughput(Sums({{16.4, 19.1, 1.3, 9.2, 0.0}}), &g);
  EXPECT_EQ(g.achieved().throughput().verdict(), "latency_bound");
  EXPECT_EQ(g.achieved().throughput().busiest_unit(), "L2");
  EXPECT_FALSE(NearCeiling(g));
  EXPECT_EQ(g.recoverable_ns_upper_bound(), 300'000);
  EXPECT_DOUBLE_EQ(g.priority(), 3);
}

// Cold-cache saxpy at block 200: DRAM 66.7 %: between the thresholds.
TEST(ThroughputCeiling, BetweenTheThresholdsIsModerateAndUncapped) {
  occtrace::KernelGroup g = JudgedGroup(10, 1'000'000, 3, 300'000);
  JudgeThroughput(Sums({{66.7, 24.2, 1.6, 12.2, 0.0}}), &g);
  EXPECT_EQ(g.achieved().throughput().verdict(), "moderate");
  EXPECT_EQ(g.recoverable_ns_upper_bound(), 300'000);
}

// A unit the chip could not fit in the pass is NULL in the trace (-1 here): left out, and the
// busiest unit is chosen among the others.
TEST(ThroughputCeiling, UnitsNotMeasuredAreLeftOut) {
  occtrace::KernelGroup g = JudgedGroup(10, 1'000'000, 3, 300'000);
  JudgeThroughput(Sums({{-1.0, -1.0, -1.0, 85.0, -1.0}}), &g);
  const occtrace::Throughput& t = g.achieved().throughput();
  EXPECT_EQ(t.busiest_unit(), "issue slots");
  EXPECT_EQ(t.verdict(), "near_ceiling");
  EXPECT_DOUBLE_EQ(t.dram_pct(), -1);
  occtrace::KernelGroup none = JudgedGroup(10, 1'000'000, 3, 300'000);
  JudgeThroughput(Sums({{-1.0, -1.0, -1.0, -1.0, -1.0}}), &none);
  EXPECT_FALSE(none.achieved().has_throughput());
}

// End to end from the real H100 trace (tests/golden/h100_membound): the columns are read and
// averaged per configuration over measured launches; the expected mean is SQLite's AVG over the
// same rows. The same trace with the columns dropped (as traces written before they existed)
// reads as "not recorded".
TEST(ThroughputCeiling, ReadFromTheTraceAndAbsentFromOlderTraces) {
  testing::ScratchDir dir;
  const std::string inserts = testing::ReadFile(std::string(OCC_ANALYSIS_TEST_DIR) + "/../golden/h100_membound/input.sql");
  const std::string path = dir.Path("membound.db");
  testing::MakeOccTrace(path, inserts);
  double expected_dram = -1;
  {
    auto db = sql::Db::OpenReadOnly(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    auto stmt = db->Prepare(
        "SELECT avg(a.dramThroughputPct) FROM OCC_ACHIEVED a JOIN OCC_LAUNCH l USING (correlationId) "
        "JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.shortName "
        "WHERE s.value = 'l2_flush' AND a.status = 'measured'");
    ASSERT_TRUE(stmt.ok()) << stmt.status().message();
    ASSERT_TRUE(*stmt->Step());
    expected_dram = stmt->Double(0);
  }
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::KernelGroup* flush = nullptr;
  for (const auto& g : report->groups()) {
    if (g.short_name() == "l2_flush") flush = &g;
  }
  ASSERT_NE(flush, nullptr);
  const occtrace::Throughput& t = flush->achieved().throughput();
  EXPECT_EQ(t.samples(), 30);
  EXPECT_NEAR(t.dram_pct(), expected_dram, 1e-4);
  EXPECT_EQ(t.verdict(), "near_ceiling");
  EXPECT_LE(flush->recoverable_ns_upper_bound(), static_cast<int64_t>(static_cast<double>(flush->total_ns()) * (100 - expected_dram) / 100) + 1);

  const std::string old_path = dir.Path("old.db");
  testing::MakeOccTrace(old_path, inserts + R"sql(
CREATE TABLE OCC_ACHIEVED_BEFORE_THROUGHPUT AS SELECT correlationId, contextId, status,
  achievedOccupancyPct, warpsActivePerCycle, smCyclesActive, gpuTimeNs, policy, sampleIndex
  FROM OCC_ACHIEVED;
DROP TABLE OCC_ACHIEVED;
ALTER TABLE OCC_ACHIEVED_BEFORE_THROUGHPUT RENAME TO OCC_ACHIEVED;
)sql");
  options.inputs = {old_path};
  report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  for (const auto& g : report->groups()) {
    EXPECT_GT(g.achieved().samples(), 0) << g.short_name();
    EXPECT_FALSE(g.achieved().has_throughput()) << g.short_name();
  }
}

}  // namespace
}  // namespace occ
