// The analysis against independent values: occupancies and block limits quoted from Nsight
// Compute in occupancy-model.md §5.2 / §10, waves and tails hand-computed with ncu's formula
// (§5.4), and totals summed by hand from the INSERTs in h100_trace.sql.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <map>
#include <vector>

#include "analyzer/analyze/analysis.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::H100TraceInserts;
using testing::MakeDb;
using testing::MakeOccTrace;
using testing::ScratchDir;

const occtrace::KernelGroup* Find(const occtrace::Report& report, const std::string& name) {
  for (const auto& g : report.groups()) {
    if (g.name() == name) return &g;
  }
  for (const auto& g : report.unjudged()) {
    if (g.name() == name) return &g;
  }
  return nullptr;
}

bool AnyContains(const google::protobuf::RepeatedPtrField<std::string>& texts,
                 const std::string& needle) {
  for (const auto& t : texts) {
    if (t.find(needle) != std::string::npos) return true;
  }
  return false;
}

class H100Report : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Path("h100.db");
    MakeOccTrace(path_, H100TraceInserts());
    ReportOptions options;
    options.inputs = {path_};
    options.top = 0;
    auto report = BuildReport(options);
    ASSERT_TRUE(report.ok()) << report.status().message();
    report_ = *report;
  }
  ScratchDir dir_;
  std::string path_;
  occtrace::Report report_;
};

TEST_F(H100Report, RegisterLimitedKernelMatchesNsightCompute) {
  // ncu on H100: 256 threads, 67 registers -> Block Limit Registers 3, theoretical 37.5 %.
  const auto* g = Find(report_, "gemm_kernel(float const*, float*)");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->judged());
  EXPECT_EQ(g->occupancy().block_limit_registers(), 3);
  EXPECT_EQ(g->occupancy().active_blocks_per_sm(), 3);
  EXPECT_DOUBLE_EQ(g->occupancy().theoretical_occupancy_pct(), 37.5);
  EXPECT_EQ(g->limiting_factor(), "registers");
  EXPECT_NE(g->occupancy().limiter_sentence().find("registers"), std::string::npos);
  EXPECT_TRUE(AnyContains(g->issues(), "below 80%"));
  // occupancy-model.md §10: capping at <= 64 registers gives 4 blocks (50 %).
  bool found_cap = false;
  for (const auto& s : g->suggestions()) {
    if (s.kind() == "register_cap") {
      found_cap = true;
      EXPECT_LE(s.registers_per_thread(), 64);
      EXPECT_GE(s.predicted_occupancy_pct(), 50.0);
      EXPECT_FALSE(s.assumptions().empty());
    }
    EXPECT_GT(s.predicted_occupancy_pct(), 0);
  }
  EXPECT_TRUE(found_cap);
  // Launch statistics, summed by hand from the INSERTs.
  EXPECT_EQ(g->launches(), 3);
  EXPECT_EQ(g->total_ns(), 1'000'000);
  EXPECT_EQ(g->min_ns(), 200'000);
  EXPECT_EQ(g->max_ns(), 400'000);
  EXPECT_NEAR(g->time_pct(), 100.0 * 1'000'000 / 1'522'000, 1e-9);
  // Waves: 3225 / (3 x 132) = 8.14, 8 full, 3225 - 8 x 396 = 57 tail blocks, tail <= 1/9.
  EXPECT_NEAR(g->waves_per_sm(), 3225.0 / 396.0, 1e-9);
  EXPECT_EQ(g->full_waves(), 8);
  EXPECT_EQ(g->tail_blocks(), 57);
  EXPECT_NEAR(g->tail_pct(), 100.0 / 9.0, 1e-9);
  EXPECT_FALSE(AnyContains(g->issues(), "partial wave"));  // ncu shows the tail from 20 %
}

TEST_F(H100Report, WarpAndRegisterLimitsOfA96ThreadKernel) {
  // ncu on H100: 96 threads, 36 registers -> Regs 16, Warps 21, 75 %.
  const auto* g = Find(report_, "k96(int)");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->occupancy().block_limit_registers(), 16);
  EXPECT_EQ(g->occupancy().block_limit_warps(), 21);
  EXPECT_DOUBLE_EQ(g->occupancy().theoretical_occupancy_pct(), 75.0);
}

TEST_F(H100Report, TailEffectUsesTheExactPartialWave) {
  // 32 registers, 256 threads -> 8 blocks/SM; wave 1056; 3225 blocks = 3 full waves + 57
  // (ncu's rounding prints 58); tail up to 100 / (1 + 3) = 25 %.
  const auto* g = Find(report_, "tail_kernel(int)");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->occupancy().theoretical_occupancy_pct(), 100.0);
  EXPECT_EQ(g->full_waves(), 3);
  EXPECT_EQ(g->tail_blocks(), 57);
  EXPECT_DOUBLE_EQ(g->tail_pct(), 25.0);
  EXPECT_TRUE(AnyContains(g->issues(), "57"));
  // Achieved: one measured sample (81 %), one graph launch not measured; gap 19 points > 10.
  EXPECT_EQ(g->achieved().samples(), 1);
  EXPECT_EQ(g->achieved().not_measured(), 1);
  EXPECT_NE(g->achieved().not_measured_reason().find("graph"), std::string::npos);
  EXPECT_DOUBLE_EQ(g->achieved().gap_points(), 19.0);
  EXPECT_TRUE(AnyContains(g->achieved().gap_explanations(), "tail"));
  // One sample of a partial-wave grid describes that launch only (docs/accuracy.md).
  EXPECT_TRUE(AnyContains(g->achieved().gap_explanations(), "varies from launch to launch"));
  // Already at 100 %: nothing to suggest for occupancy, so no headroom and no priority.
  EXPECT_DOUBLE_EQ(g->headroom_pct(), 0);
  EXPECT_DOUBLE_EQ(g->priority(), 0);
  for (const auto& s : g->suggestions()) EXPECT_NE(s.block_size(), 256) << s.text();
}

TEST_F(H100Report, SmallGridAndProfiledLaunchTime) {
  const auto* g = Find(report_, "tiny_grid(int)");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(AnyContains(g->issues(), "smaller than the GPU's 132 SMs"));
  // The profiled launch (start 0, duration 0) takes OCC_ACHIEVED.gpuTimeNs (52000).
  EXPECT_EQ(g->launches(), 2);
  EXPECT_EQ(g->total_ns(), 50'000 + 52'000);
  // §7: 66 blocks of 256 threads on 132 SMs read 12.5 % achieved (8 of 64 warps per busy SM).
  EXPECT_DOUBLE_EQ(g->achieved().mean_pct(), 12.5);
  EXPECT_DOUBLE_EQ(g->achieved().min_pct(), 12.4);
  EXPECT_DOUBLE_EQ(g->achieved().max_pct(), 12.6);
  EXPECT_DOUBLE_EQ(g->achieved().gap_points(), 87.5);
  ASSERT_GE(g->achieved().gap_explanations_size(), 1);
  EXPECT_NE(g->achieved().gap_explanations(0).find("small grid"), std::string::npos);
  EXPECT_NE(g->achieved().gap_explanations(0).find("12.5%"), std::string::npos);
}

TEST_F(H100Report, BlockNotMultipleOf32) {
  const auto* g = Find(report_, "odd_block(int)");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(AnyContains(g->issues(), "not a multiple of 32"));
  // ncu: (1/numWarps) x (1 - (B mod 32)/32) idle; 48 threads = 2 warps, 16 of 64 lanes idle.
  EXPECT_TRUE(AnyContains(g->issues(), "16 of 64 lanes"));
  int repeats = 0;
  for (const auto& issue : g->issues()) repeats += issue.find("lanes") != std::string::npos;
  EXPECT_EQ(repeats, 1);
}

TEST_F(H100Report, SummaryRankingAndUpperBound) {
  const auto& s = report_.summary();
  EXPECT_EQ(s.launches(), 10);
  EXPECT_EQ(s.total_gpu_ns(), 1'522'000);
  EXPECT_EQ(s.kernels(), 5);
  EXPECT_EQ(s.groups(), 5);
  EXPECT_EQ(s.unjudged_groups(), 0);
  EXPECT_EQ(s.span_ns(), 2'000'000 - 1'000);
  // Below 50 % theoretical: only gemm (37.5 %).
  EXPECT_NEAR(s.time_below_50pct_theoretical_pct(), 100.0 * 1'000'000 / 1'522'000, 1e-9);
  // Ranked by share x headroom: the register-limited gemm (66 % of the time) first.
  ASSERT_GE(report_.groups_size(), 1);
  EXPECT_EQ(report_.groups(0).name(), "gemm_kernel(float const*, float*)");
  EXPECT_EQ(report_.groups(0).rank(), 1);
  for (int i = 1; i < report_.groups_size(); ++i) {
    EXPECT_GE(report_.groups(i - 1).priority(), report_.groups(i).priority());
  }
  // Upper bound for gemm if the best suggestion's occupancy were reached: T x (1 - o / o').
  const auto& gemm = report_.groups(0);
  double best = gemm.occupancy().theoretical_occupancy_pct() + gemm.headroom_pct();
  EXPECT_EQ(gemm.recoverable_ns_upper_bound(),
            static_cast<int64_t>(1'000'000 * (1 - 37.5 / best)));
  EXPECT_TRUE(AnyContains(report_.notes(), "barrier"));
  // time by limiter: registers = gemm + k96 (1.2 ms).
  ASSERT_GE(report_.time_by_limiter_size(), 1);
  EXPECT_EQ(report_.time_by_limiter(0).limiter(), "registers");
  EXPECT_EQ(report_.time_by_limiter(0).total_ns(), 1'200'000);
  // File metadata.
  ASSERT_EQ(report_.files_size(), 1);
  EXPECT_EQ(report_.files(0).format(), "occtrace");
  EXPECT_EQ(report_.files(0).pid(), 4242);
  EXPECT_EQ(report_.files(0).command(), "python train.py");
  EXPECT_EQ(report_.files(0).launches(), 10);
  ASSERT_EQ(report_.devices_size(), 1);
  EXPECT_EQ(report_.devices(0).num_sms(), 132);
  EXPECT_EQ(report_.devices(0).source(), occtrace::SOURCE_TRACE);
}

TEST_F(H100Report, CurveOnlyForListedGroups) {
  const auto* g = Find(report_, "gemm_kernel(float const*, float*)");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->curve_size(), 32);  // 32..1024 step 32
  EXPECT_EQ(g->curve(7).block_size(), 256);
  EXPECT_EQ(g->curve(7).active_blocks_per_sm(), 3);
}

TEST(Analysis, ConfigurationsOfOneKernelAreGroupedByConfiguration) {
  ScratchDir dir;
  std::string path = dir.Path("t.db");
  // configs 1 and 2 are the same launch configuration (two graph nodes): one group; config 3
  // has another grid: a second group.
  MakeOccTrace(path, H100TraceInserts() + R"sql(
INSERT INTO StringIds VALUES (100, 'scale(float*)'), (101, 'scale'), (102, '_Z5scalePf');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (10, 0, 1, NULL, 100, 101, 102, 0, 0, 20, 512, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 5, 1, 1, 1, 1, 0, 0, 0, 0),
  (11, 0, 1, NULL, 100, 101, 102, 0, 0, 20, 512, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 5, 2, 1, 1, 1, 0, 0, 0, 0),
  (12, 0, 1, NULL, 100, 101, 102, 0, 0, 20, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (3000000, 10, 10, 1, 100), (3000100, 20, 11, 1, 101),
  (3000200, 30, 11, 1, 102), (3000300, 40, 12, 1, 103);
)sql");
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  options.kernel_regex = "^scale";
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->groups_size(), 2);
  const auto& a = report->groups(0).grid_x() == 512 ? report->groups(0) : report->groups(1);
  const auto& b = report->groups(0).grid_x() == 512 ? report->groups(1) : report->groups(0);
  EXPECT_EQ(a.launches(), 3);
  EXPECT_EQ(a.total_ns(), 60);
  EXPECT_EQ(a.min_ns(), 10);
  EXPECT_EQ(a.max_ns(), 30);
  EXPECT_DOUBLE_EQ(a.mean_ns(), 20);
  EXPECT_EQ(a.graph_id(), 5);
  EXPECT_EQ(b.launches(), 1);
  // Shares stay shares of the whole run (1,522,000 + 100 ns), not of the filtered kernels.
  EXPECT_NEAR(a.time_pct(), 100.0 * 60 / 1'522'100, 1e-9);
  EXPECT_EQ(report->summary().total_gpu_ns(), 1'522'100);
}

// Owners and autotuning from what the injector records (#29): OCC_MODULE.loader joined to each
// configuration through OCC_FUNCTION by name and registers. XLA's autotuner compiled
// gemm_fusion_dot_4 three ways (one module each), launched each twice, then ran its choice (90
// registers) 12 more times; the program's own scale kernel ran at two block sizes on the same
// work.
TEST(Analysis, OwnersFromTheLoaderAndAutotuningTrials) {
  ScratchDir dir;
  std::string path = dir.Path("t.db");
  MakeOccTrace(path, H100TraceInserts() + R"sql(
INSERT INTO StringIds VALUES (200, 'gemm_fusion_dot_4'), (201, 'scale(float*)'), (202, 'scale'), (203, '_Z5scalePf');
INSERT INTO OCC_MODULE(moduleId, library, loader) VALUES
  (7, NULL, '/home/u/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so'),
  (8, NULL, '/home/u/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so'),
  (9, NULL, '/home/u/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so'),
  (10, NULL, '/home/u/project/build/my_app');
INSERT INTO OCC_FUNCTION(moduleId, mangledName, localMemoryPerThread, barrierCount, registersPerThread) VALUES
  (7, 200, 0, 1, 30), (8, 200, 0, 1, 90), (9, 200, 0, 1, 218), (10, 203, 0, 1, 16);
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (20, 0, 1, NULL, 200, 200, 200, 0, 0, 30, 256, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (21, 0, 1, NULL, 200, 200, 200, 0, 0, 90, 256, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (22, 0, 1, NULL, 200, 200, 200, 0, 0, 218, 256, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (23, 0, 1, NULL, 201, 202, 203, 0, 0, 16, 65536, 1, 1, 64, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (24, 0, 1, NULL, 201, 202, 203, 0, 0, 16, 16384, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (3000000, 50000, 20, 1, 200), (3100000, 50000, 20, 1, 201),
  (3200000, 40000, 21, 1, 202), (3300000, 40000, 21, 1, 203), (3400000, 60000, 22, 1, 204), (3500000, 60000, 22, 1, 205),
  (4000000, 40000, 21, 1, 206), (4100000, 40000, 21, 1, 207), (4200000, 40000, 21, 1, 208), (4300000, 40000, 21, 1, 209),
  (4400000, 40000, 21, 1, 210), (4500000, 40000, 21, 1, 211), (4600000, 40000, 21, 1, 212), (4700000, 40000, 21, 1, 213),
  (4800000, 40000, 21, 1, 214), (4900000, 40000, 21, 1, 215), (5000000, 40000, 21, 1, 216), (5100000, 40000, 21, 1, 217),
  (5200000, 40000, 23, 1, 218), (5300000, 40000, 23, 1, 219), (5400000, 12000, 24, 1, 220), (5500000, 12000, 24, 1, 221);
)sql");
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  int xla = 0, trials = 0;
  // Trials are tuning overhead: listed apart from the ranking (Report.tuning), never in it.
  for (const auto& g : report->groups()) EXPECT_FALSE(g.autotuning_trial()) << g.name();
  for (const auto& t : report->tuning()) EXPECT_TRUE(t.autotuning_trial()) << t.name();
  std::vector<occtrace::KernelGroup> ranked_and_tuning(report->groups().begin(), report->groups().end());
  ranked_and_tuning.insert(ranked_and_tuning.end(), report->tuning().begin(), report->tuning().end());
  for (const auto& g : ranked_and_tuning) {
    if (g.mangled_name() == "gemm_fusion_dot_4") {
      ++xla;
      EXPECT_EQ(g.owner_library(), "XLA (jaxlib)");
      EXPECT_EQ(g.owner_evidence(), "loader");
      EXPECT_EQ(g.loader(), "jaxlib/xla_extension.so") << "no machine folders";
      EXPECT_EQ(g.name_variants(), 3);
      EXPECT_EQ(g.autotuning_trial(), g.registers_per_thread() != 90);
      if (g.registers_per_thread() == 90) {
        EXPECT_EQ(g.tail_launches(), 12);
      }
      trials += g.autotuning_trial();
    } else if (g.mangled_name() == "_Z5scalePf") {
      EXPECT_EQ(g.origin(), "cuda_cpp");
      EXPECT_EQ(g.loader(), "my_app");
      EXPECT_FALSE(g.autotuning_trial()) << "the program's own kernel has no autotuner";
    }
  }
  EXPECT_EQ(xla, 3);
  EXPECT_EQ(trials, 2);
  bool scale_measured = false;
  for (const auto& a : report->actions()) {
    EXPECT_NE(a.kernel(), "gemm_fusion_dot_4") << "XLA's kernels, trials or not, are never actions";
    if (a.kernel() == "scale") scale_measured = a.gain_kind() == "measured" && a.origin() == "cuda_cpp";
  }
  EXPECT_TRUE(scale_measured) << "the program's own kernel gets its measured faster configuration";
}

// The same trace as an Nsight Systems export: same answers, the reserve derived, the file
// left untouched.
TEST(Analysis, NsysExport) {
  ScratchDir dir;
  std::string path = dir.Path("run.sqlite");
  MakeDb(path, testing::NsysSchemaSql() + R"sql(
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1');
INSERT INTO StringIds VALUES (1, 'gemm_kernel(float const*, float*)'), (2, 'gemm_kernel'),
  (3, '_Z11gemm_kernelPKfPf'), (4, 'k96(int)'), (5, 'k96');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H200', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'GPU-a', 132), (0, 0, 101, 'GPU-a', 132);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  correlationId, demangledName, shortName, mangledName, cacheConfig, registersPerThread, gridX,
  gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
  localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, graphId,
  clusterX, clusterY, clusterZ)
VALUES (1000, 401000, 0, 1, 7, 1, 1, 2, 3, 0, 67, 3225, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, 0, 0, 0, 0),
       (500000, 900000, 0, 1, 7, 2, 1, 2, 3, 0, 67, 3225, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, 0, 0, 0, 0),
       (1000000, 1200000, 0, 1, 7, 3, 4, 5, 4, 0, 36, 1000, 1, 1, 96, 1, 1, 0, 0, 0, 0, 32768, 0, 0, 0, 0, 0),
       (1300000, 1200000, 0, 1, 7, 4, 4, 5, 4, 0, 36, 1000, 1, 1, 96, 1, 1, 0, 0, 0, 0, 32768, 0, 0, 0, 0, 0);
)sql");
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  std::string bytes_before = testing::ReadFile(path);

  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->files(0).format(), "nsys");
  EXPECT_EQ(report->files(0).schema_version(), "3.28.1");
  const auto* gemm = Find(*report, "gemm_kernel(float const*, float*)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->launches(), 2);
  EXPECT_EQ(gemm->total_ns(), 800'000);
  EXPECT_DOUBLE_EQ(gemm->occupancy().theoretical_occupancy_pct(), 37.5);
  const auto* k96 = Find(*report, "k96(int)");
  ASSERT_NE(k96, nullptr);
  EXPECT_DOUBLE_EQ(k96->occupancy().theoretical_occupancy_pct(), 75.0);
  // One bad row (end < start) is a warning, not a failure.
  EXPECT_EQ(report->summary().launches(), 3);
  ASSERT_GE(report->files(0).warnings_size(), 1);
  EXPECT_TRUE(AnyContains(report->files(0).warnings(), "negative"));
  // nsys does not export the reserve: derived 233472 - 232448 = 1024 and said so; the device
  // repeated per process is listed once.
  ASSERT_EQ(report->devices_size(), 1);
  EXPECT_EQ(report->devices(0).reserved_smem_per_block(), 1024);
  EXPECT_TRUE(AnyContains(report->devices(0).defaulted_fields(), "reserved_smem_per_block"));
  EXPECT_EQ(report->devices(0).source(), occtrace::SOURCE_ARCH_TABLE);

  // The launch listing: start order, the filter on names, occupancy per row; starts count from
  // the export's first good kernel row (start 1000 above).
  auto listing = testing::RunCli({"launches", path, "--format", "csv", "-k", "^k96"});
  ASSERT_EQ(listing.code, 0) << listing.err;
  EXPECT_EQ(listing.out,
            "Start (ns),Duration (ns),GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (B),"
            "DymSMem (B),Theoretical Occupancy (%),Achieved Occupancy (%),Achieved Source,"
            "Achieved Above Theoretical,PM Clean Samples,Device,Strm,CorrId,Name\n"
            "999000,200000,1000,1,1,96,1,1,36,0,0,75.0,,,,,0,7,3,k96(int)\n"
            "1299000,-100000,1000,1,1,96,1,1,36,0,0,75.0,,,,,0,7,4,k96(int)\n");  // listed as recorded

  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_mtime, after.st_mtime);
  EXPECT_EQ(bytes_before, testing::ReadFile(path));
}

// Nsight Systems exports write 0 where a value is missing (NVIDIA's export schema: no column
// is NULL), so a 0 % carveout request is no request; and whenever the executed carveout is
// reported it decides occupancy, as in Nsight Compute. Expected values by hand from
// cuda_occupancy.h's rules on an H100 (64 warps, 32 blocks, 1 KiB reserved per block):
//  - 128 threads, 16 registers, no smem, executed 32 KiB: warps 2048/128 = 16 blocks, smem
//    32768/1024 = 32 blocks -> 16 blocks x 4 warps = 64 warps = 100 % (Nsight Compute: 100 %;
//    read as a 0 % request, an 8 KiB carveout would give 8 blocks = 50 %);
//  - 256 threads, 16 registers, 40 KiB dynamic smem, executed 100 KiB, 0 exported: smem
//    102400/(40960+1024) = 2 blocks x 8 warps = 16 warps = 25 % (the executed carveout limits;
//    at the 228 KiB maximum it would be 5 blocks, 62.5 %).
TEST(Analysis, NsysExportExecutedCarveoutWinsAndZeroRequestIsNone) {
  ScratchDir dir;
  std::string path = dir.Path("carveout.sqlite");
  MakeDb(path, testing::NsysSchemaSql() + R"sql(
INSERT INTO StringIds VALUES (1, 'k128()'), (2, 'k128'), (3, 'k40k()'), (4, 'k40k');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'GPU-a', 132);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  correlationId, demangledName, shortName, cacheConfig, registersPerThread, gridX, gridY, gridZ,
  blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,
  localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, sharedMemoryRequestedPercentage)
VALUES (1000, 2000, 0, 1, 7, 1, 1, 2, 0, 16, 1000, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, 0),
       (3000, 4000, 0, 1, 7, 2, 3, 4, 0, 16, 1000, 1, 1, 256, 1, 1, 0, 40960, 0, 0, 102400, 0, 0);
)sql");
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const auto* k128 = Find(*report, "k128()");
  ASSERT_NE(k128, nullptr);
  EXPECT_DOUBLE_EQ(k128->occupancy().theoretical_occupancy_pct(), 100.0);
  const auto* k40k = Find(*report, "k40k()");
  ASSERT_NE(k40k, nullptr);
  EXPECT_DOUBLE_EQ(k40k->occupancy().theoretical_occupancy_pct(), 25.0);
}

TEST(Analysis, NsysExportMissingDeviceFieldsUseTheArchTable) {
  ScratchDir dir;
  std::string path = dir.Path("old.sqlite");
  MakeDb(path, testing::NsysSchemaSql() + R"sql(
INSERT INTO StringIds VALUES (1, 'k96(int)'), (2, 'k96'), (3, 'noregs'), (4, 'noregs');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'GPU-a', 132);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
  staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal)
VALUES (10, 110, 0, 1, 7, 1, 2, 36, 1000, 1, 1, 96, 1, 1, 0, 0, 0, 0);
)sql");
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->devices_size(), 1);
  const auto& d = report->devices(0);
  EXPECT_EQ(d.source(), occtrace::SOURCE_ARCH_TABLE);
  EXPECT_TRUE(AnyContains(d.defaulted_fields(), "regs_per_sm"));
  EXPECT_EQ(d.regs_per_sm(), 65536);          // CUDA Programming Guide: 64 K registers per SM
  EXPECT_EQ(d.smem_per_block_optin(), 232448);  // H100: 227 KiB opt-in
  EXPECT_TRUE(AnyContains(report->notes(), "taken from the architecture table"));
  ASSERT_EQ(report->groups_size(), 1);
  EXPECT_DOUBLE_EQ(report->groups(0).occupancy().theoretical_occupancy_pct(), 75.0);
}

TEST(Analysis, UnknownGpuAndMissingRegistersAreListedNotDropped) {
  ScratchDir dir;
  std::string path = dir.Path("nogpu.sqlite");
  MakeDb(path, testing::NsysSchemaSql() + R"sql(
INSERT INTO StringIds VALUES (1, 'k96(int)'), (2, 'k96');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
  staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal)
VALUES (10, 110, 0, 1, 7, 1, 2, 36, 1000, 1, 1, 96, 1, 1, 0, 0, 0, 0);
)sql");
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->groups_size(), 0);
  ASSERT_EQ(report->unjudged_size(), 1);
  EXPECT_FALSE(report->unjudged(0).judged());
  EXPECT_NE(report->unjudged(0).not_judged_reason().find("unknown GPU"), std::string::npos);
  EXPECT_EQ(report->summary().unjudged_groups(), 1);
  EXPECT_EQ(report->unjudged(0).launches(), 1);

  // --gpu judges it on a named GPU.
  options.gpu = "H100";
  auto what_if = BuildReport(options);
  ASSERT_TRUE(what_if.ok()) << what_if.status().message();
  ASSERT_EQ(what_if->groups_size(), 1);
  EXPECT_DOUBLE_EQ(what_if->groups(0).occupancy().theoretical_occupancy_pct(), 75.0);
}

TEST(Analysis, WhatIfGpu) {
  ScratchDir dir;
  std::string path = dir.Path("h100.db");
  MakeOccTrace(path, H100TraceInserts());
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  options.gpu = "A100";
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_NE(report->what_if_gpu().find("A100"), std::string::npos);
  // A100 (sm_80, 108 SMs): 32 registers x 256 threads -> 8 blocks/SM, wave 864; 3225 blocks =
  // 3 full waves + 3225 - 2592 = 633.
  const auto* tail = Find(*report, "tail_kernel(int)");
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->full_waves(), 3);
  EXPECT_EQ(tail->tail_blocks(), 633);
  // Achieved occupancy was measured on the H100: no gap computed against the A100.
  EXPECT_DOUBLE_EQ(tail->achieved().gap_points(), 0);
  EXPECT_TRUE(AnyContains(report->notes(), "re-evaluated"));

  // RTX 4090 (sm_89: 48 warps, 24 blocks/SM): 96 threads (3 warps) x 36 registers -> 40
  // allocated, 1280 per warp, floor(16384 / 1280) = 12 warps per SP x 4 = 48 warps: 16 blocks,
  // warps 48 / 3 = 16 -> 100 %.
  options.gpu = "RTX 4090";
  auto ada = BuildReport(options);
  ASSERT_TRUE(ada.ok()) << ada.status().message();
  const auto* k96 = Find(*ada, "k96(int)");
  ASSERT_NE(k96, nullptr);
  EXPECT_EQ(k96->occupancy().active_blocks_per_sm(), 16);
  EXPECT_DOUBLE_EQ(k96->occupancy().theoretical_occupancy_pct(), 100.0);
}

TEST(Analysis, MultipleFilesAreMerged) {
  ScratchDir dir;
  std::string rank0 = dir.Path("rank0.db"), rank1 = dir.Path("rank1.db");
  MakeOccTrace(rank0, H100TraceInserts());
  MakeOccTrace(rank1, H100TraceInserts());
  ReportOptions options;
  options.inputs = {rank0, rank1};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->files_size(), 2);
  EXPECT_EQ(report->devices_size(), 2);
  EXPECT_EQ(report->devices(1).file_index(), 1);
  EXPECT_EQ(report->summary().launches(), 20);
  EXPECT_EQ(report->summary().groups(), 5);
  const auto* gemm = Find(*report, "gemm_kernel(float const*, float*)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->file_index(), -1);
  EXPECT_EQ(gemm->launches(), 6);
  EXPECT_EQ(gemm->total_ns(), 2'000'000);
  const auto* tiny = Find(*report, "tiny_grid(int)");
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->achieved().samples(), 4);
}

TEST(Analysis, SortTopAndMinTime) {
  ScratchDir dir;
  std::string path = dir.Path("h100.db");
  MakeOccTrace(path, H100TraceInserts());
  ReportOptions options;
  options.inputs = {path};
  options.top = 2;
  options.sort = "name";
  auto by_name = BuildReport(options);
  ASSERT_TRUE(by_name.ok());
  ASSERT_EQ(by_name->groups_size(), 2);
  EXPECT_EQ(by_name->groups(0).name(), "gemm_kernel(float const*, float*)");
  EXPECT_EQ(by_name->groups(1).name(), "k96(int)");
  EXPECT_EQ(by_name->groups_total(), 5);

  options.top = 0;
  options.sort = "launches";
  auto by_launches = BuildReport(options);
  ASSERT_TRUE(by_launches.ok());
  EXPECT_EQ(by_launches->groups(0).launches(), 3);

  options.sort = "time";
  options.min_time_pct = 10;  // gemm 65.7 %, k96 13.1 %, tail 13.1 %; tiny 6.7 %, odd 1.3 %
  auto by_time = BuildReport(options);
  ASSERT_TRUE(by_time.ok());
  EXPECT_EQ(by_time->groups_size(), 3);
  EXPECT_EQ(by_time->groups(0).total_ns(), 1'000'000);
}

TEST(Analysis, DiffAgainstABaseline) {
  ScratchDir dir;
  std::string base = dir.Path("base.db"), now = dir.Path("now.db");
  MakeOccTrace(base, H100TraceInserts());
  // After: gemm built with __launch_bounds__(256, 4) -> 64 registers; odd_block gone; a new
  // kernel.
  std::string after = H100TraceInserts();
  auto replace = [&](const std::string& from, const std::string& to) {
    auto at = after.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    after.replace(at, from.size(), to);
  };
  replace("(1, 0, 1, NULL, 1, 2, 3, 0, 0, 67,", "(1, 0, 1, NULL, 1, 2, 3, 0, 0, 64,");
  replace("(1700000, 20000, 4, 7, 8)", "(1700000, 20000, 6, 7, 8)");
  after += R"sql(
INSERT INTO StringIds VALUES (100, 'fresh(int)'), (101, 'fresh'), (102, '_Z5freshi');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (6, 0, 1, NULL, 100, 101, 102, 0, 0, 16, 4096, 1, 1, 64, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
)sql";
  MakeOccTrace(now, after);
  ReportOptions options;
  options.inputs = {now};
  options.diff_base = base;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::map<std::string, occtrace::DiffRow> rows;
  for (const auto& row : report->diff().rows()) rows[row.name()] = row;
  ASSERT_EQ(rows.count("gemm_kernel(float const*, float*)"), 1u);
  const auto& gemm = rows["gemm_kernel(float const*, float*)"];
  EXPECT_EQ(gemm.status(), "changed");
  EXPECT_DOUBLE_EQ(gemm.occupancy_before_pct(), 37.5);
  EXPECT_DOUBLE_EQ(gemm.occupancy_after_pct(), 50.0);  // §10: <= 64 registers -> 4 blocks
  EXPECT_NE(gemm.config_before().find("67 regs"), std::string::npos);
  EXPECT_NE(gemm.config_after().find("64 regs"), std::string::npos);
  EXPECT_EQ(rows["odd_block(int)"].status(), "gone");
  EXPECT_EQ(rows["odd_block(int)"].total_ns_before(), 20'000);
  EXPECT_EQ(rows["fresh(int)"].status(), "new");
  EXPECT_EQ(rows["fresh(int)"].launches_after(), 1);
  EXPECT_EQ(rows["k96(int)"].status(), "same");
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// The H100 test trace plus `extra_inserts`, analyzed with every group listed.
occtrace::Report ReportWithExtraRows(const std::string& extra_inserts) {
  testing::ScratchDir dir;
  const std::string path = dir.Path("trace.db");
  testing::MakeOccTrace(path, testing::H100TraceInserts() + extra_inserts);
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? *report : occtrace::Report();
}

// Every group of the kernel `name` (a kernel whose launches differ in configuration has several).
std::vector<const occtrace::KernelGroup*> GroupsNamed(const occtrace::Report& report, const std::string& name) {
  std::vector<const occtrace::KernelGroup*> out;
  for (const auto& g : report.groups()) {
    if (g.name() == name) out.push_back(&g);
  }
  return out;
}

// Nsight Compute on an H100 (occupancy-model.md §5.3): B=256, 0 B user shared memory, kernels
// using 8 and 16 named barriers show Block Limit Barriers 8 and 4, executed carveout 8 KiB, and
// the 16-barrier kernel a theoretical occupancy of 50 %. CUPTI records carry no barrier count;
// occtrace reads it from the loaded cubin into OCC_FUNCTION.
TEST(FunctionFacts, BarrierCountFromTheCubinMatchesNsightCompute) {
  const occtrace::Report report = ReportWithExtraRows(R"sql(
INSERT INTO StringIds VALUES (100, 'bar16(float*)'), (101, 'bar16'), (102, '_Z5bar16Pf'),
                             (103, 'bar8(float*)'), (104, 'bar8'), (105, '_Z4bar8Pf');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (100, 0, 1, NULL, 100, 101, 102, 0, 0, 16, 1056, 1, 1, 256, 1, 1, 0, 0, 0, 0, 8192, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (101, 0, 1, NULL, 103, 104, 105, 0, 0, 16, 1056, 1, 1, 256, 1, 1, 0, 0, 0, 0, 8192, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (3000000, 10000, 100, 7, 900), (3100000, 10000, 101, 7, 901);
INSERT INTO OCC_FUNCTION (moduleId, mangledName, localMemoryPerThread, barrierCount,
                          registersPerThread, maxThreadsPerBlock)
  VALUES (1, 102, 0, 16, 16, NULL), (1, 105, 0, 8, 16, NULL);
)sql");
  const auto* bar16 = Find(report, "bar16(float*)");
  const auto* bar8 = Find(report, "bar8(float*)");
  ASSERT_NE(bar16, nullptr);
  ASSERT_NE(bar8, nullptr);
  EXPECT_EQ(bar16->occupancy().ncu_block_limit_barriers(), 4);
  EXPECT_DOUBLE_EQ(bar16->occupancy().theoretical_occupancy_pct(), 50.0);
  EXPECT_EQ(bar16->limiting_factor(), "barriers");
  // The assumption note names only the configurations whose count is unknown (the base trace's).
  const std::string note = "barrier count not recorded for " + std::to_string(report.groups_total() - 2) +
                           " of " + std::to_string(report.groups_total()) + " configurations: ";
  bool noted = false;
  for (const auto& n : report.notes()) noted |= n.rfind(note, 0) == 0;
  EXPECT_TRUE(noted) << note;
  EXPECT_EQ(bar8->occupancy().ncu_block_limit_barriers(), 8);
  EXPECT_EQ(bar8->occupancy().ncu_block_limit_shared_mem(), 8);
  // No "barrier count unknown" caveat for kernels whose count was recorded.
  for (const auto* g : {bar16, bar8}) {
    for (const auto& s : g->suggestions()) {
      EXPECT_EQ(s.assumptions().find("barrier count unknown"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// A launch the range profiler replayed comes back from CUPTI with no timestamps and
// sharedMemoryExecuted = 0 (CUDA 13.0, measured on an H100), so the injector files it under a configuration
// of its own. The report must count it with its siblings, or they read "not measured".
TEST(ProfiledLaunches, FoldIntoTheirConfiguration) {
  const occtrace::Report report = ReportWithExtraRows(R"sql(
INSERT INTO StringIds VALUES (200, 'axpy(float*)'), (201, 'axpy'), (202, '_Z4axpyPf');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (200, 0, 1, NULL, 200, 201, 202, 0, 0, 16, 528, 1, 1, 256, 1, 1, 0, 0, 0, 0, 8192, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (201, 0, 1, NULL, 200, 201, 202, 0, 0, 16, 528, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (0, 0, 201, 7, 950), (4000000, 20000, 200, 7, 951),
  (4100000, 30000, 200, 7, 952);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES (950, 1, 'measured', 47.5, 30.4, 1000, 25000, 'sample', 0);
)sql");
  const auto axpy = GroupsNamed(report, "axpy(float*)");
  ASSERT_EQ(axpy.size(), 1u);
  EXPECT_EQ(axpy[0]->launches(), 3);
  EXPECT_EQ(axpy[0]->total_ns(), 20000 + 30000 + 25000);  // the profiled launch timed by gpuTimeNs
  EXPECT_EQ(axpy[0]->shared_mem_executed(), 8192);
  EXPECT_EQ(axpy[0]->achieved().samples(), 1);
  EXPECT_DOUBLE_EQ(axpy[0]->achieved().mean_pct(), 47.5);
}

// CUDA 13 on the H100 (examples/train_small_h100.sql, cuDNN's sm80_xmma_fprop kernel): the
// replayed launch's record lacks the requested carveout as well (NULL), while its 29 siblings
// requested 100 %. It still belongs to them. A launch that did request a different carveout
// does not.
TEST(ProfiledLaunches, FoldWhenTheRequestedCarveoutIsUnreportedToo) {
  const occtrace::Report report = ReportWithExtraRows(R"sql(
INSERT INTO StringIds VALUES (210, 'conv(float*)'), (211, 'conv'), (212, '_Z4convPf');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (210, 0, 1, NULL, 210, 211, 212, 0, 0, 168, 1, 512, 1, 128, 1, 1, 0, 122880, 0, 0, 233472, 1, 100, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (211, 0, 1, NULL, 210, 211, 212, 0, 0, 168, 1, 512, 1, 128, 1, 1, 0, 122880, 0, 0, 0, 1, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (212, 0, 1, NULL, 210, 211, 212, 0, 0, 168, 1, 512, 1, 128, 1, 1, 0, 122880, 0, 0, 0, 1, 50, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (0, 0, 211, 7, 970), (4000000, 30000, 210, 7, 971),
  (4100000, 30000, 210, 7, 972), (4200000, 30000, 212, 7, 973);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES (970, 1, 'measured', 6.2, 4.0, 1000, 31000, 'sample', 0);
)sql");
  const auto conv = GroupsNamed(report, "conv(float*)");
  ASSERT_EQ(conv.size(), 2u);  // the 100 % family (with its measured launch) and the 50 % launch
  const occtrace::KernelGroup* main_group = conv[0]->launches() == 3 ? conv[0] : conv[1];
  const occtrace::KernelGroup* other = main_group == conv[0] ? conv[1] : conv[0];
  EXPECT_EQ(main_group->launches(), 3);
  EXPECT_EQ(main_group->shared_mem_executed(), 233472);
  EXPECT_EQ(main_group->achieved().samples(), 1);
  EXPECT_EQ(other->launches(), 1);
  EXPECT_EQ(other->achieved().samples(), 0);
}

// The H100 example again (multi_tensor_apply_kernel): the profiled first launch reported a 32 KiB
// carveout, its 59 siblings 16 KiB, and the program traced without the profiler never showed two
// carveouts for it. The measured launch belongs to its siblings. When every launch was profiled
// (`all` mode) nothing tells which carveout is the program's, so groups stay apart.
TEST(ProfiledLaunches, FoldWhenTheReplayReportedAnotherCarveout) {
  const std::string configs = R"sql(
INSERT INTO StringIds VALUES (220, 'mta(float*)'), (221, 'mta'), (222, '_Z3mtaPf');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (220, 0, 1, NULL, 220, 221, 222, 0, 0, 27, 19, 1, 1, 512, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (221, 0, 1, NULL, 220, 221, 222, 0, 0, 27, 19, 1, 1, 512, 1, 1, 0, 0, 0, 0, 16384, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (1000, 0, 220, 7, 980), (4000000, 15000, 221, 7, 981),
  (4100000, 15000, 221, 7, 982);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES (980, 1, 'measured', 20.7, 13.2, 1000, 16000, 'sample', 0);
)sql";
  const occtrace::Report sample_report = ReportWithExtraRows(configs);
  const auto sampled = GroupsNamed(sample_report, "mta(float*)");
  ASSERT_EQ(sampled.size(), 1u);
  EXPECT_EQ(sampled[0]->launches(), 3);
  EXPECT_EQ(sampled[0]->shared_mem_executed(), 16384);
  EXPECT_EQ(sampled[0]->achieved().samples(), 1);

  const occtrace::Report all_report = ReportWithExtraRows(configs + R"sql(
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES (981, 1, 'measured', 21.0, 13.4, 1000, 15000, 'all', 0),
  (982, 1, 'measured', 21.2, 13.5, 1000, 15000, 'all', 0);
)sql");
  EXPECT_EQ(GroupsNamed(all_report, "mta(float*)").size(), 2u);
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// A grid below one wave leaves room for more blocks per SM unused: 32 blocks on 132 SMs put at
// most one block on any SM whatever the register count, so a register cap gains nothing and no
// time is recoverable from occupancy. A 1-thread grid of one block cannot use a bigger block.
TEST(SubWaveGrids, NoOccupancyAdviceThatCannotHelp) {
  const occtrace::Report report = ReportWithExtraRows(R"sql(
INSERT INTO StringIds VALUES (300, 'bn(float*)'), (301, 'bn'), (302, '_Z2bnPf'),
                             (303, 'one(int*)'), (304, 'one'), (305, '_Z3onePi');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (300, 0, 1, NULL, 300, 301, 302, 0, 0, 48, 32, 1, 1, 512, 1, 1, 0, 0, 0, 0, 8192, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (301, 0, 1, NULL, 303, 304, 305, 0, 0, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 8192, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (5000000, 300000, 300, 7, 960), (5400000, 50000, 301, 7, 961);
)sql");
  const auto* bn = Find(report, "bn(float*)");
  const auto* one = Find(report, "one(int*)");
  ASSERT_NE(bn, nullptr);
  ASSERT_NE(one, nullptr);
  // 48 regs x 512 threads: 2 blocks/SM, 50 % theoretical (the cap to 40 would allow 3).
  EXPECT_EQ(bn->occupancy().active_blocks_per_sm(), 2);
  for (const auto* g : {bn, one}) {
    for (const auto& s : g->suggestions()) {
      EXPECT_NE(s.kind(), "register_cap") << g->name();
      EXPECT_NE(s.kind(), "shared_memory") << g->name();
      if (s.kind() == "block_size") {
        EXPECT_LE(s.block_size(), g->grid_x() * g->block_x());
      }
    }
    EXPECT_EQ(g->recoverable_ns_upper_bound(), 0) << g->name();
    EXPECT_DOUBLE_EQ(g->tail_pct(), 0.0) << g->name();  // no full wave, so no tail effect
  }
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// With several samples the mean already averages over tail placements: no advice to sample more.
TEST(TailWaveSamples, SeveralSamplesNeedNoAdviceToSampleMore) {
  const occtrace::Report report = ReportWithExtraRows(R"sql(
INSERT INTO OCC_LAUNCH VALUES (2000000, 100000, 5, 7, 960), (2100000, 100000, 5, 7, 961);
INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES (960, 1, 'measured', 79.0, 50.6, 1000, 99000, 'sample', 1),
  (961, 1, 'measured', 83.0, 53.1, 1000, 99000, 'sample', 2);
)sql");
  bool found = false;
  for (const auto& g : report.groups()) {
    if (g.name() != "tail_kernel(int)") continue;
    found = true;
    EXPECT_EQ(g.achieved().samples(), 3);
    EXPECT_TRUE(AnyContains(g.achieved().gap_explanations(), "tail"));
    EXPECT_FALSE(AnyContains(g.achieved().gap_explanations(), "varies from launch to launch"));
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace occ
