// PM-sample attribution (analyzer/read/pm_attribution.h) end to end, on recorded-shape sample
// streams built as text SQL here: one kernel alone, two streams sharing samples, kernels shorter
// than the interval, launches of one configuration in sequence and overlapping, an overflowed
// buffer, a context destroyed between samples, the standard-error gate, bad and too-long rows,
// the DRAM throughput verdict, replay beside PM, summaries, two kernels alternating in every
// sample, an inseparable pair, one configuration recorded as several rows (CUDA-graph nodes), the
// tracer's lost samples and the reason every kernel without a figure gives. Every expected figure
// is worked out by hand in the comments from the rows written (H100: 64 warps per SM), never read
// back from occ-report. The solver's own tests, on simulated streams: pm_rates_test.cc.
#include "analyzer/read/pm_attribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
// block 64) and Q (grid 33, block 32) on context 1, C (A's kernel, grid 528) on context 2, and A6.
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
  (5, 0, 2, NULL, 1, 2, 3, 0, 0, 32, 528, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (6, 0, 1, NULL, 1, 2, 3, 0, 0, 32, 264, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 7, 3, 0, 0, 0, 0, 0, 0, 0);
)sql";

// A6 is A's configuration recorded again as node 3 of CUDA graph 7: the same group.
constexpr int kA = 1, kB = 2, kS = 3, kQ = 4, kC = 5, kA6 = 6;

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

// The text printer wraps lines: its output with every run of spaces and line breaks as one space.
std::string Unwrapped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) out += space ? ' ' : c;
  }
  return out;
}

// The report of `occ-report summarize`'s summary of the trace at `db`.
occtrace::Report SummarizedReport(const ScratchDir& dir, const std::string& db) {
  const std::string summary = dir.Path("summary.json");
  auto summarize = RunCli({"summarize", db, "-o", summary});
  EXPECT_EQ(summarize.code, 0) << summarize.err;
  ReportOptions options;
  options.inputs = {summary};
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
// It only ran alone, so the solve gives exactly that ratio; its ramp-up and tail terms take the
// two edge samples, and every sample then fits: standard error 0.
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
  EXPECT_EQ(pm.samples(), 50);
  EXPECT_FALSE(pm.from_mixed());
  EXPECT_EQ(pm.status(), "measured");
  EXPECT_NEAR(pm.achieved_pct(), 100.0 * 3104 / 6272, 1e-9);
  EXPECT_NEAR(pm.clean_pct(), 100.0 * 3104 / 6272, 1e-9);
  EXPECT_NEAR(pm.standard_error(), 0, 1e-6);
  EXPECT_NEAR(pm.inside_pct(), 50.0, 1e-9);
  EXPECT_EQ(pm.dram_pct(), -1);
  EXPECT_EQ(pm.max_standard_error(), 2);
  // No replay in the trace: PM's figure is the achieved figure.
  EXPECT_EQ(a->achieved().source(), "pm");
  EXPECT_EQ(a->achieved().samples(), 50);
  EXPECT_NEAR(a->achieved().mean_pct(), 100.0 * 3104 / 6272, 1e-9);
  EXPECT_EQ(a->achieved().not_measured_reason(), "");
  const occtrace::InputFile& file = report.files(0);
  EXPECT_EQ(file.pm_status(), "on");
  EXPECT_EQ(file.pm_interval_ns(), 20'000);
  EXPECT_EQ(file.pm_samples(), 52);
  EXPECT_EQ(file.pm_clean_samples(), 50);
  EXPECT_EQ(file.pm_mixed_samples(), 0);
  EXPECT_EQ(file.pm_unattributed_samples(), 2);
  EXPECT_EQ(file.pm_bad_samples(), 0);
  EXPECT_EQ(file.pm_long_samples(), 0);
  // The tracer's loss counts are not in this trace's OCC_META: -1, never 0.
  EXPECT_EQ(file.pm_samples_lost(), -1);
  EXPECT_EQ(file.pm_samples_lost_busy(), -1);
  EXPECT_EQ(file.pm_samples_undecoded(), -1);
}

// A [100 us, 1100 us) on stream 7 at 50 % over 2e6 cycles per sample; B [500 us, 700 us) on
// stream 8 beside it, on A's SMs, and B again [1200 us, 1400 us) alone at 25 % over 1e6 cycles;
// S [300 us, 400 us) on stream 9, beside A only. 20 us samples from 100 us to 1100 us and from
// 1200 us to 1400 us. The 10 from 500 us hold A and B at once: an SM holding warps of both counts
// its cycle once, so 2e6 cycles (not 3e6) and 64e6 + 16e6 = 80e6 warps; the 5 from 300 us hold A
// and S: 2e6 cycles, 64e6 + 8e6 warps. Counters do not add over kernels running at once, so
// those samples are counted and left out (a solve over them put A at 52.3 % and S at 136 %):
// A 50 % from its 35 clean samples and B 25 % from its 10, both exactly; S, only ever beside A,
// has no figure and says why.
TEST(PmAttribution, SamplesWhereKernelsRanAtOnceAreCountedNotUsed) {
  ScratchDir dir;
  Rows rows;
  rows.Launch(kA, 100'000, 1'000'000, 7);
  rows.Launch(kS, 300'000, 100'000, 9);
  rows.Launch(kB, 500'000, 200'000, 8);
  rows.Launch(kB, 1'200'000, 200'000, 8);
  for (int i = 0; i < 50; ++i) {
    const int64_t start = 100'000 + 20'000 * i;
    const bool beside_b = start >= 500'000 && start < 700'000;
    const bool beside_s = start >= 300'000 && start < 400'000;
    rows.Sample(start, start + 20'000, 2e6, beside_b ? 80e6 : beside_s ? 72e6 : 64e6);
  }
  for (int i = 0; i < 10; ++i) rows.Sample(1'200'000 + 20'000 * i, 1'220'000 + 20'000 * i, 1e6, 16e6);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* b = Group(report, 132);
  const occtrace::KernelGroup* s = Group(report, 66);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(a->achieved().pm().clean_samples(), 35);
  EXPECT_EQ(a->achieved().pm().mixed_samples(), 0);
  EXPECT_EQ(a->achieved().pm().concurrent_samples(), 15);
  EXPECT_EQ(a->achieved().pm().samples(), 35);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(b->achieved().pm().clean_samples(), 10);
  EXPECT_EQ(b->achieved().pm().concurrent_samples(), 10);
  EXPECT_NEAR(b->achieved().pm().achieved_pct(), 25.0, 1e-9);
  EXPECT_EQ(s->achieved().pm().status(), "concurrent");
  EXPECT_EQ(s->achieved().pm().concurrent_samples(), 5);
  EXPECT_EQ(s->achieved().source(), "");
  EXPECT_EQ(s->achieved().not_measured_reason(),
            "PM samples: in each of its 5 samples other kernels ran at the same time (concurrent streams), and "
            "device-wide counters cannot be split between kernels that share the GPU at once; Nsight Compute "
            "measures it alone");
  EXPECT_EQ(report.files(0).pm_concurrent_samples(), 15);
  EXPECT_EQ(report.files(0).pm_mixed_samples(), 0);
  EXPECT_EQ(report.files(0).pm_clean_samples(), 45);
  auto text = RunCli({dir.Path("pm.db"), "--top", "0"});
  ASSERT_EQ(text.code, 0) << text.err;
  const std::string unwrapped = Unwrapped(text.out);
  for (const std::string& want : {std::string("60 samples (45 clean, 0 mixed, 15 with kernels running at once (not "
                                             "used), 0 beside no traced launch)"),
                                 std::string("n/c = other kernels always ran at the same time"),
                                 std::string("15 with other kernels running at once not used")}) {
    EXPECT_NE(unwrapped.find(want), std::string::npos) << "lacks '" << want << "':\n" << text.out;
  }
  // A summary keeps what was left out, and why S has no figure.
  const occtrace::Report summarized = SummarizedReport(dir, dir.Path("pm.db"));
  const occtrace::KernelGroup* s_again = Group(summarized, 66);
  ASSERT_NE(s_again, nullptr);
  EXPECT_EQ(s_again->achieved().pm().status(), "concurrent");
  EXPECT_EQ(s_again->achieved().pm().concurrent_samples(), 5);
  ASSERT_GT(summarized.files_size(), 0);
  EXPECT_EQ(summarized.files(0).pm_concurrent_samples(), 15);
}

// S: 30 launches of 5 us, one every 40 us from 1007 us; the collector drops idle samples, so the
// trace has one 20 us sample per launch, [1000 + 40k, 1020 + 40k) us: each holds the whole launch
// and idle time beside it (edge). Alternating counters: k even 3e5 cycles, 7.68e6 warps (40 %);
// k odd 1e5 cycles, 1.92e6 warps (30 %). Summed over the 30 launches:
//   Σ warps    = 15 × 7.68e6 + 15 × 1.92e6   = 144e6
//   Σ capacity = (15 × 3e5 + 15 × 1e5) × 64  = 384e6   → 37.5 % (the mean of the samples' own
//   percentages would be 35 %: the figure is a ratio of sums, weighted by active cycles).
// Every launch lies in one sample, so its time, start and end are one column: the fit is the
// ratio's, whose error is √(30/29 × Σ (warps − 0.375 × capacity)²) ÷ Σ capacity, with each sample
// ±0.48e6 off: √(30/29 × 30 × 0.48e6²) = 2.674e6 → 0.696 points.
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
  EXPECT_NEAR(s->achieved().pm().standard_error(), 100 * std::sqrt(30.0 / 29 * 30 * 0.48e6 * 0.48e6) / 384e6, 1e-6);
  EXPECT_EQ(s->achieved().source(), "pm");
}

// Q: two 5 us launches in each of 25 samples ([s + 2, s + 7) and [s + 10, s + 15) us): clean, of
// the sequence kind, at 1e5 cycles and 3.2e6 warps (50 %). A 26th sample holds two Q launches
// running at once (streams 7 and 8, [s + 2, s + 12) and [s + 5, s + 15)): one configuration alone,
// so clean too, its time counted twice, at 1e5 cycles and 6e6 warps. Σ warps = 25 × 3.2e6 + 6e6 =
// 86e6, Σ capacity = 26 × 1e5 × 64 = 166.4e6 → 51.68 %.
TEST(PmAttribution, LaunchesOfOneConfigurationInSequenceOrAtOnceAreClean) {
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
  EXPECT_EQ(q->achieved().pm().clean_samples(), 26);
  EXPECT_EQ(q->achieved().pm().sequence_samples(), 25);
  EXPECT_EQ(q->achieved().pm().mixed_samples(), 0);
  EXPECT_NEAR(q->achieved().pm().achieved_pct(), 100.0 * 86 / 166.4, 1e-6);
  EXPECT_EQ(report.files(0).pm_mixed_samples(), 0);
}

// An overflowed buffer: A runs [100 us, 2100 us); samples 0-29 and 70-99 of 20 us from 100 us
// arrived, 30-69 were lost (OCC_META pm_overflows 1), and the sample after the gap starts late
// and spans 60 us (3 intervals: kept). Nothing breaks: 61 inside samples at 2e6 cycles, 38.4e6
// warps (30 %) → 30 %.
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
  EXPECT_EQ(report.files(0).pm_long_samples(), 0);
}

// A sample longer than 4 intervals (5 here, 100 us, as a stopped sampler leaves them: a user's
// trace held one of 10.7 s) is rejected and counted, with a warning, though it spans A and B: A keeps
// its figure from its 20 samples alone, B (in no other sample) has none and says why.
TEST(PmAttribution, ASampleLongerThanFourIntervalsIsRejectedAndCounted) {
  ScratchDir dir;
  Rows rows;
  rows.Launch(kA, 100'000, 400'000);
  for (int i = 0; i < 20; ++i) rows.Sample(100'000 + 20'000 * i, 120'000 + 20'000 * i, 1e6, 32e6);
  rows.Launch(kA, 600'000, 50'000);
  rows.Launch(kB, 650'000, 50'000);
  rows.Sample(600'000, 700'000, 5e6, 100e6);
  occtrace::Report report = Report(dir, rows);
  EXPECT_EQ(report.files(0).pm_long_samples(), 1);
  EXPECT_EQ(report.files(0).pm_clean_samples(), 20);
  EXPECT_EQ(report.files(0).pm_mixed_samples(), 0);
  bool warned = false;
  for (const auto& w : report.files(0).warnings()) warned |= w.find("span more than 4 sampling intervals") != std::string::npos;
  EXPECT_TRUE(warned);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* b = Group(report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(b->achieved().pm().status(), "no_samples");
  EXPECT_EQ(b->achieved().not_measured_reason(),
            "no PM sample while it ran (sampling was stopped or paused then, or its samples were among this run's "
            "1 sample rejected as longer than 4 intervals)");
  auto text = RunCli({dir.Path("pm.db"), "--top", "0"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("1 too long, not used"), std::string::npos) << text.out;
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

// A figure is shown by its standard error, not by a count of clean samples.
//  A: 3 samples inside a launch whose edges fell outside them, (cycles, warps) = (1e6, 32e6),
//     (1e6, 36e6), (2e6, 60e6): 128e6 ÷ 256e6 = 50 %; off by 0, +4e6, −4e6: error
//     √(3/2 × 32e12) ÷ 256e6 = 2.71 points, above 2: no figure ("n/e").
//  S: 2 samples (1e6, 32e6) and (1e6, 33e6): 65e6 ÷ 128e6 = 50.78 %, off by ∓0.5e6: error
//     √(2 × 0.5e12) ÷ 128e6 = 0.78 points, below 2, but 2 samples (Student's t 12.7) need 0.31.
//  B: 20 samples alike, (1e6, 32e6): 50 %, error 0: shown (the old rule also asked 20).
TEST(PmAttribution, AFigureIsShownWhenItsStandardErrorIsSmallEnough) {
  ScratchDir dir;
  Rows rows;
  rows.Launch(kA, 90'000, 80'000);
  rows.Sample(100'000, 120'000, 1e6, 32e6);
  rows.Sample(120'000, 140'000, 1e6, 36e6);
  rows.Sample(140'000, 160'000, 2e6, 60e6);
  rows.Launch(kS, 490'000, 60'000);
  rows.Sample(500'000, 520'000, 1e6, 32e6);
  rows.Sample(520'000, 540'000, 1e6, 33e6);
  rows.Launch(kB, 1'000'000, 400'000);
  for (int i = 0; i < 20; ++i) rows.Sample(1'000'000 + 20'000 * i, 1'020'000 + 20'000 * i, 1e6, 32e6);
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  const occtrace::KernelGroup* s = Group(report, 66);
  const occtrace::KernelGroup* b = Group(report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->achieved().pm().achieved_pct(), -1);
  EXPECT_NEAR(a->achieved().pm().solved_pct(), 50.0, 1e-9);
  EXPECT_NEAR(a->achieved().pm().standard_error(), 100 * std::sqrt(1.5 * 32e12) / 256e6, 1e-6);
  EXPECT_EQ(a->achieved().pm().status(), "too_uncertain");
  EXPECT_EQ(a->achieved().samples(), 0);
  EXPECT_EQ(a->achieved().source(), "");
  EXPECT_EQ(a->achieved().not_measured_reason(),
            "PM samples: an error of ±2.7 points over 3 samples (0 shared with other kernels), more than the "
            "±2.0 a figure may have");
  EXPECT_EQ(s->achieved().pm().achieved_pct(), -1);
  EXPECT_NEAR(s->achieved().pm().standard_error(), 100 * 1e6 / 128e6, 1e-6);
  EXPECT_EQ(s->achieved().not_measured_reason(), "PM samples: only 2, too few to trust an error of ±0.8 points");
  EXPECT_NEAR(b->achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(b->achieved().source(), "pm");

  auto text = RunCli({dir.Path("pm.db"), "--top", "0"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("n/e"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not measured: PM samples: an error of ±2.7 points"), std::string::npos) << text.out;
  auto markdown = RunCli({dir.Path("pm.db"), "--top", "0", "--format", "markdown"});
  ASSERT_EQ(markdown.code, 0) << markdown.err;
  EXPECT_NE(markdown.out.find("error too large (PM, ± 2.7 over 3 samples)"), std::string::npos) << markdown.out;
  EXPECT_NE(markdown.out.find("too few samples (PM, 2)"), std::string::npos) << markdown.out;
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
  EXPECT_NE(text.out.find("47.0% (replay: 1 launch; PM samples: 49.5% ± 0.0 over 50 clean samples)"),
            std::string::npos)
      << text.out;
}

// Every format labels the figure's source, error and count: A from PM (50 clean samples), B with
// no figure: 3 samples whose error is 2.71 points (AFigureIsShownWhenItsStandardErrorIsSmallEnough).
TEST(PmAttribution, EveryFormatSaysWhereTheFigureCameFrom) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  rows.Launch(kB, 2'990'000, 80'000);
  rows.Sample(3'000'000, 3'020'000, 1e6, 32e6);
  rows.Sample(3'020'000, 3'040'000, 1e6, 36e6);
  rows.Sample(3'040'000, 3'060'000, 2e6, 60e6);
  const std::string path = dir.Path("labels.db");
  MakeOccTrace(path, rows.Sql());
  const std::string b_reason =
      "PM samples: an error of ±2.7 points over 3 samples (0 shared with other kernels), more than the ±2.0 a "
      "figure may have";
  struct Case {
    const char* format;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"text", {"49.5p", "n/e", "49.5% ± 0.0 (PM samples: 50 clean samples; 50.0% over the 48 inside one launch)",
                "not measured: PM samples: an error of ±2.7 points", "PM sampling every 20.0 µs: 55 samples"}},
      {"markdown", {"49.5 ± 0.0 (PM, 50 samples)", "error too large (PM, ± 2.7 over 3 samples)",
                    "Achieved Occupancy (PM samples)", "PM Samples", "PM Standard Error",
                    "PM sampling every 20.0 µs: 55 samples (53 clean, 0 mixed, 2 beside no traced launch)"}},
      {"html", {"49.5<span class=\"note\">± 0.0 (PM, 50 samples)</span>", "error too large (PM, ± 2.7 over 3 samples)",
                "Achieved Occupancy (PM samples)", "PM sampling every 20.0 µs"}},
      {"json", {"\"source\": \"pm\"", "\"clean_samples\": 50", "\"clean_samples\": 3", "\"achieved_pct\": -1",
                "\"status\": \"too_uncertain\"", "\"status\": \"measured\"", "\"from_mixed\": false",
                "\"pm_status\": \"on\"", "\"pm_clean_samples\": \"53\""}},
      {"csv", {"Achieved Source,PM Achieved Occupancy (%),PM Clean Samples,PM Mixed Samples,PM Standard Error "
               "(points),PM From Mixed Samples,PM Status,Achieved Not Measured Reason",
               ",0,pm,49.49,50,0,0.00,no,measured,,", ",0,,,3,0,2.71,no,too_uncertain,\"" + b_reason + "\","}},
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
  // And every kernel says it, in every format: JSON always has the achieved object.
  EXPECT_NE(run.out.find("not measured: PM sampling off (no-permission)"), std::string::npos) << run.out;
  auto json = RunCli({dir.Path("off.db"), "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"not_measured_reason\": \"PM sampling off (no-permission)\""), std::string::npos)
      << json.out;
}

// Traced with achieved occupancy off: each kernel's achieved object says so.
TEST(PmAttribution, EveryKernelWithoutAFigureSaysWhy) {
  ScratchDir dir;
  Rows rows;
  rows.meta = "('schema_version', '1'), ('pid', '42'), ('achieved_mode', 'off')";
  rows.Launch(kA, 100'000, 1'000'000);
  rows.Launch(kB, 2'000'000, 1'000'000);
  occtrace::Report report = Report(dir, rows);
  ASSERT_EQ(report.groups_size(), 2);
  for (const occtrace::KernelGroup& g : report.groups()) {
    ASSERT_TRUE(g.has_achieved());
    EXPECT_EQ(g.achieved().not_measured_reason(), "traced with achieved occupancy off (OCCTRACE_ACHIEVED=off)");
  }
}

// A summary carries the PM sums: the report from it gives the trace's figures.
TEST(PmAttribution, ASummaryReadsBackThePmFigures) {
  ScratchDir dir;
  MakeOccTrace(dir.Path("t.db"), OneKernelAlone().Sql());
  const occtrace::Report report = SummarizedReport(dir, dir.Path("t.db"));
  const occtrace::KernelGroup* a = Group(report, 264);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->achieved().source(), "pm");
  EXPECT_EQ(a->achieved().pm().clean_samples(), 50);
  EXPECT_EQ(a->achieved().pm().inside_samples(), 48);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 100.0 * 3104 / 6272, 1e-9);
  EXPECT_NEAR(a->achieved().pm().standard_error(), 0, 1e-6);
  EXPECT_EQ(a->achieved().pm().status(), "measured");
  ASSERT_GT(report.files_size(), 0);
  EXPECT_EQ(report.files(0).pm_clean_samples(), 50);
}

// `occ-report launches`: each launch's own clean samples, shown by their error. OneKernelAlone's
// launch has 50 (48 inside at 50 %, 2 edge at 25 %) → 49.49 % ± 0.36 from PM; C's launch has 10,
// alternating 1e6 cycles with 32e6 and 40e6 warps: 56.25 %, each ∓4e6 off, error
// √(10/9 × 10 × 16e12) ÷ 640e6 = 2.08 points: n/e.
TEST(PmAttribution, TheLaunchesListingGivesEachLaunchItsOwnCleanSamples) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  rows.Launch(kC, 3'000'000, 200'000);
  for (int i = 0; i < 10; ++i) {
    rows.Sample(3'000'000 + 20'000 * i, 3'020'000 + 20'000 * i, 1e6, i % 2 == 0 ? 32e6 : 40e6);
  }
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

// Two kernels alternating inside every 20 us window on one stream, with lengths that change from
// launch to launch: A 6-8 us at 50 % on 100 cycles per ns, B 8-10.8 us at 25 % on 50 cycles per
// ns, 1 us gaps. Each sample's counters are written from the overlaps by hand: Σ t × rate and
// Σ t × rate × occupancy × 64. No sample has one kernel alone for long: the clean-sample rule gave
// neither a figure; every sample fits the model, so the solve gives 50 % and 25 % exactly, and
// every format says the figures came from mixed samples.
struct Alternating {
  Rows rows;
  int64_t first = 1'000'000, last = 0;
};
Alternating AlternatingPair(int pairs) {
  Alternating out;
  struct Span {
    int64_t start, end;
    double rate, occupancy;
  };
  std::vector<Span> spans;
  int64_t t = out.first;
  for (int k = 0; k < pairs; ++k) {
    const int64_t a = 6'000 + 1'000 * (k % 3), b = 8'000 + 700 * (k % 5);
    out.rows.Launch(kA, t, a);
    spans.push_back({t, t + a, 100, 0.5});
    t += a + 1'000;
    out.rows.Launch(kB, t, b);
    spans.push_back({t, t + b, 50, 0.25});
    t += b + 1'000;
  }
  out.last = t;
  for (int64_t s = out.first; s < out.last; s += 20'000) {
    double cycles = 0, warps = 0;
    for (const Span& span : spans) {
      const double ns = static_cast<double>(std::max<int64_t>(0, std::min(span.end, s + 20'000) - std::max(span.start, s)));
      cycles += ns * span.rate;
      warps += ns * span.rate * span.occupancy * 64;
    }
    if (cycles > 0) out.rows.Sample(s, s + 20'000, cycles, warps);
  }
  return out;
}

TEST(PmAttribution, TwoKernelsAlternatingInEverySampleGetFiguresFromMixedSamples) {
  ScratchDir dir;
  const Alternating pair = AlternatingPair(60);
  const std::string path = dir.Path("alternating.db");
  MakeOccTrace(path, pair.rows.Sql());
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::KernelGroup* a = Group(*report, 264);
  const occtrace::KernelGroup* b = Group(*report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_LT(a->achieved().pm().clean_samples(), 20);
  EXPECT_LT(b->achieved().pm().clean_samples(), 20);
  EXPECT_GT(a->achieved().pm().mixed_samples(), 40);
  EXPECT_NEAR(a->achieved().pm().achieved_pct(), 50.0, 1e-6);
  EXPECT_NEAR(b->achieved().pm().achieved_pct(), 25.0, 1e-6);
  EXPECT_TRUE(a->achieved().pm().from_mixed());
  EXPECT_EQ(b->achieved().source(), "pm");
  const std::string mixed = std::to_string(b->achieved().pm().mixed_samples());
  const std::string samples = std::to_string(b->achieved().pm().samples());
  struct Case {
    const char* format;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"text", {"25.0m", "50.0m", "25.0% ± 0.0 (PM samples: " + samples + " samples, " + mixed +
                                      " shared with other kernels (least squares)"}},
      {"markdown", {"25.0 ± 0.0 (PM, " + samples + " samples, " + mixed + " mixed)", "least-squares solve"}},
      {"html", {"25.0<span class=\"note\">± 0.0 (PM, " + samples + " samples, " + mixed + " mixed)</span>"}},
      {"json", {"\"from_mixed\": true"}},
      {"csv", {",25.00," + std::to_string(b->achieved().pm().clean_samples()) + "," + mixed + ",0.00,yes,measured,,"}},
  };
  for (const Case& c : cases) {
    auto run = RunCli({path, "--format", c.format, "--top", "0"});
    ASSERT_EQ(run.code, 0) << c.format << ": " << run.err;
    for (const std::string& want : c.expected) {
      EXPECT_NE(run.out.find(want), std::string::npos) << c.format << " lacks '" << want << "':\n" << run.out;
    }
  }
}

// A [s + 1, s + 9) us and B [s + 10, s + 18) us in each of 10 samples s: their times are the same
// in every sample, so no solve can split the counters (1.2e6 cycles, 32e6 warps each) between
// them. Each says so and names the other, in every format's words.
TEST(PmAttribution, AnInseparablePairIsReportedAsSuch) {
  ScratchDir dir;
  Rows rows;
  for (int k = 0; k < 10; ++k) {
    const int64_t s = 1'000'000 + 20'000 * k;
    rows.Launch(kA, s + 1'000, 8'000);
    rows.Launch(kB, s + 10'000, 8'000);
    rows.Sample(s, s + 20'000, 1.2e6, 32e6);
  }
  const std::string path = dir.Path("pair.db");
  MakeOccTrace(path, rows.Sql());
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::KernelGroup* a = Group(*report, 264);
  const occtrace::KernelGroup* b = Group(*report, 132);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->achieved().pm().status(), "not_separable");
  EXPECT_EQ(b->achieved().pm().status(), "not_separable");
  EXPECT_EQ(a->achieved().pm().not_separable_from(), "kern_b (grid 132x1x1, block 128x1x1)");
  EXPECT_EQ(b->achieved().pm().not_separable_from(), "kern_a (grid 264x1x1, block 256x1x1)");
  EXPECT_EQ(a->achieved().not_measured_reason(),
            "PM samples: in its 10 samples (0 alone) it ran beside the same kernels in the same way each time "
            "(mostly kern_b (grid 132x1x1, block 128x1x1)): the samples cannot tell it apart from them");
  auto text = RunCli({path, "--top", "0"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("n/s"), std::string::npos) << text.out;
  auto markdown = RunCli({path, "--top", "0", "--format", "markdown"});
  ASSERT_EQ(markdown.code, 0) << markdown.err;
  EXPECT_NE(markdown.out.find("not separable (PM)"), std::string::npos) << markdown.out;
}

// Every 40 us: A's launch of 24, 28 or 32 us in turn, then B's of 5 us at once. The first 20 us
// sample is inside A (2e6 cycles, 64e6 warps: 50 %); the second holds A's last 4-12 us and B,
// and its counters swing from sample to sample (B's rate differs with what ran before it):
// 0.6e6 / 1.6e6 cycles, 10e6 / 60e6 warps in turn. The solve over all 24 samples cannot pin A
// down (too uncertain), but A's 12 samples alone agree exactly: 12 × 64e6 ÷ (12 × 2e6 × 64) =
// 50 %, standard error 0. That is its figure, and the report says why the shared samples were
// left out. B, never alone, has none.
TEST(PmAttribution, TheSamplesAKernelHadAloneGiveItsFigureWhereTheSolveGivesNone) {
  ScratchDir dir;
  Rows rows;
  for (int k = 0; k < 12; ++k) {
    const int64_t p = 1'000'000 + 40'000 * k;
    const int64_t a_in_mixed = 4'000 + 4'000 * (k % 3);
    rows.Launch(kA, p, 20'000 + a_in_mixed);
    rows.Launch(kB, p + 20'000 + a_in_mixed, 5'000);
    rows.Sample(p, p + 20'000, 2e6, 64e6);
    rows.Sample(p + 20'000, p + 40'000, k % 2 == 0 ? 0.6e6 : 1.6e6, k % 2 == 0 ? 10e6 : 60e6);
  }
  occtrace::Report report = Report(dir, rows);
  const occtrace::KernelGroup* a = Group(report, 264);
  ASSERT_NE(a, nullptr);
  const occtrace::PmAchieved& pm = a->achieved().pm();
  EXPECT_EQ(pm.status(), "measured");
  EXPECT_EQ(pm.solve_status(), "too_uncertain");
  EXPECT_EQ(a->achieved().source(), "pm");
  EXPECT_NEAR(pm.achieved_pct(), 50.0, 1e-9);
  EXPECT_NEAR(pm.standard_error(), 0.0, 1e-9);
  EXPECT_EQ(pm.samples(), 12);
  EXPECT_EQ(pm.mixed_samples(), 12);
  EXPECT_FALSE(pm.from_mixed());
  const occtrace::KernelGroup* b = Group(report, 132);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->achieved().source(), "");
  auto text = RunCli({dir.Path("pm.db"), "--top", "0"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(Unwrapped(text.out).find("50.0% ± 0.0 (PM samples: 12 clean samples; its 12 shared with other kernels "
                                     "left out: with them the solve read 50.0%, its error too large)"),
            std::string::npos)
      << text.out;
}

// One configuration recorded as two OCC_KERNEL_CONFIG rows (A, and A6: node 3 of CUDA graph 7), a
// launch of each in each of 20 samples, one after the other (1e5 cycles, 3.2e6 warps: 50 %). They
// are one group, so one unit: the samples are clean, of the sequence kind, each counted once, in
// the group and in the header (before, each row counted them as shared with the other: 20
// samples read "20 clean... 40 shared with other kernels").
TEST(PmAttribution, RowsOfOneConfigurationAreOneUnitAndCountEachSampleOnce) {
  ScratchDir dir;
  Rows rows;
  for (int k = 0; k < 20; ++k) {
    const int64_t s = 1'000'000 + 20'000 * k;
    rows.Launch(kA, s + 2'000, 6'000);
    rows.Launch(kA6, s + 10'000, 6'000);
    rows.Sample(s, s + 20'000, 1e5, 3.2e6);
  }
  occtrace::Report report = Report(dir, rows);
  ASSERT_EQ(report.groups_size(), 1);
  const occtrace::KernelGroup& a = report.groups(0);
  EXPECT_EQ(a.launches(), 40);
  EXPECT_EQ(a.achieved().pm().clean_samples(), 20);
  EXPECT_EQ(a.achieved().pm().sequence_samples(), 20);
  EXPECT_EQ(a.achieved().pm().mixed_samples(), 0);
  EXPECT_EQ(a.achieved().pm().samples(), 20);
  EXPECT_NEAR(a.achieved().pm().achieved_pct(), 50.0, 1e-9);
  EXPECT_EQ(report.files(0).pm_clean_samples(), 20);
  EXPECT_EQ(report.files(0).pm_mixed_samples(), 0);
}

// The tracer's counts of samples it did not store (OCC_META) reach the header, and a kernel with
// no sample says which of them may have held it.
TEST(PmAttribution, TheInputLineGivesTheSamplesTheTracerLost) {
  ScratchDir dir;
  Rows rows = OneKernelAlone();
  rows.meta += ", ('pm_samples_lost', '1234'), ('pm_samples_lost_busy', '1000'), ('pm_samples_lost_idle', '234'), "
               "('pm_samples_undecoded', '56'), ('pm_samples_rejected_long', '7')";
  rows.Launch(kB, 5'000'000, 100'000);
  const std::string path = dir.Path("lost.db");
  MakeOccTrace(path, rows.Sql());
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->files(0).pm_samples_lost(), 1234);
  EXPECT_EQ(report->files(0).pm_samples_lost_busy(), 1000);
  EXPECT_EQ(report->files(0).pm_samples_lost_idle(), 234);
  EXPECT_EQ(report->files(0).pm_samples_undecoded(), 56);
  EXPECT_EQ(report->files(0).pm_samples_rejected_long(), 7);
  const occtrace::KernelGroup* b = Group(*report, 132);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->achieved().pm().status(), "no_samples");
  EXPECT_EQ(b->achieved().not_measured_reason(),
            "no PM sample while it ran (sampling was stopped or paused then, or its samples were among this run's "
            "1000 busy samples lost, 56 samples never decoded, 7 samples rejected as longer than 4 intervals)");
  auto markdown = RunCli({path, "--top", "0", "--format", "markdown"});
  ASSERT_EQ(markdown.code, 0) << markdown.err;
  EXPECT_NE(markdown.out.find("not stored: 1,234 lost (1,000 busy), 56 never decoded, 7 too long (a stopped sampler)"),
            std::string::npos)
      << markdown.out;
}

// The sweep on its own: launches of a device before the samples' device are never compared, and
// a device without a known max warps per SM counts its clean samples without using them.
TEST(PmSweep, UnknownDeviceSamplesAreCountedNotUsed) {
  PmSweep sweep(1, 0);
  sweep.BeginDevice(0);
  sweep.AddLaunch(0, 100, 0);
  sweep.AddSample(10, 20, 1e3, 1e4, -1);
  EXPECT_EQ(sweep.counts().unknown_device, 1);
  EXPECT_EQ(sweep.sums()[0].clean, 0);
  sweep.BeginDevice(64);
  sweep.AddSample(10, 20, 1e3, 1e4, -1);
  EXPECT_EQ(sweep.counts().unattributed, 1);
  sweep.Finish();
  EXPECT_EQ(sweep.sums()[0].fit, PmFit::kUnknownDevice);
}

}  // namespace
}  // namespace occ
