// PM-sample attribution (analyzer/read/pm_attribution.h) on recorded-shape sample streams, built as
// text SQL here: one kernel alone, two overlapping streams, kernels shorter than the interval,
// an overflowed buffer, a context destroyed between samples, the minimum sample count, bad rows,
// the DRAM throughput verdict, replay beside PM, and summaries. Every expected figure is worked
// out by hand in the comments from the rows written (H100: 64 warps per SM), never read back
// from occ-report.
#include "analyzer/read/pm_attribution.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/analyze/analysis.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::MakeOccTrace;
using testing::RunCli;
using testing::ScratchDir;

// An H100 and four configurations: A (grid 264, block 256), B (grid 132, block 128), S (grid 66,
// block 64) and Q (grid 33, block 32) on context 1, and C (A's kernel, grid 528) on context 2.
constexpr char kDevice[] = R"sql(
INSERT INTO StringIds VALUES (1, 'kern_a'), (2, 'kern_a'), (3, '_Z6kern_av'),
  (4, 'kern_b'), (5, 'kern_b'), (6, '_Z6kern_bv'), (7, 'kern_s'), (8, 'kern_s'), (9, '_Z6kern_sv'),
  (10, 'kern_q'), (11, 'kern_q'), (12, '_Z6kern_qv');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 42, 'GPU-0', 132);
INSERT INTO OCC_DEVICE VALUES (0, 1024, 2048, 0, NULL, NULL, 13000);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 32, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (2, 0, 1, NULL, 4, 5, 6, 0, 0, 32, 132, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (3, 0, 1, NULL, 7, 8, 9, 0, 0, 32, 66, 1, 1, 64, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (4, 0, 1, NULL, 10, 11, 12, 0, 0, 32, 33, 1, 1, 32, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (5, 0, 2, NULL, 1, 2, 3, 0, 0, 32, 528, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0);
)sql";

constexpr int kA = 1, kB = 2, kS = 3, kQ = 4, kC = 5;

struct Rows {
  std::string meta = "('schema_version', '1'), ('pid', '42'), ('achieved_mode', 'pm'), "
                     "('pm_status', 'on'), ('pm_interval_ns', '20000')";
  std::vector<std::string> launches;
  std::vector<std::string> samples;
  int64_t correlation = 0;

  void Launch(int config, int64_t start, int64_t duration, int stream = 7) {
    launches.push_back("(" + std::to_string(start) + ", " + std::to_string(duration) + ", " +
                       std::to_string(config) + ", " + std::to_string(stream) + ", " +
                       std::to_string(++correlation) + ")");
  }
  // dram < 0: NULL (not collected).
  void Sample(int64_t start, int64_t end, double cycles, double warps, double dram = -1) {
    samples.push_back("(0, " + std::to_string(start) + ", " + std::to_string(end) + ", " +
                      std::to_string(cycles) + ", " + std::to_string(warps) + ", " +
                      (dram < 0 ? std::string("NULL") : std::to_string(dram)) + ")");
  }
  std::string Sql() const {
    std::string sql = "INSERT INTO OCC_META VALUES " + meta + ";\n" + kDevice;
    auto values = [](const std::vector<std::string>& rows) {
      std::string out;
      for (const auto& r : rows) out += (out.empty() ? "" : ",\n  ") + r;
      return out;
    };
    if (!launches.empty()) sql += "INSERT INTO OCC_LAUNCH VALUES " + values(launches) + ";\n";
    if (!samples.empty()) sql += "INSERT INTO OCC_PM_SAMPLE VALUES " + values(samples) + ";\n";
    return sql;
  }
};

occtrace::Report Report(const ScratchDir& dir, const Rows& rows, const std::string& name = "pm.db") {
  const std::string path = dir.Path(name);
  MakeOccTrace(path, rows.Sql());
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? *report : occtrace::Report();
}

const occtrace::KernelGroup* Group(const occtrace::Report& report, int grid_x) {
  for (const auto& g : report.groups()) {
    if (g.grid_x() == grid_x) return &g;
  }
  return nullptr;
}

// A: one 980 us launch [110 us, 1090 us) alone. 52 samples of 20 us from 80 us: the first
// ([80, 100)) and the last ([1100, 1120)) overlap no launch; [100, 120) and [1080, 1100) hold the
// launch's start and end beside idle time (edge, 1e6 cycles, 16e6 warps = 25 %); the 48 between
// are inside it (2e6 cycles, 64e6 warps = 50 %).
//   Σ warps    = 48 × 64e6 + 2 × 16e6        = 3104e6
//   Σ capacity = (48 × 2e6 + 2 × 1e6) × 64   = 6272e6      → 49.4898 %; inside only: 50 %.
Rows OneKernelAlone() {
  Rows rows;
  rows.Launch(kA, 110'000, 980'000);
  for (int i = 0; i < 52; ++i) {
    const int64_t start = 80'000 + 20'000 * i;
    if (i == 0 || i == 51) {
      rows.Sample(start, start + 20'000, 5e5, 1e6);
    } else if (i == 1 || i == 50) {
      rows.Sample(start, start + 20'000, 1e6, 16e6);
    } else {
      rows.Sample(start, start + 20'000, 2e6, 64e6);
    }
  }
  return rows;
}

TEST(PmAttribution, OneKernelAloneUsesInsideAndEdgeSamples) {
  ScratchDir dir;
  occtrace::Report report = Report(dir, OneKernelAlone());
  const occtrace::KernelGroup* a = Group(report, 264);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->achieved().has_pm());
  const occtrace::PmAchieved& pm = a->achieved().pm();
  EXPECT_EQ(pm.clean_samples(), 50);
  EXPECT_EQ(pm.inside_samples(), 48);
  EXPECT_EQ(pm.sequence_samples(), 0);
  EXPECT_EQ(pm.mixed_samples(), 0);
  EXPECT_NEAR(pm.achieved_pct(), 100.0 * 3104 / 6272, 1e-9);
  EXPECT_NEAR(pm.inside_pct(), 50.0, 1e-9);
  EXPECT_EQ(pm.dram_pct(), -1);
  // No replay in the trace: PM's figure is the achieved figure.
  EXPECT_EQ(a->achieved().source(), "pm");
  EXPECT_EQ(a->achieved().samples(), 50);
  EXPECT_NEAR(a->achieved().mean_pct(), 100.0 * 3104 / 6272, 1e-9);
  const occtrace::InputFile& file = report.files(0);
  EXPECT_EQ(file.pm_status(), "on");
  EXPECT_EQ(file.pm_interval_ns(), 20'000);
  EXPECT_EQ(file.pm_samples(), 52);
  EXPECT_EQ(file.pm_clean_samples(), 50);
  EXPECT_EQ(file.pm_mixed_samples(), 0);
  EXPECT_EQ(file.pm_unattributed_samples(), 2);
  EXPECT_EQ(file.pm_bad_samples(), 0);
}

// A [100 us, 1100 us) on stream 7 and B [500 us, 700 us) on stream 8. 50 samples of 20 us from
// 100 us, all inside A; the 10 from 500 us to 680 us overlap B too: mixed (written at 90 %, which
// would show if they were used). A keeps its 40 clean samples at 50 % exactly; B has none.
TEST(PmAttribution, SamplesSharedByTwoStreamsAreMixedAndLeftOut) {
  ScratchDir dir;
  Rows rows;
  rows.Launch(kA, 100'000, 1'000'000, 7);
  rows.Launch(kB, 500'000, 200'000, 8);
  for (int i = 0; i < 50; ++i) {
    const int64_t start = 100'000 + 20'000 * i;
    const bool beside_b = start >= 500'000 && start < 700'000;
    rows.Sample(start, start + 20'000, 2e6, beside_b ? 0.9 * 64 * 2e6 : 0.5 * 64 * 2e6);
  }
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* b = Group(report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->achieved().pm().clean_samples(), 40);
  EXPECT_EQ(a->achieved().pm().mixed_samples(), 10);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(b->achieved().pm().clean_samples(), 0);
  EXPECT_EQ(b->achieved().pm().mixed_samples(), 10);
  EXPECT_EQ(b->achieved().pm().achieved_pct(), -1);
  EXPECT_EQ(b->achieved().samples(), 0);
  EXPECT_EQ(report.files(0).pm_mixed_samples(), 10);
  EXPECT_EQ(report.files(0).pm_clean_samples(), 40);
}

// S: 30 launches of 5 us, one every 40 us from 1007 us; the collector drops idle samples, so the
// trace has one 20 us sample per launch, [1000 + 40k, 1020 + 40k) us: each holds the whole launch
// and idle time beside it (edge). Alternating counters: k even 3e5 cycles, 7.68e6 warps (40 %);
// k odd 1e5 cycles, 1.92e6 warps (30 %). Summed over the 30 launches:
//   Σ warps    = 15 × 7.68e6 + 15 × 1.92e6   = 144e6
//   Σ capacity = (15 × 3e5 + 15 × 1e5) × 64  = 384e6   → 37.5 % (the mean of the samples' own
//   percentages would be 35 %: the figure is a ratio of sums, weighted by active cycles).
TEST(PmAttribution, KernelsShorterThanTheIntervalSumTheirCleanSamplesOverLaunches) {
  ScratchDir dir;
  Rows rows;
  for (int k = 0; k < 30; ++k) {
    const int64_t base = 1'000'000 + 40'000 * k;
    rows.Launch(kS, base + 7'000, 5'000);
    if (k % 2 == 0) {
      rows.Sample(base, base + 20'000, 3e5, 7.68e6);
    } else {
      rows.Sample(base, base + 20'000, 1e5, 1.92e6);
    }
  }
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* s = Group(report, 66);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->achieved().pm().clean_samples(), 30);
  EXPECT_EQ(s->achieved().pm().inside_samples(), 0);
  EXPECT_EQ(s->achieved().pm().inside_pct(), -1);
  EXPECT_NEAR(s->achieved().pm().achieved_pct(), 37.5, 1e-9);
  EXPECT_EQ(s->achieved().source(), "pm");
}

// Q: two 5 us launches in each of 25 samples ([s + 2, s + 7) and [s + 10, s + 15) us): clean, of
// the sequence kind, at 1e5 cycles and 3.2e6 warps (50 %). A third pair overlaps in time (two
// streams, [s + 2, s + 12) and [s + 5, s + 15)): mixed even though both are Q's.
TEST(PmAttribution, SeveralLaunchesOfOneConfigurationInSequenceAreCleanOverlappingOnesMixed) {
  ScratchDir dir;
  Rows rows;
  for (int k = 0; k < 25; ++k) {
    const int64_t s = 2'000'000 + 20'000 * k;
    rows.Launch(kQ, s + 2'000, 5'000);
    rows.Launch(kQ, s + 10'000, 5'000);
    rows.Sample(s, s + 20'000, 1e5, 3.2e6);
  }
  const int64_t s = 3'000'000;
  rows.Launch(kQ, s + 2'000, 10'000, 7);
  rows.Launch(kQ, s + 5'000, 10'000, 8);
  rows.Sample(s, s + 20'000, 1e5, 6.0e6);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* q = Group(report, 33);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->achieved().pm().clean_samples(), 25);
  EXPECT_EQ(q->achieved().pm().sequence_samples(), 25);
  EXPECT_EQ(q->achieved().pm().mixed_samples(), 1);
  EXPECT_NEAR(q->achieved().pm().achieved_pct(), 50.0, 1e-9);
}

// An overflowed buffer: A runs [100 us, 2100 us); samples 0-29 and 70-99 of 20 us from 100 us
// arrived, 30-69 were lost (OCC_META pm_overflows 1), and the sample after the gap starts late
// and spans 60 us. Nothing breaks: 61 inside samples at 2e6 cycles, 38.4e6 warps (30 %) → 30 %.
TEST(PmAttribution, AnOverflowedBufferLeavesAGapAndNothingElse) {
  ScratchDir dir;
  Rows rows;
  rows.meta += ", ('pm_samples', '61'), ('pm_overflows', '1')";
  rows.Launch(kA, 100'000, 2'000'000);
  for (int i = 0; i < 100; ++i) {
    if (i >= 30 && i < 70) continue;
    const int64_t start = 100'000 + 20'000 * i;
    rows.Sample(start, start + 20'000, 2e6, 38.4e6);
  }
  rows.Sample(800'000, 860'000, 2e6, 38.4e6);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->achieved().pm().clean_samples(), 61);
  EXPECT_EQ(a->achieved().pm().inside_samples(), 61);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 30.0, 1e-9);
  EXPECT_EQ(report.files(0).pm_overflows(), 1);
}

// Context 1 runs A [100 us, 600 us) and is destroyed; samples go on (another process's work on
// the device: [700 us, 900 us), 10 samples, no traced launch); context 2 runs C [1000 us,
// 1500 us). The rows are written out of time order. A: 25 inside samples at 50 %; C: 25 at 25 %;
// 10 unattributed.
TEST(PmAttribution, SamplesAcrossAContextsDestructionGoToEachContextsLaunches) {
  ScratchDir dir;
  Rows rows;
  rows.Launch(kC, 1'000'000, 500'000);
  rows.Launch(kA, 100'000, 500'000);
  for (int i = 24; i >= 0; --i) rows.Sample(1'000'000 + 20'000 * i, 1'020'000 + 20'000 * i, 1e6, 16e6);
  for (int i = 0; i < 10; ++i) rows.Sample(700'000 + 20'000 * i, 720'000 + 20'000 * i, 1e6, 60e6);
  for (int i = 0; i < 25; ++i) rows.Sample(100'000 + 20'000 * i, 120'000 + 20'000 * i, 1e6, 32e6);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* c = Group(report, 528);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(a->achieved().pm().clean_samples(), 25);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(c->achieved().pm().clean_samples(), 25);
  EXPECT_NEAR(c->achieved().pm().achieved_pct(), 25.0, 1e-9);
  EXPECT_EQ(report.files(0).pm_unattributed_samples(), 10);
}

// kMinPmCleanSamples (20): A with 19 clean samples says "not enough samples"; B with 20 has a
// figure (50 %).
TEST(PmAttribution, BelowTheMinimumCleanSampleCountThereIsNoFigure) {
  ASSERT_EQ(kMinPmCleanSamples, 20);
  ScratchDir dir;
  Rows rows;
  rows.Launch(kA, 100'000, 380'000);
  for (int i = 0; i < 19; ++i) rows.Sample(100'000 + 20'000 * i, 120'000 + 20'000 * i, 1e6, 32e6);
  rows.Launch(kB, 1'000'000, 400'000);
  for (int i = 0; i < 20; ++i) rows.Sample(1'000'000 + 20'000 * i, 1'020'000 + 20'000 * i, 1e6, 32e6);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* b = Group(report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->achieved().pm().clean_samples(), 19);
  EXPECT_EQ(a->achieved().pm().achieved_pct(), -1);
  EXPECT_EQ(a->achieved().samples(), 0);
  EXPECT_EQ(a->achieved().source(), "");
  EXPECT_EQ(b->achieved().pm().clean_samples(), 20);
  EXPECT_NEAR(b->achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(b->achieved().source(), "pm");

  auto text = RunCli({dir.Path("pm.db"), "--top", "0"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("not enough samples"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("n/e"), std::string::npos) << text.out;
}

// Rows the counters cannot have produced are counted and skipped, with a warning: an end before
// the start, a negative counter, warps above the device's 64 per active cycle.
TEST(PmAttribution, UnusableSampleRowsAreSkippedWithAWarning) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  rows.Sample(500'000, 500'000, 1e6, 1e6);
  rows.Sample(500'000, 520'000, -1, 1e6);
  rows.Sample(500'000, 520'000, 1e6, 65e6);
  occtrace::Report report = Report(dir, rows);
  EXPECT_EQ(report.files(0).pm_bad_samples(), 3);
  const occtrace::KernelGroup* a = Group(report, 264);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->achieved().pm().clean_samples(), 50);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 100.0 * 3104 / 6272, 1e-9);
  bool warned = false;
  for (const auto& w : report.files(0).warnings()) warned |= w.find("OCC_PM_SAMPLE rows unusable") != std::string::npos;
  EXPECT_TRUE(warned);
}

// The throughput verdict from PM's DRAM throughput, time-weighted over the clean samples: 20
// samples of 20 us at 90 % and 20 of 60 us at 80 % → (20×20×90 + 20×60×80) / (20×20 + 20×60) =
// 82.5 %: near the DRAM ceiling. Below 80 %, with DRAM the only unit, no latency-bound claim.
TEST(PmAttribution, TheThroughputVerdictUsesTheCleanSamplesDram) {
  ScratchDir dir;
  Rows rows;
  rows.Launch(kA, 100'000, 2'000'000);
  for (int i = 0; i < 20; ++i) rows.Sample(100'000 + 20'000 * i, 120'000 + 20'000 * i, 1e6, 32e6, 90);
  for (int i = 0; i < 20; ++i) rows.Sample(600'000 + 60'000 * i, 660'000 + 60'000 * i, 1e6, 32e6, 80);
  rows.Launch(kB, 3'000'000, 1'000'000);
  for (int i = 0; i < 20; ++i) rows.Sample(3'000'000 + 20'000 * i, 3'020'000 + 20'000 * i, 1e6, 32e6, 30);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* b = Group(report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->achieved().has_throughput());
  EXPECT_EQ(a->achieved().throughput().source(), "pm");
  EXPECT_NEAR(a->achieved().throughput().dram_pct(), 82.5, 1e-9);
  EXPECT_EQ(a->achieved().throughput().verdict(), "near_ceiling");
  EXPECT_EQ(a->achieved().throughput().samples(), 40);
  EXPECT_EQ(b->achieved().throughput().verdict(), "below_ceiling");
  EXPECT_EQ(b->achieved().throughput().l2_pct(), -1);
}

// Replay and PM on one configuration: replay's per-launch value is the figure, PM's beside it.
// A's one launch was measured by replay at 47 %; its PM samples say 49.49 % (OneKernelAlone).
TEST(PmAttribution, ReplayIsPreferredAndPmShownBesideIt) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  rows.meta += ", ('dummy', '')";
  std::string sql = rows.Sql() +
                    "INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,"
                    "warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES "
                    "(1, 1, 'measured', 47.0, 30.08, 1000, 980000, 'sample', 0);";
  MakeOccTrace(dir.Path("both.db"), sql);
  ReportOptions options;
  options.inputs = {dir.Path("both.db")};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::KernelGroup* a = Group(*report, 264);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->achieved().source(), "replay");
  EXPECT_EQ(a->achieved().samples(), 1);
  EXPECT_DOUBLE_EQ(a->achieved().mean_pct(), 47.0);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 100.0 * 3104 / 6272, 1e-9);

  auto text = RunCli({dir.Path("both.db")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("47.0% (replay: 1 launch; PM samples: 49.5% over 50 clean samples)"),
            std::string::npos)
      << text.out;
}

// Every format labels the figure's source and count: A from PM (50 clean samples), B "not enough
// samples" (19 clean).
TEST(PmAttribution, EveryFormatSaysWhereTheFigureCameFrom) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  rows.Launch(kB, 3'000'000, 380'000);
  for (int i = 0; i < 19; ++i) rows.Sample(3'000'000 + 20'000 * i, 3'020'000 + 20'000 * i, 1e6, 32e6);
  const std::string path = dir.Path("labels.db");
  MakeOccTrace(path, rows.Sql());
  struct Case {
    const char* format;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"text", {"49.5p", "n/e", "49.5% (PM samples: 50 clean samples; 50.0% over the 48 inside one launch)",
                "not enough samples (PM: 19 clean samples, 20 needed)", "PM sampling every 20.0 µs: 71 samples"}},
      {"markdown", {"49.5 (PM, 50 samples)", "not enough samples (PM, 19)", "Achieved Occupancy (PM samples)",
              "Clean PM Samples", "PM sampling every 20.0 µs: 71 samples (69 clean, 0 mixed, 2 beside no "
              "traced launch)"}},
      {"html", {"49.5 (PM, 50 samples)", "not enough samples (PM, 19)", "Achieved Occupancy (PM samples)",
                "PM sampling every 20.0 µs"}},
      {"json", {"\"source\": \"pm\"", "\"clean_samples\": 50", "\"clean_samples\": 19", "\"achieved_pct\": -1",
                "\"pm_status\": \"on\"", "\"pm_clean_samples\": \"69\""}},
      {"csv", {"Achieved Source,PM Achieved Occupancy (%),PM Clean Samples,PM Mixed Samples",
               ",0,pm,49.49,50,0,", ",0,,,19,0,"}},
  };
  for (const Case& c : cases) {
    auto run = RunCli({path, "--format", c.format, "--top", "0"});
    ASSERT_EQ(run.code, 0) << c.format << ": " << run.err;
    for (const std::string& want : c.expected) {
      EXPECT_NE(run.out.find(want), std::string::npos) << c.format << " lacks '" << want << "':\n" << run.out;
    }
  }
}

// PM off: the header says why.
TEST(PmAttribution, TheHeaderSaysWhenPmSamplingWasOffAndWhy) {
  ScratchDir dir;
  Rows rows;
  rows.meta = "('schema_version', '1'), ('pid', '42'), ('achieved_mode', 'pm'), ('pm_status', 'no-permission')";
  rows.Launch(kA, 100'000, 1'000'000);
  MakeOccTrace(dir.Path("off.db"), rows.Sql());
  auto run = RunCli({dir.Path("off.db")});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("PM sampling off (no-permission)"), std::string::npos) << run.out;
}

// A summary carries the PM sums: the report from it gives the trace's figures.
TEST(PmAttribution, ASummaryReadsBackThePmFigures) {
  ScratchDir dir;
  MakeOccTrace(dir.Path("t.db"), OneKernelAlone().Sql());
  auto summarize = RunCli({"summarize", dir.Path("t.db"), "-o", dir.Path("t.s.json")});
  ASSERT_EQ(summarize.code, 0) << summarize.err;
  ReportOptions options;
  options.inputs = {dir.Path("t.s.json")};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::KernelGroup* a = Group(*report, 264);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->achieved().source(), "pm");
  EXPECT_EQ(a->achieved().pm().clean_samples(), 50);
  EXPECT_EQ(a->achieved().pm().inside_samples(), 48);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 100.0 * 3104 / 6272, 1e-9);
  EXPECT_EQ(report->files(0).pm_clean_samples(), 50);
}

// `occ-report launches`: each launch's own clean samples. OneKernelAlone's launch has 50 (48
// inside, 2 edge) → 49.49 % from PM; C's launch has 10 (at 50 %), too few: n/e.
TEST(PmAttribution, TheLaunchesListingGivesEachLaunchItsOwnCleanSamples) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  // C: 10 samples alone (too few for a figure of its own).
  rows.Launch(kC, 3'000'000, 200'000);
  for (int i = 0; i < 10; ++i) rows.Sample(3'000'000 + 20'000 * i, 3'020'000 + 20'000 * i, 1e6, 32e6);
  MakeOccTrace(dir.Path("l.db"), rows.Sql());
  auto csv = RunCli({"launches", dir.Path("l.db"), "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("Achieved Occupancy (%),Achieved Source,Achieved Above Theoretical,PM Clean Samples,"),
            std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",49.49,pm,,50,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",,,,10,"), std::string::npos) << csv.out;
  auto text = RunCli({"launches", dir.Path("l.db")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("49.5p"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("n/e"), std::string::npos) << text.out;
}

// The sweep on its own: launches of a device before the samples' device are never compared, and
// a device without a known max warps per SM counts its clean samples without using them.
TEST(PmSweep, UnknownDeviceSamplesAreCountedNotUsed) {
  PmSweep sweep(1);
  sweep.BeginDevice(0);
  sweep.AddLaunch(0, 100, 0);
  sweep.AddSample(10, 20, 1e3, 1e4, -1);
  EXPECT_EQ(sweep.counts().unknown_device, 1);
  EXPECT_EQ(sweep.sums()[0].clean, 0);
  sweep.BeginDevice(64);
  sweep.AddSample(10, 20, 1e3, 1e4, -1);
  EXPECT_EQ(sweep.counts().unattributed, 1);
}

}  // namespace
}  // namespace occ
