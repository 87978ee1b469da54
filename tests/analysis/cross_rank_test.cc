// The report across ranks on generated rank files: per-rank totals, the slowest rank of each
// top configuration and of the run, NCCL time kept apart from compute, configurations some ranks
// did not run, rank identity (recorded, from the file name, none), duplicate ranks and
// directory inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "analyzer/analyze/analysis.h"
#include "analyzer/read/registry/input_paths.h"
#include "analyzer/read/rank_identity.h"
#include "schema/report.pb.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::MakeOccTrace;
using testing::RunCli;
using testing::ScratchDir;

// One rank of a data-parallel step: 10 GEMM launches of `gemm_ns`, 10 NCCL all-reduce launches
// of `nccl_ns`, 20 elementwise launches of 10 us. `rank` < 0 writes no rank rows.
struct RankTrace {
  int rank = 0;
  int world_size = 4;
  int64_t gemm_ns = 100000;
  int64_t nccl_ns = 50000;
  int gemm_grid_x = 64;        // another value: the GEMM in a configuration of this rank only
  bool extra_kernel = false;   // a kernel no other rank runs
  int device = 0;              // the CUDA ordinal its kernels ran on
  bool sees_two_gpus = false;  // records GPUs 0 and 1, full facts (OCC_DEVICE) for `device` only
  std::string command;         // OCC_META command_line; none when empty
  bool conv_not_gemm = false;  // the 10 long launches run conv_kernel: another program's work
};

std::string RankInserts(const RankTrace& t) {
  std::string sql = "INSERT INTO OCC_META (name, value) VALUES ('schema_version', '1'), ('pid', '" +
                    std::to_string(9000 + t.rank) + "'), ('host', 'node0')";
  if (t.rank >= 0) {
    sql += ", ('rank', '" + std::to_string(t.rank) + "'), ('local_rank', '" + std::to_string(t.rank) +
           "'), ('world_size', '" + std::to_string(t.world_size) +
           "'), ('local_world_size', '4'), ('rank_source', 'torchrun')";
  }
  if (!t.command.empty()) sql += ", ('command_line', '" + t.command + "')";
  sql += ";\n";
  std::string strings = R"(INSERT INTO StringIds (id, value) VALUES
  (1, 'void gemm_kernel<128>(float const*, float*)'), (2, 'gemm_kernel'), (3, '_Z11gemm_kernelILi128EEvPKfPf'),
  (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (5, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (6, '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE'),
  (7, 'void add_kernel(float*)'), (8, 'add_kernel'), (9, '_Z10add_kernelPf'),
  (10, 'void debug_kernel(float*)'), (11, 'debug_kernel'), (12, '_Z12debug_kernelPf');
)";
  if (t.conv_not_gemm) strings = std::regex_replace(strings, std::regex("gemm_kernel"), "conv_kernel");
  sql += strings;
  sql += R"(INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES (0, 0, 1, 'GPU', 132);
)";
  if (t.sees_two_gpus) {
    sql += R"(INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (1, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES (1, 1, 1, 'GPU1', 132);
)";
  }
  sql += "INSERT INTO OCC_DEVICE (gpuId, reservedSharedMemPerBlock, maxThreadsPerMultiprocessor, isMigEnabled, "
         "gpuInstanceId, computeInstanceId, driverVersion) VALUES (" +
         std::to_string(t.device) + ", 1024, 2048, 0, NULL, NULL, 13000);\n";
  auto config = [&t](int id, int name, int regs, int grid, int block) {
    return "(" + std::to_string(id) + ", " + std::to_string(t.device) + ", 1, NULL, " + std::to_string(name) + ", " +
           std::to_string(name + 1) + ", " + std::to_string(name + 2) + ", 0, 0, " +
           std::to_string(regs) + ", " + std::to_string(grid) + ", 1, 1, " + std::to_string(block) +
           ", 1, 1, 0, 0, 0, 0, 233472, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0)";
  };
  sql += "INSERT INTO OCC_KERNEL_CONFIG (id, deviceId, contextId, greenContextId, demangledName, "
         "shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, "
         "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
         "localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, "
         "sharedMemoryRequestedPercentage, graphId, graphNodeId, clusterX, clusterY, clusterZ, "
         "clusterSchedulingPolicy, maxPotentialClusterSize, maxActiveClusters, isDeviceLaunched) VALUES " +
         config(1, 1, 64, t.gemm_grid_x, 256) + ", " + config(2, 4, 96, 2, 512) + ", " +
         config(3, 7, 16, 1024, 128) + (t.extra_kernel ? ", " + config(4, 10, 16, 1, 32) : "") + ";\n";
  std::string launches;
  int64_t start = 1000, corr = 1;
  auto launch = [&](int64_t ns, int config_id) {
    launches += (launches.empty() ? "" : ", ") + std::string("(") + std::to_string(start) + ", " +
                std::to_string(ns) + ", " + std::to_string(config_id) + ", 7, " + std::to_string(corr++) + ")";
    start += ns + 1000;
  };
  for (int step = 0; step < 10; ++step) {
    launch(t.gemm_ns, 1);
    launch(10000, 3);
    launch(10000, 3);
    launch(t.nccl_ns, 2);
  }
  if (t.extra_kernel) launch(5000, 4);
  sql += "INSERT INTO OCC_LAUNCH (start, duration, configId, streamId, correlationId) VALUES " + launches + ";\n";
  return sql;
}

StatusOr<occtrace::Report> Report(const std::vector<std::string>& inputs) {
  ReportOptions options;
  options.inputs = inputs;
  options.top = 0;
  return BuildReport(options);
}

const occtrace::RankKernel* KernelNamed(const occtrace::CrossRank& x, const std::string& prefix) {
  for (const auto& k : x.kernels()) {
    if (k.name().rfind(prefix, 0) == 0) return &k;
  }
  return nullptr;
}

TEST(CrossRank, SlowerRankIsTheStragglerAndNcclTimeIsWaiting) {
  ScratchDir dir;
  std::vector<std::string> files;
  // Rank 1 is 30% slower on the GEMM; the others wait for it in the all-reduce.
  const int64_t gemm[4] = {100000, 130000, 100000, 101000};
  const int64_t nccl[4] = {50000, 20000, 50000, 49000};
  for (int r = 0; r < 4; ++r) {
    files.push_back(dir.Path("trace-" + std::to_string(r) + ".db"));
    RankTrace t;
    t.rank = r;
    t.gemm_ns = gemm[r];
    t.nccl_ns = nccl[r];
    MakeOccTrace(files.back(), RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_TRUE(report->has_cross_rank());
  const occtrace::CrossRank& x = report->cross_rank();
  EXPECT_EQ(x.identity(), "occtrace");
  EXPECT_EQ(x.rank_sources(), "torchrun");
  EXPECT_EQ(x.world_size(), 4);
  EXPECT_TRUE(x.warnings().empty());
  ASSERT_EQ(x.ranks_size(), 4);
  for (int r = 0; r < 4; ++r) {
    const occtrace::RankSummary& s = x.ranks(r);
    EXPECT_EQ(s.file_index(), r);
    EXPECT_EQ(s.label(), "rank " + std::to_string(r));
    EXPECT_EQ(s.launches(), 40);
    EXPECT_EQ(s.communication_gpu_ns(), 10 * nccl[r]);
    EXPECT_EQ(s.compute_gpu_ns(), 10 * gemm[r] + 20 * 10000);
    EXPECT_EQ(s.total_gpu_ns(), s.compute_gpu_ns() + s.communication_gpu_ns());
    EXPECT_EQ(report->files(r).rank(), r);
    EXPECT_EQ(report->files(r).world_size(), 4);
    EXPECT_EQ(report->files(r).rank_source(), "torchrun");
  }
  // Compute: 1.2, 1.5, 1.2, 1.21 ms; median 1.205 ms; rank 1 is 24.48% over.
  EXPECT_EQ(x.slowest_file_index(), 1);
  EXPECT_EQ(x.slowest_compute_ns(), 1500000);
  EXPECT_DOUBLE_EQ(x.median_compute_ns(), 1205000);
  EXPECT_NEAR(x.slowest_over_median_pct(), 100.0 * 295000 / 1205000, 1e-9);
  EXPECT_EQ(x.least_communication_file_index(), 1);
  // The cause: rank 1's GEMM, 1.3 ms against a median of 1.005 ms; the elementwise kernel takes
  // the same on every rank and the all-reduce is waiting: neither is listed.
  ASSERT_EQ(x.straggler_causes_size(), 1);
  EXPECT_EQ(x.straggler_causes(0).name(), "void gemm_kernel<128>(float const*, float*)");
  EXPECT_EQ(x.straggler_causes(0).slowest_rank_ns(), 1300000);
  EXPECT_DOUBLE_EQ(x.straggler_causes(0).median_ns(), 1005000);
  EXPECT_EQ(x.straggler_causes(0).ran_on(), 4);

  const occtrace::RankKernel* gemm_row = KernelNamed(x, "void gemm_kernel");
  ASSERT_NE(gemm_row, nullptr);
  EXPECT_EQ(&x.kernels(0), gemm_row);  // most GPU time first
  const occtrace::RankSpread& spread = gemm_row->spread();
  EXPECT_FALSE(spread.communication());
  EXPECT_EQ(spread.ran_on(), 4);
  EXPECT_EQ(spread.slowest_file_index(), 1);
  EXPECT_EQ(spread.slowest_ns(), 1300000);
  EXPECT_EQ(spread.fastest_file_index(), 0);  // ranks 0 and 2 tie: the first in rank order
  EXPECT_DOUBLE_EQ(spread.median_ns(), 1005000);
  EXPECT_NEAR(spread.slowest_over_median_pct(), 100.0 * 295000 / 1005000, 1e-9);
  ASSERT_EQ(spread.per_rank_size(), 4);
  EXPECT_EQ(spread.per_rank(1).total_ns(), 1300000);
  EXPECT_EQ(spread.per_rank(1).launches(), 10);
  EXPECT_LT(spread.per_rank(1).achieved_pct(), 0);  // not measured

  const occtrace::RankKernel* nccl_row = KernelNamed(x, "ncclDevKernel");
  ASSERT_NE(nccl_row, nullptr);
  EXPECT_TRUE(nccl_row->spread().communication());
  EXPECT_EQ(nccl_row->owner_library(), "NCCL");
  EXPECT_EQ(nccl_row->spread().fastest_file_index(), 1);
  EXPECT_TRUE(x.rank_only_configs().empty());

  // The merged groups carry the same per-rank figures.
  for (const auto& g : report->groups()) {
    EXPECT_EQ(g.rank_spread().ran_on(), 4) << g.name();
    int64_t sum = 0;
    for (const auto& f : g.rank_spread().per_rank()) sum += f.total_ns();
    EXPECT_EQ(sum, g.total_ns()) << g.name();
  }
}

// The report opens with the straggler and its cause, before any table: here rank 2's GEMM on a
// smaller grid of its own (another configuration, the same kernel) and a kernel it alone runs.
TEST(CrossRank, StragglerCauseOpensTheReport) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int r = 0; r < 3; ++r) {
    files.push_back(dir.Path("a_long_directory_name_for_the_job/ddp_slow_run_rank" + std::to_string(r) +
                             "_of_three_attempt_2.db"));
    std::filesystem::create_directories(std::filesystem::path(files.back()).parent_path());
    RankTrace t;
    t.rank = r;
    t.world_size = 3;
    t.gemm_ns = r == 2 ? 150000 : 100000;
    t.gemm_grid_x = r == 2 ? 60 : 64;
    t.extra_kernel = r == 2;
    MakeOccTrace(files.back(), RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::CrossRank& x = report->cross_rank();
  EXPECT_EQ(x.slowest_file_index(), 2);
  // By kernel name across configurations: the GEMM 1.5 ms on rank 2, median 1.0 ms; the debug
  // kernel 5 µs on rank 2 alone (median 0).
  ASSERT_EQ(x.straggler_causes_size(), 2);
  EXPECT_EQ(x.straggler_causes(0).slowest_rank_ns(), 1500000);
  EXPECT_DOUBLE_EQ(x.straggler_causes(0).median_ns(), 1000000);
  EXPECT_EQ(x.straggler_causes(1).name(), "void debug_kernel(float*)");
  EXPECT_EQ(x.straggler_causes(1).ran_on(), 1);

  std::vector<std::string> args = files;
  auto text = RunCli(args);
  ASSERT_EQ(text.code, 0) << text.err;
  // Wrapped lines joined.
  const std::string flat = std::regex_replace(text.out, std::regex("\n +"), " ");
  const size_t cause = flat.find("Cause: gemm_kernel<128> takes 1.50 ms on rank 2, 500.0 µs over the");
  const size_t alone = flat.find("rank 2 alone runs 5.00 µs of debug_kernel");
  const size_t table = flat.find("── Top ");
  ASSERT_NE(cause, std::string::npos) << text.out;
  ASSERT_NE(alone, std::string::npos) << text.out;
  EXPECT_LT(alone, table) << "the straggler's cause comes before the first table";
  // The rank table tells the files apart (they share a directory and most of their names): the
  // directory goes, and of the 40-character names the 28-character tail with the rank fits.
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(text.out.find("…_rank" + std::to_string(r) + "_of_three_attempt_2.db (node0)"),
              std::string::npos)
        << text.out;
  }
}

// Files of two different programs (by their recorded commands, as --diff tells them apart) are
// no distributed job: rank 1 is 50% slower (1.7 ms of compute against 1.2 ms; median 1.45 ms,
// 17.2% over), yet no straggler is named, the check's finding says why, and no cause is given.
TEST(CrossRank, DifferentProgramsGetNoStragglerVerdict) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int r = 0; r < 2; ++r) {
    files.push_back(dir.Path("trace-" + std::to_string(r) + ".db"));
    RankTrace t;
    t.rank = r;
    t.world_size = 2;
    t.gemm_ns = r == 0 ? 100000 : 150000;
    t.command = r == 0 ? "python train.py" : "./bench --layers 24";
    MakeOccTrace(files.back(), RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::CrossRank& x = report->cross_rank();
  EXPECT_NEAR(x.slowest_over_median_pct(), 100.0 * 250000 / 1450000, 1e-9);
  // Every kernel is shared (same names): the commands alone tell the programs apart.
  EXPECT_NE(x.different_programs().find("rank 0 and rank 1 come from different programs: train.py on "
                                        "rank 0, bench on rank 1 (kernels both traces ran hold 100.0% of "
                                        "the GPU time on rank 0 and 100.0% on rank 1)"),
            std::string::npos)
      << x.different_programs();
  EXPECT_TRUE(x.straggler_causes().empty());
  auto text = RunCli(files);
  ASSERT_EQ(text.code, 0) << text.err;
  const std::string flat = std::regex_replace(text.out, std::regex("\n +"), " ");
  EXPECT_NE(flat.find("Straggler    none named: rank 0 and rank 1 come from different programs"), std::string::npos)
      << text.out;
  EXPECT_EQ(flat.find("over the median rank"), std::string::npos) << text.out;

  // The same two programs' commands agree once both run train.py: rank 1 is the straggler.
  for (int r = 0; r < 2; ++r) {
    RankTrace t;
    t.rank = r;
    t.world_size = 2;
    t.gemm_ns = r == 0 ? 100000 : 150000;
    t.command = r == 0 ? "python train.py --seed 1" : "python3 train.py --seed 2";
    std::filesystem::remove(files[static_cast<size_t>(r)]);
    MakeOccTrace(files[static_cast<size_t>(r)], RankInserts(t));
  }
  auto same = Report(files);
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_EQ(same->cross_rank().different_programs(), "");
  EXPECT_EQ(same->cross_rank().straggler_causes_size(), 1);
}

// Without recorded commands (Nsight Systems exports, torch.profiler traces) the kernels decide,
// as for --diff: file 1 runs conv_kernel (1.5 ms) where file 0 runs gemm_kernel (1 ms); the
// 200 µs elementwise and 500 µs NCCL kernels they share hold 700 of 1,700 µs on file 0 (41.2%)
// and of 2,200 µs on file 1 (31.8%), below half on both.
TEST(CrossRank, MostlyOtherKernelsWithoutCommandsGetNoStragglerVerdict) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int r = 0; r < 2; ++r) {
    files.push_back(dir.Path("trace-" + std::to_string(r) + ".db"));
    RankTrace t;
    t.rank = -1;
    t.gemm_ns = r == 0 ? 100000 : 150000;
    t.conv_not_gemm = r == 1;
    MakeOccTrace(files.back(), RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::CrossRank& x = report->cross_rank();
  EXPECT_NE(x.different_programs().find("file 0 and file 1 may come from different programs or workloads: "
                                        "kernels both traces ran hold 41.2% of the GPU time on file 0 and "
                                        "31.8% on file 1"),
            std::string::npos)
      << x.different_programs();
  EXPECT_TRUE(x.straggler_causes().empty());
}

TEST(CrossRank, RanksListedInRankOrderWhateverTheFileOrder) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int r : {3, 1, 2, 0}) {
    files.push_back(dir.Path("t" + std::to_string(r) + ".db"));
    RankTrace t;
    t.rank = r;
    MakeOccTrace(files.back(), RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const auto& ranks = report->cross_rank().ranks();
  ASSERT_EQ(ranks.size(), 4);
  EXPECT_EQ(ranks[0].file_index(), 3);
  EXPECT_EQ(ranks[0].label(), "rank 0");
  EXPECT_EQ(ranks[3].file_index(), 0);
  EXPECT_EQ(ranks[3].label(), "rank 3");
  // Equal ranks: no straggler above the threshold.
  EXPECT_LT(report->cross_rank().slowest_over_median_pct(), 1e-9);
}

TEST(CrossRank, ConfigurationsSomeRanksDidNotRun) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int r = 0; r < 3; ++r) {
    files.push_back(dir.Path("trace-" + std::to_string(r) + ".db"));
    RankTrace t;
    t.rank = r;
    t.world_size = 3;
    t.extra_kernel = r == 2;        // a kernel only rank 2 runs
    t.gemm_grid_x = r == 1 ? 60 : 64;  // rank 1 runs the GEMM on a smaller grid
    MakeOccTrace(files.back(), RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::CrossRank& x = report->cross_rank();
  EXPECT_EQ(x.rank_only_configs_total(), 3);
  bool debug_seen = false, gemm_other_seen = false, gemm_main_seen = false;
  for (const auto& c : x.rank_only_configs()) {
    if (c.name() == "void debug_kernel(float*)") {
      debug_seen = true;
      EXPECT_EQ(std::vector<int>(c.on_files().begin(), c.on_files().end()), std::vector<int>{2});
      EXPECT_FALSE(c.kernel_on_other_files());
      EXPECT_EQ(c.launches(), 1);
      EXPECT_EQ(c.total_ns(), 5000);
    } else if (c.launch().find("grid 60 ") != std::string::npos) {
      gemm_other_seen = true;
      EXPECT_EQ(std::vector<int>(c.on_files().begin(), c.on_files().end()), std::vector<int>{1});
      EXPECT_TRUE(c.kernel_on_other_files());
    } else if (c.launch().find("grid 64 ") != std::string::npos) {
      gemm_main_seen = true;
      EXPECT_EQ(std::vector<int>(c.on_files().begin(), c.on_files().end()), (std::vector<int>{0, 2}));
      EXPECT_TRUE(c.kernel_on_other_files());
    }
  }
  EXPECT_TRUE(debug_seen);
  EXPECT_TRUE(gemm_other_seen);
  EXPECT_TRUE(gemm_main_seen);
}

TEST(CrossRank, FilesWithoutRankAreNumberedByPosition) {
  ScratchDir dir;
  std::vector<std::string> files = {dir.Path("before.db"), dir.Path("after.db")};
  for (const auto& f : files) {
    RankTrace t;
    t.rank = -1;
    MakeOccTrace(f, RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::CrossRank& x = report->cross_rank();
  EXPECT_EQ(x.identity(), "position");
  EXPECT_EQ(x.world_size(), 0);
  ASSERT_EQ(x.ranks_size(), 2);
  EXPECT_EQ(x.ranks(0).label(), "file 0");
  EXPECT_EQ(x.ranks(1).label(), "file 1");
  for (const auto& f : report->files()) {
    EXPECT_EQ(f.rank(), -1);
    EXPECT_EQ(f.world_size(), -1);
    EXPECT_EQ(f.rank_source(), "");
  }
}

TEST(CrossRank, RankFromTheFileNameWhenTheTraceHasNone) {
  ScratchDir dir;
  std::vector<std::string> files = {dir.Path("job-rank1.db"), dir.Path("job-rank0.db")};
  for (const auto& f : files) {
    RankTrace t;
    t.rank = -1;
    MakeOccTrace(f, RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->cross_rank().identity(), "file name");
  EXPECT_EQ(report->files(0).rank(), 1);
  EXPECT_EQ(report->files(0).rank_source(), "file name");
  EXPECT_EQ(report->cross_rank().ranks(0).file_index(), 1);
  EXPECT_EQ(report->cross_rank().ranks(0).label(), "rank 0");
}

TEST(CrossRank, RankFromFileNameOnlyWhenExplicit) {
  EXPECT_EQ(RankFromFileName("trace-rank3.db"), 3);
  EXPECT_EQ(RankFromFileName("out/rank_03.sqlite"), 3);
  EXPECT_EQ(RankFromFileName("run.Rank-12.sql"), 12);
  EXPECT_EQ(RankFromFileName("RANK7.db"), 7);
  EXPECT_EQ(RankFromFileName("trace-3.db"), std::nullopt);        // a pid or a sequence number?
  EXPECT_EQ(RankFromFileName("frank3.db"), std::nullopt);         // not the word "rank"
  EXPECT_EQ(RankFromFileName("rank1-rank2.db"), std::nullopt);    // two ranks: which?
  EXPECT_EQ(RankFromFileName("rank3x.db"), std::nullopt);
  EXPECT_EQ(RankFromFileName("rank7/trace.db"), std::nullopt);    // directories do not count
  EXPECT_EQ(RankFromFileName("ranking.db"), std::nullopt);
}

TEST(CrossRank, DuplicateRanksWarnAndStayApart) {
  ScratchDir dir;
  std::vector<std::string> files = {dir.Path("a.db"), dir.Path("b.db"), dir.Path("c.db")};
  const int ranks[3] = {0, 0, 1};
  for (int i = 0; i < 3; ++i) {
    RankTrace t;
    t.rank = ranks[i];
    t.world_size = 2;
    MakeOccTrace(files[static_cast<size_t>(i)], RankInserts(t));
  }
  auto report = Report(files);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const occtrace::CrossRank& x = report->cross_rank();
  ASSERT_EQ(x.warnings_size(), 1);
  EXPECT_NE(x.warnings(0).find("2 files claim rank 0"), std::string::npos) << x.warnings(0);
  ASSERT_EQ(x.ranks_size(), 3);
  EXPECT_EQ(x.ranks(0).label(), "rank 0 [file 0]");
  EXPECT_EQ(x.ranks(1).label(), "rank 0 [file 1]");
  EXPECT_EQ(x.ranks(2).label(), "rank 1");
}

TEST(CrossRank, WorldSizesThatDisagreeAndMissingRanksWarn) {
  {
    std::vector<occtrace::InputFile> files(2);
    files[0].set_path("a.db");
    files[0].set_rank(0);
    files[0].set_world_size(2);
    files[0].set_rank_source("torchrun");
    files[1].set_path("b.db");
    files[1].set_rank(1);
    files[1].set_world_size(8);
    files[1].set_rank_source("torchrun");
    const auto warnings = ResolveRanks(&files);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("different world sizes (2, 8)"), std::string::npos) << warnings[0];
  }
  {
    std::vector<occtrace::InputFile> files(2);
    for (int i = 0; i < 2; ++i) {
      files[static_cast<size_t>(i)].set_path("f.db");
      files[static_cast<size_t>(i)].set_rank(i * 2);
      files[static_cast<size_t>(i)].set_world_size(4);
      files[static_cast<size_t>(i)].set_rank_source("slurm");
    }
    const auto warnings = ResolveRanks(&files);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("no file for ranks 1, 3"), std::string::npos) << warnings[0];
  }
}

TEST(CrossRank, SingleFileHasNoCrossRankSection) {
  ScratchDir dir;
  RankTrace t;
  t.rank = 5;
  t.world_size = 8;
  MakeOccTrace(dir.Path("trace-5.db"), RankInserts(t));
  auto report = Report({dir.Path("trace-5.db")});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(report->has_cross_rank());
  EXPECT_EQ(report->files(0).rank(), 5);
  EXPECT_EQ(report->files(0).local_rank(), 5);
  EXPECT_EQ(report->files(0).world_size(), 8);
  EXPECT_EQ(report->files(0).local_world_size(), 4);
  EXPECT_EQ(report->files(0).total_gpu_ns(), 10 * 100000 + 20 * 10000 + 10 * 50000);
  EXPECT_EQ(report->files(0).communication_gpu_ns(), 10 * 50000);
  for (const auto& g : report->groups()) EXPECT_FALSE(g.has_rank_spread());
}

// Each rank of a 2-GPU job records both GPUs it can see (CUPTI's device records), with full facts
// only for the one it ran on: the report describes one GPU per rank, the one its kernels ran on,
// and has no "taken from the architecture table" note for the other.
TEST(CrossRank, EachRankDescribesOnlyTheGpuItRanOn) {
  ScratchDir dir;
  for (int r : {0, 1}) {
    RankTrace t;
    t.rank = r;
    t.world_size = 2;
    t.device = r;
    t.sees_two_gpus = true;
    MakeOccTrace(dir.Path("trace-" + std::to_string(r) + ".db"), RankInserts(t));
  }
  auto report = Report({dir.Path("trace-0.db"), dir.Path("trace-1.db")});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->devices_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(report->devices(i).file_index(), i);
    EXPECT_EQ(report->devices(i).device_id(), i) << "rank i ran on GPU i";
    EXPECT_EQ(report->devices(i).source(), occtrace::SOURCE_TRACE);
  }
  for (const auto& note : report->notes()) {
    EXPECT_EQ(note.find("architecture table"), std::string::npos) << note;
  }
  for (const auto& g : report->groups()) EXPECT_GT(g.occupancy().theoretical_occupancy_pct(), 0) << g.name();
}

TEST(CrossRank, DirectoryReadsItsTraceFilesInNameOrder) {
  ScratchDir dir;
  for (int r : {10, 2}) {
    RankTrace t;
    t.rank = r;
    t.world_size = 11;
    MakeOccTrace(dir.Path("trace-" + std::to_string(r) + ".db"), RankInserts(t));
  }
  testing::WriteFile(dir.Path("README.txt"), "not a trace\n");
  auto report = Report({dir.Path("")});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->files_size(), 2);
  EXPECT_EQ(report->files(0).path(), dir.Path("trace-2.db"));
  EXPECT_EQ(report->files(1).path(), dir.Path("trace-10.db"));
  EXPECT_TRUE(report->has_cross_rank());
}

TEST(CrossRank, NaturalOrderComparesDigitRunsByValue) {
  EXPECT_TRUE(NaturalLess("trace-2.db", "trace-10.db"));
  EXPECT_FALSE(NaturalLess("trace-10.db", "trace-2.db"));
  EXPECT_TRUE(NaturalLess("a.db", "b.db"));
  EXPECT_TRUE(NaturalLess("rank9", "rank10"));
  EXPECT_FALSE(NaturalLess("x", "x"));
}

}  // namespace
}  // namespace occ
