// Tuning overhead on the real H200 traces checked in as goldens: Triton's @triton.autotune
// (tests/golden/h200_triton_autotune: do_bench's cache flush, an ATen FillFunctor<int> launch
// before each timed trial, and the trials of the configurations it rejected) and JAX
// (tests/golden/h200_jax_mlp: XLA's autotuner's RedzoneAllocatorKernelImpl). The expected GPU
// time is SQLite's sum over the trace's own launch rows, not the analyzer's.
#include "analyzer/analyze/analysis.h"

#include <gtest/gtest.h>

#include <string>

#include "sqlite/sqlite_db.h"
#include "tests/analysis/test_traces.h"

namespace occ {
namespace {

std::string Golden(const std::string& name) {
  return testing::ReadFile(std::string(OCC_ANALYSIS_TEST_DIR) + "/../golden/" + name + "/input.sql");
}

// SQLite's sum of launch durations over the configurations `where` selects (c: OCC_KERNEL_CONFIG,
// s: its demangled name), and how many of those launches were replayed (no time in OCC_LAUNCH).
std::pair<int64_t, int64_t> LaunchTime(const std::string& path, const std::string& where) {
  auto db = sql::Db::OpenReadOnly(path);
  EXPECT_TRUE(db.ok());
  auto stmt = db->Prepare("SELECT coalesce(sum(l.duration), 0), coalesce(sum(l.start = 0), 0) FROM OCC_LAUNCH l "
                          "JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.demangledName "
                          "WHERE " + where);
  EXPECT_TRUE(stmt.ok()) << stmt.status().message();
  EXPECT_TRUE(*stmt->Step());
  return {stmt->Int64(0), stmt->Int64(1)};
}

TEST(TuningOverhead, TritonAutotuneFlushAndTrialsAreApartFromTheProgram) {
  testing::ScratchDir dir;
  const std::string path = dir.Path("triton.db");
  testing::MakeOccTrace(path, Golden("h200_triton_autotune"));
  // The flush (its one FillFunctor<int> configuration) and the softplus_add configurations
  // whose launches all ended before the last one's: every one but the configuration that ran on.
  const auto [flush_ns, flush_replayed] = LaunchTime(path, "s.value LIKE '%FillFunctor<int>%'");
  const auto [trials_ns, trials_replayed] = LaunchTime(
      path, "s.value = 'softplus_add' AND c.id != (SELECT configId FROM OCC_LAUNCH l2 JOIN OCC_KERNEL_CONFIG c2 "
            "ON c2.id = l2.configId JOIN StringIds s2 ON s2.id = c2.demangledName WHERE s2.value = 'softplus_add' "
            "ORDER BY l2.start DESC LIMIT 1)");
  ASSERT_GT(flush_ns, 0);
  ASSERT_GT(trials_ns, 0);
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  // Replayed launches have their GPU time from the profiler (OCC_ACHIEVED), not OCC_LAUNCH: at
  // most ~100 µs each for these kernels.
  const int64_t slack = (flush_replayed + trials_replayed) * 100'000;
  EXPECT_NEAR(static_cast<double>(report->summary().tuning_overhead_ns()), static_cast<double>(flush_ns + trials_ns),
              static_cast<double>(slack));
  ASSERT_EQ(report->summary().tuning_overhead_by_size(), 1);
  EXPECT_EQ(report->summary().tuning_overhead_by(0), "Triton's autotuner (@triton.autotune)");
  bool chosen_ranked = false;
  for (const auto& g : report->groups()) {
    EXPECT_EQ(g.name().find("FillFunctor<int>"), std::string::npos) << "the flush is not ranked";
    EXPECT_FALSE(g.autotuning_trial()) << "trials are not ranked";
    EXPECT_TRUE(g.tuning_overhead().empty());
    chosen_ranked |= g.name() == "softplus_add";
  }
  EXPECT_TRUE(chosen_ranked) << "the configuration the autotuner chose is the program's";
  EXPECT_EQ(report->actions_size(), 0);
}

TEST(TuningOverhead, XlaRedzoneChecksAreTuning) {
  testing::ScratchDir dir;
  const std::string path = dir.Path("jax.db");
  testing::MakeOccTrace(path, Golden("h200_jax_mlp"));
  const auto [redzone_ns, redzone_replayed] = LaunchTime(path, "s.value LIKE '%RedzoneAllocatorKernelImpl%'");
  ASSERT_GT(redzone_ns, 0);
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  // The redzone checks and XLA's trials: at least the checks' time.
  EXPECT_GE(report->summary().tuning_overhead_ns() + redzone_replayed * 100'000, redzone_ns);
  bool xla = false;
  for (const auto& by : report->summary().tuning_overhead_by()) xla |= by == "XLA's autotuner";
  EXPECT_TRUE(xla);
  for (const auto& g : report->groups()) {
    EXPECT_EQ(g.name().find("RedzoneAllocatorKernelImpl"), std::string::npos) << "not ranked";
  }
}

// A cold torch.compile (tests/golden/h200_compile_reductions): Inductor's benchmarker runs several
// cache flushes in a row before its trials of several kernels, so no single kernel follows 90 % of
// the fills; the chain still makes every fill tuning. Expected: SQLite's sum over the fill's own
// launches (47.5 ms), within the tuning overhead with the trials.
TEST(TuningOverhead, InductorFlushChainsBeforeTrialsAreTuning) {
  testing::ScratchDir dir;
  const std::string path = dir.Path("inductor.db");
  testing::MakeOccTrace(path, Golden("h200_compile_reductions"));
  const auto [flush_ns, flush_replayed] = LaunchTime(path, "s.value LIKE '%FillFunctor<int>%'");
  ASSERT_GT(flush_ns, 40'000'000);
  ASSERT_EQ(flush_replayed, 0);
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_GE(report->summary().tuning_overhead_ns(), flush_ns);
  for (const auto& g : report->groups()) {
    EXPECT_EQ(g.name().find("FillFunctor<int>"), std::string::npos) << "the flush is not ranked";
  }
}

}  // namespace
}  // namespace occ
