// Which launches had the device to themselves (analyzer/read/launch_overlap.h), on hand-built
// timelines whose overlaps are worked out by hand in each test's comment; then the same through
// the occtrace and Nsight Systems readers and the report.
#include "analyzer/read/launch_overlap.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/analyze/analysis.h"
#include "test_traces.h"

namespace occ {
namespace {

using ::occ::testing::MakeDb;
using ::occ::testing::MakeOccTrace;
using ::occ::testing::NsysSchemaSql;
using ::occ::testing::ScratchDir;

// Launch helper: [start, end) on `stream`, configuration `config`.
TimedLaunch L(int64_t start, int64_t end, int64_t stream, int32_t config) { return {start, end, stream, config}; }

// A [100, 200) on stream 1 and B [150, 350) on stream 2: each overlapped 50 ns (A 50 % of its
// time, B 25 %); neither ran alone; the union is [100, 350) = 250 ns.
TEST(LaunchOverlap, TwoStreamsOverlappingPartly) {
  std::vector<TimedLaunch> launches = {L(150, 350, 2, 1), L(100, 200, 1, 0)};
  const OverlapResult r = SweepOverlap(&launches, {0, 0});
  ASSERT_EQ(r.per_config.size(), 2u);
  EXPECT_EQ(r.per_config[0].launches, 1);
  EXPECT_EQ(r.per_config[0].launch_ns, 100);
  EXPECT_EQ(r.per_config[0].overlapped_ns, 50);
  EXPECT_EQ(r.per_config[0].solo_launches, 0);
  EXPECT_EQ(r.per_config[1].overlapped_ns, 50);
  EXPECT_EQ(r.per_config[1].launch_ns, 200);
  EXPECT_EQ(r.per_config[1].solo_launches, 0);
  EXPECT_EQ(r.per_config[0].streams, std::vector<int64_t>({2}));
  EXPECT_EQ(r.per_config[1].streams, std::vector<int64_t>({1}));
  EXPECT_EQ(r.busy_ns, 250);
}

// C [0, 1000) on stream 1 covers D [100, 200), [300, 400), [500, 600) on stream 2: C is
// overlapped 300 ns, every D all of its 100 ns; busy 1000 ns.
TEST(LaunchOverlap, OneLaunchCoveringSeveral) {
  std::vector<TimedLaunch> launches = {L(0, 1000, 1, 0), L(100, 200, 2, 1), L(300, 400, 2, 1), L(500, 600, 2, 1)};
  const OverlapResult r = SweepOverlap(&launches, {0, 0});
  EXPECT_EQ(r.per_config[0].overlapped_ns, 300);
  EXPECT_EQ(r.per_config[0].solo_launches, 0);
  EXPECT_EQ(r.per_config[1].launches, 3);
  EXPECT_EQ(r.per_config[1].launch_ns, 300);
  EXPECT_EQ(r.per_config[1].overlapped_ns, 300);
  EXPECT_EQ(r.per_config[1].solo_launches, 0);
  EXPECT_EQ(r.busy_ns, 1000);
}

// Back to back on one stream, each ending where the next starts: [0, 100), [100, 200),
// [200, 300); then [300, 400) on another stream, touching the last. Half-open intervals: no
// overlap, four solo launches, no stream overlapped, busy 400 ns.
TEST(LaunchOverlap, BackToBackLaunchesTouchingAtOneNanosecondDoNotOverlap) {
  std::vector<TimedLaunch> launches = {L(100, 200, 7, 0), L(0, 100, 7, 0), L(200, 300, 7, 0), L(300, 400, 8, 1)};
  const OverlapResult r = SweepOverlap(&launches, {0, 0});
  EXPECT_EQ(r.per_config[0].launches, 3);
  EXPECT_EQ(r.per_config[0].overlapped_ns, 0);
  EXPECT_EQ(r.per_config[0].solo_launches, 3);
  EXPECT_EQ(r.per_config[0].solo_ns, 300);
  EXPECT_TRUE(r.per_config[0].streams.empty());
  EXPECT_EQ(r.per_config[1].solo_launches, 1);
  EXPECT_TRUE(r.per_config[1].streams.empty());
  EXPECT_EQ(r.busy_ns, 400);
}

// A [0, 100), B [50, 150), C [60, 70): A's time with another launch running is [50, 100) = 50
// ns (C inside B's overlap is not counted twice), B's [50, 100) = 50 ns, C's all 10 ns; busy 150.
TEST(LaunchOverlap, ThreeWayOverlapCountsTimeOnce) {
  std::vector<TimedLaunch> launches = {L(0, 100, 1, 0), L(50, 150, 2, 1), L(60, 70, 3, 2)};
  const OverlapResult r = SweepOverlap(&launches, {0, 0, 0});
  EXPECT_EQ(r.per_config[0].overlapped_ns, 50);
  EXPECT_EQ(r.per_config[1].overlapped_ns, 50);
  EXPECT_EQ(r.per_config[2].overlapped_ns, 10);
  EXPECT_EQ(r.per_config[0].streams, std::vector<int64_t>({2, 3}));
  EXPECT_EQ(r.per_config[2].streams, std::vector<int64_t>({1, 2}));
  EXPECT_EQ(r.busy_ns, 150);
}

// The solo tolerance is 1 % of a launch's own duration: E [0, 1000) overlapped 10 ns by F
// [990, 2000) ran alone (10 <= 10); G [5000, 6000) overlapped 11 ns by H [5989, 7000) did not.
// F is overlapped 10 of 1010 ns (alone), H 11 of 1011 (10.11 allowed: not alone).
TEST(LaunchOverlap, SoloToleranceIsOnePercentOfTheLaunch) {
  std::vector<TimedLaunch> launches = {L(0, 1000, 1, 0), L(990, 2000, 2, 1), L(5000, 6000, 1, 2),
                                       L(5989, 7000, 2, 3)};
  const OverlapResult r = SweepOverlap(&launches, {0, 0, 0, 0});
  EXPECT_EQ(r.per_config[0].overlapped_ns, 10);
  EXPECT_EQ(r.per_config[0].solo_launches, 1);
  EXPECT_EQ(r.per_config[1].solo_launches, 1);
  EXPECT_EQ(r.per_config[2].overlapped_ns, 11);
  EXPECT_EQ(r.per_config[2].solo_launches, 0);
  EXPECT_EQ(r.per_config[3].solo_launches, 0);
  EXPECT_EQ(r.busy_ns, 2000 + 2000);
}

// The same interval on two devices is not an overlap; busy spans add over devices.
TEST(LaunchOverlap, DevicesAreSweptApart) {
  std::vector<TimedLaunch> launches = {L(0, 100, 1, 0), L(0, 100, 2, 1)};
  const OverlapResult r = SweepOverlap(&launches, {0, 1});
  EXPECT_EQ(r.per_config[0].overlapped_ns, 0);
  EXPECT_EQ(r.per_config[1].overlapped_ns, 0);
  EXPECT_EQ(r.per_config[0].solo_launches, 1);
  EXPECT_EQ(r.busy_ns, 200);
}

// Six streams under one long launch: it lists the four lowest ids and says there were more.
TEST(LaunchOverlap, StreamListKeepsTheLowestIds) {
  std::vector<TimedLaunch> launches = {L(0, 10'000, 1, 0)};
  for (int64_t s : {30, 12, 25, 11, 40, 20}) launches.push_back(L(100 * s, 100 * s + 50, s, 1));
  const OverlapResult r = SweepOverlap(&launches, {0, 0});
  EXPECT_EQ(r.per_config[0].streams, std::vector<int64_t>({11, 12, 20, 25}));
  EXPECT_TRUE(r.per_config[0].more_streams);
  EXPECT_EQ(r.per_config[1].streams, std::vector<int64_t>({1}));
  EXPECT_FALSE(r.per_config[1].more_streams);
}

// Rows that are not launches (end <= start, unknown configuration) are left out.
TEST(LaunchOverlap, IgnoresEmptyIntervalsAndUnknownConfigurations) {
  std::vector<TimedLaunch> launches = {L(0, 100, 1, 0), L(50, 50, 2, 0), L(40, 60, 2, 5), L(10, 5, 3, 0)};
  const OverlapResult r = SweepOverlap(&launches, {0});
  EXPECT_EQ(r.per_config[0].launches, 1);
  EXPECT_EQ(r.per_config[0].overlapped_ns, 0);
  EXPECT_EQ(r.busy_ns, 100);
}

// Merging sums adds them and keeps the lowest four streams of both.
TEST(LaunchOverlap, MergeAddsCountsAndStreams) {
  OverlapSums a, b;
  a.launches = 2;
  a.solo_launches = 1;
  a.overlapped_ns = 10;
  a.AddStream(5);
  a.AddStream(3);
  b.launches = 3;
  b.solo_launches = 2;
  b.overlapped_ns = 7;
  for (int64_t s : {4, 9, 1}) b.AddStream(s);
  a.Merge(b);
  EXPECT_EQ(a.launches, 5);
  EXPECT_EQ(a.solo_launches, 3);
  EXPECT_EQ(a.overlapped_ns, 17);
  EXPECT_EQ(a.streams, std::vector<int64_t>({1, 3, 4, 5}));
  EXPECT_TRUE(a.more_streams);
}

// Through the occtrace reader and the report: kernel k at two block sizes on streams 1 and 2.
// Block 128: [1000, 2000) and [5000, 6000) on stream 1; block 256: [1500, 2500) on stream 2 and
// [7000, 8000) back to back with [8000, 9000) on stream 2. Overlapped: block 128 500 of 2000 ns
// (25 %), 1 of 2 launches alone; block 256 500 of 3000 ns, 2 of 3 alone (mean 1000 ns). Busy:
// [1000, 2500) + [5000, 6000) + [7000, 9000) = 4500 ns of 5000 ns summed.
constexpr char kTwoStreams[] = R"sql(
INSERT INTO OCC_META VALUES ('schema_version', '1');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H200', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'GPU-a', 132);
INSERT INTO OCC_DEVICE(gpuId, reservedSharedMemPerBlock, maxThreadsPerMultiprocessor) VALUES (0, 1024, 2048);
INSERT INTO StringIds VALUES (1, 'k(float*)'), (2, 'k'), (3, '_Z1kPf');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (1, 0, 1, NULL, 1, 2, 3, 0, 0, 32, 1024, 1, 1, 128, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (2, 0, 1, NULL, 1, 2, 3, 0, 0, 32, 512, 1, 1, 256, 1, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (1000, 1000, 1, 1, 1), (1500, 1000, 2, 2, 2), (5000, 1000, 1, 1, 3),
  (7000, 1000, 2, 2, 4), (8000, 1000, 2, 2, 5);
)sql";

const occtrace::KernelGroup* WithBlock(const occtrace::Report& report, int block) {
  for (const auto& g : report.groups()) {
    if (g.block_x() == block) return &g;
  }
  return nullptr;
}

void ExpectTwoStreamsFigures(const occtrace::Report& report) {
  const occtrace::KernelGroup* b128 = WithBlock(report, 128);
  const occtrace::KernelGroup* b256 = WithBlock(report, 256);
  ASSERT_NE(b128, nullptr);
  ASSERT_NE(b256, nullptr);
  ASSERT_TRUE(b128->has_overlap());
  EXPECT_EQ(b128->overlap().launches(), 2);
  EXPECT_EQ(b128->overlap().overlapped_ns(), 500);
  EXPECT_DOUBLE_EQ(b128->overlap().overlapped_pct(), 25);
  EXPECT_EQ(b128->overlap().solo_launches(), 1);
  EXPECT_DOUBLE_EQ(b128->overlap().solo_mean_ns(), 1000);
  ASSERT_EQ(b128->overlap().streams_size(), 1);
  EXPECT_EQ(b128->overlap().streams(0), 2);
  EXPECT_EQ(b256->overlap().overlapped_ns(), 500);
  EXPECT_EQ(b256->overlap().solo_launches(), 2);
  EXPECT_EQ(report.summary().total_gpu_ns(), 5000);
  EXPECT_EQ(report.summary().busy_ns(), 4500);
}

TEST(LaunchOverlap, OcctraceReaderGivesEachConfigurationItsOverlap) {
  ScratchDir dir;
  const std::string path = dir.Path("t.db");
  MakeOccTrace(path, kTwoStreams);
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ExpectTwoStreamsFigures(*report);
  EXPECT_EQ(report->files(0).busy_gpu_ns(), 4500);
}

// The same launches as an Nsight Systems export (CUPTI_ACTIVITY_KIND_KERNEL: start, end, streamId).
TEST(LaunchOverlap, NsysReaderGivesEachConfigurationItsOverlap) {
  ScratchDir dir;
  const std::string path = dir.Path("n.sqlite");
  std::string rows;
  const int64_t launches[][4] = {{1000, 2000, 1, 128}, {1500, 2500, 2, 256}, {5000, 6000, 1, 128},
                                 {7000, 8000, 2, 256}, {8000, 9000, 2, 256}};
  int corr = 1;
  for (const auto& l : launches) {
    rows += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, \"end\", deviceId, contextId, streamId, "
            "correlationId, demangledName, shortName, mangledName, cacheConfig, registersPerThread, gridX, "
            "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
            "localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, graphId, "
            "clusterX, clusterY, clusterZ) VALUES (" +
            std::to_string(l[0]) + ", " + std::to_string(l[1]) + ", 0, 1, " + std::to_string(l[2]) + ", " +
            std::to_string(corr++) + ", 1, 2, 3, 0, 32, " + std::to_string(131072 / l[3]) + ", 1, 1, " +
            std::to_string(l[3]) + ", 1, 1, 0, 0, 0, 0, 32768, 0, 0, 0, 0, 0);\n";
  }
  MakeDb(path, NsysSchemaSql() + R"sql(
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1');
INSERT INTO StringIds VALUES (1, 'k(float*)'), (2, 'k'), (3, '_Z1kPf');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H200', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'GPU-a', 132);
)sql" + rows);
  ReportOptions options;
  options.inputs = {path};
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ExpectTwoStreamsFigures(*report);
}

}  // namespace
}  // namespace occ
