#include "injector/writer/trace_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/injector/fake_records.h"

namespace occ::inj {
namespace {

using testing::FakeActivityBuffer;
using testing::MakeH100Device;
using testing::MakeKernel;
using testing::TraceReader;

constexpr char kGemm[] = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE";
constexpr char kSquare[] = "_Z6squarePfi";

class TraceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TempPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(writer_.Open(path_));
    writer_.SetMeta("pid", "4242");
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
  TraceWriter writer_;
};

TEST_F(TraceWriterTest, SchemaIsCreated) {
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  for (const char* table : {"OCC_META", "StringIds", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE",
                            "OCC_DEVICE", "OCC_CONTEXT", "OCC_KERNEL_CONFIG", "OCC_LAUNCH",
                            "OCC_ACHIEVED", "CUPTI_ACTIVITY_KIND_KERNEL"}) {
    EXPECT_EQ(reader.Int(std::string("SELECT count(*) FROM sqlite_master WHERE name='") + table + "'"), 1)
        << table;
  }
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Text("PRAGMA journal_mode"), "delete") << "closed traces are one self-contained file";
  EXPECT_EQ(reader.Meta("schema_version"), "1");
}

TEST_F(TraceWriterTest, KernelRecordsRoundTripThroughTheNsysView) {
  FakeActivityBuffer buffer;
  ActivityKernel gemm = MakeKernel(kGemm, 101, 1'700'000'000'000'000'000ull, 1'700'000'000'000'012'345ull);
  gemm.gridX = 66; gemm.gridY = 2; gemm.gridZ = 3;
  gemm.blockX = 128; gemm.blockY = 2; gemm.blockZ = 1;
  gemm.registersPerThread = 168;
  gemm.staticSharedMemory = 0;
  gemm.dynamicSharedMemory = 197632;
  gemm.sharedMemoryExecuted = 233472;
  gemm.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_OPTIN;
  gemm.isSharedMemoryCarveoutRequested = 1;
  gemm.sharedMemoryCarveoutRequested = 100;
  gemm.clusterX = 2;
  gemm.maxPotentialClusterSize = 16;
  gemm.maxActiveClusters = 66;
  gemm.streamId = 13;
  gemm.localMemoryPerThread = 16;
  gemm.localMemoryTotal_v2 = 123456789;
  gemm.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  ActivityKernel graph_node = MakeKernel(kSquare, 102, 1'700'000'000'000'100'000ull, 1'700'000'000'000'101'000ull);
  graph_node.graphId = 2;
  graph_node.graphNodeId = 8589934592ull;
  ActivityKernel replayed = MakeKernel(kSquare, 103, 0, 0);  // range-profiled: no timestamps
  ASSERT_TRUE(buffer.Add(gemm));
  ASSERT_TRUE(buffer.Add(graph_node));
  ASSERT_TRUE(buffer.Add(replayed));
  writer_.AddBuffer(buffer.data(), buffer.size());
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 3);
  auto q = [&](const std::string& column, int correlation) {
    return reader.Text("SELECT " + column + " FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId=" +
                       std::to_string(correlation));
  };
  EXPECT_EQ(q("start", 101), "1700000000000000000");
  EXPECT_EQ(q("\"end\"", 101), "1700000000000012345");
  EXPECT_EQ(q("deviceId || ',' || contextId || ',' || streamId || ',' || globalPid", 101), "0,1,13,4242");
  EXPECT_EQ(q("gridX || 'x' || gridY || 'x' || gridZ", 101), "66x2x3");
  EXPECT_EQ(q("blockX || 'x' || blockY || 'x' || blockZ", 101), "128x2x1");
  EXPECT_EQ(q("registersPerThread", 101), "168");
  EXPECT_EQ(q("staticSharedMemory || ',' || dynamicSharedMemory", 101), "0,197632");
  EXPECT_EQ(q("sharedMemoryExecuted", 101), "233472");
  EXPECT_EQ(q("sharedMemoryLimitConfig", 101), "1");
  EXPECT_EQ(q("sharedMemoryRequestedPercentage", 101), "100");
  EXPECT_EQ(q("sharedMemoryRequestedPercentage", 102), "<null>");
  EXPECT_EQ(q("clusterX || ',' || maxPotentialClusterSize || ',' || maxActiveClusters", 101), "2,16,66");
  EXPECT_EQ(q("localMemoryPerThread || ',' || localMemoryTotal", 101), "16,123456789");
  EXPECT_EQ(q("launchType", 101), std::to_string(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE));
  EXPECT_EQ(q("cacheConfig", 101), "1");
  EXPECT_EQ(q("graphId || ',' || graphNodeId", 102), "2,8589934592");
  EXPECT_EQ(q("graphId || ',' || graphNodeId", 101), "0,0");
  EXPECT_EQ(q("start || ',' || \"end\"", 103), "0,0");
  // nsys join pattern for names.
  EXPECT_EQ(reader.Text("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                        "ON s.id = k.demangledName WHERE k.correlationId = 101"),
            "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<int> >(cutlass::gemm::kernel::Gemm<int>::Params)");
  EXPECT_EQ(reader.Text("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                        "ON s.id = k.shortName WHERE k.correlationId = 102"), "square");
  EXPECT_EQ(reader.Text("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                        "ON s.id = k.mangledName WHERE k.correlationId = 103"), kSquare);
}

TEST_F(TraceWriterTest, ConfigurationsAndNamesAreInterned) {
  // Same name, different pointers (as after a module reload); one config changes per launch.
  std::string square_copy = kSquare;
  FakeActivityBuffer buffer;
  for (uint32_t i = 0; i < 1000; ++i) {
    ActivityKernel k = MakeKernel(i % 2 == 0 ? kSquare : square_copy.c_str(), i, 1000 + i * 10, 1005 + i * 10);
    if (i % 10 == 0) k.gridX = 264;  // a second configuration
    ASSERT_TRUE(buffer.Add(k));
  }
  ASSERT_TRUE(buffer.Add(MakeKernel(kGemm, 5000, 1, 2)));
  writer_.AddBuffer(buffer.data(), buffer.size());
  EXPECT_EQ(writer_.stats().launches, 1001u);
  EXPECT_EQ(writer_.stats().kernels, 2u);
  EXPECT_EQ(writer_.stats().configs, 3u);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 3);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 1001);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM StringIds WHERE value='_Z6squarePfi'"), 1);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM StringIds"), 6) << "3 forms x 2 kernels, each once";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE gridX=264"), 100);
  EXPECT_EQ(reader.Int("SELECT sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId < 1000"), 5000);
}

TEST_F(TraceWriterTest, RecordsCutByAForcedFlushKeepTheirLaunchWithoutATime) {
  // A forced flush hands back a kernel still running with its start and no end (end 0), and
  // CUPTI never sends it again; a replayed launch has neither (start = end = 0).
  FakeActivityBuffer buffer;
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 1, 1000, 1500)));
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 2, 2000, 0)));
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 3, 0, 0)));
  writer_.AddBuffer(buffer.data(), buffer.size());
  EXPECT_EQ(writer_.stats().launches, 3u);
  EXPECT_EQ(writer_.stats().incomplete_kernels, 1u);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT duration FROM OCC_LAUNCH WHERE correlationId=1"), 500);
  EXPECT_EQ(reader.Int("SELECT duration FROM OCC_LAUNCH WHERE correlationId=2"), 0);
  EXPECT_EQ(reader.Int("SELECT start FROM OCC_LAUNCH WHERE correlationId=2"), 2000);
}

TEST_F(TraceWriterTest, DeviceRowsMergeRecordAndDriverAttributes) {
  DeviceExtras extras;
  extras.device_id = 0;
  extras.max_shared_memory_per_block_optin = 232448;
  extras.reserved_shared_memory_per_block = 1024;
  extras.max_threads_per_multiprocessor = 2048;
  extras.driver_version = 13000;
  extras.integrated = 0;
  extras.async_engines = 3;
  extras.bus_location = "0000:19:00.0";
  extras.chip_name = "GH100";
  writer_.AddDeviceExtras(extras);  // the context callback may come before the device record
  FakeActivityBuffer buffer;
  ASSERT_TRUE(buffer.Add(MakeH100Device(0)));
  ActivityContext context{};
  context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context.contextId = 1;
  context.deviceId = 0;
  context.nullStreamId = 7;
  ASSERT_TRUE(buffer.Add(context));
  writer_.AddBuffer(buffer.data(), buffer.size());
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT name || '|' || smCount || '|' || maxShmemPerSm || '|' || maxShmemPerBlock || '|' || "
                        "maxShmemPerBlockOptin || '|' || maxWarpsPerSm || '|' || computeMajor || computeMinor || '|' || "
                        "chipName || '|' || busLocation || '|' || isDiscrete || '|' || clockRate FROM TARGET_INFO_GPU"),
            "NVIDIA H100 80GB HBM3|132|233472|49152|232448|64|90|GH100|0000:19:00.0|1|1980000000");
  EXPECT_EQ(reader.Text("SELECT uuid FROM TARGET_INFO_GPU"), "GPU-01020304-0506-0708-090a-0b0c0d0e0f10");
  EXPECT_EQ(reader.Text("SELECT gpuId || ',' || cudaId || ',' || pid || ',' || numMultiprocessors FROM TARGET_INFO_CUDA_DEVICE"),
            "0,0,4242,132");
  EXPECT_EQ(reader.Text("SELECT reservedSharedMemPerBlock || ',' || maxThreadsPerMultiprocessor || ',' || driverVersion FROM OCC_DEVICE"),
            "1024,2048,13000");
  EXPECT_EQ(reader.Text("SELECT nullStreamId || ',' || isGreenContext FROM OCC_CONTEXT WHERE contextId=1"), "7,0");
  EXPECT_EQ(reader.Text("SELECT coalesce(gpuInstanceId, 'null') || ',' || coalesce(computeInstanceId, 'null') FROM OCC_DEVICE"),
            "null,null") << "no MIG: CUPTI's 0xFFFFFFFF ids are not real instance ids";
}

TEST_F(TraceWriterTest, GreenContextIsRecordedOnItsKernels) {
  FakeActivityBuffer buffer;
  ActivityContext green{};
  green.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  green.contextId = 5;
  green.isGreenContext = 1;
  green.numMultiprocessors = 16;
  green.parentContextId = 1;
  ASSERT_TRUE(buffer.Add(green));
  ActivityKernel k = MakeKernel(kSquare, 1, 10, 20);
  k.contextId = 5;
  ASSERT_TRUE(buffer.Add(k));
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 2, 30, 40)));
  writer_.AddBuffer(buffer.data(), buffer.size());
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT greenContextId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId=1"), "5");
  EXPECT_EQ(reader.Text("SELECT greenContextId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId=2"), "<null>");
}

// CUPTI's ids are uint32 and green contexts get large ones: every id column must keep all 32
// bits (SQLite INTEGER is 64-bit), never wrap to a negative number or turn NULL.
TEST_F(TraceWriterTest, IdsAbove2Pow31SurviveEndToEnd) {
  constexpr uint32_t kContext = 0x80000005u;      // 2147483653
  constexpr uint32_t kParent = 0x80000001u;       // 2147483649
  constexpr uint32_t kStream = 0xFFFFFFF0u;       // 4294967280
  constexpr uint16_t kNullStream = 0xFFFFu;       // CUpti_ActivityContext3.nullStreamId is uint16
  constexpr uint32_t kCorrelation = 0xFFFFFFFEu;  // 4294967294
  FakeActivityBuffer buffer;
  ActivityContext green{};
  green.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  green.contextId = kContext;
  green.nullStreamId = kNullStream;
  green.parentContextId = kParent;
  green.isGreenContext = 1;
  green.numMultiprocessors = 16;
  ASSERT_TRUE(buffer.Add(green));
  ActivityKernel k = MakeKernel(kSquare, kCorrelation, 10, 20);
  k.contextId = kContext;
  k.streamId = kStream;
  ASSERT_TRUE(buffer.Add(k));
  writer_.AddBuffer(buffer.data(), buffer.size());
  AchievedSample sample;
  sample.correlation_id = kCorrelation;
  sample.context_id = kContext;
  sample.status = "measured";
  sample.achieved_occupancy_pct = 50;
  sample.policy = "sample";
  writer_.AddAchieved(sample);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT contextId || ',' || coalesce(greenContextId, 'null') || ',' || streamId || ',' || "
                        "correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"),
            "2147483653,2147483653,4294967280,4294967294");
  EXPECT_EQ(reader.Text("SELECT contextId || ',' || nullStreamId || ',' || parentContextId FROM OCC_CONTEXT"),
            "2147483653,65535,2147483649");
  // The analyzer's join (read_occtrace.cc FindAchieved): launch -> config context + correlation.
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_ACHIEVED a JOIN OCC_LAUNCH l ON l.correlationId = a.correlationId "
                       "JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId AND c.contextId = a.contextId"),
            1);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG WHERE contextId < 0 OR greenContextId < 0"), 0);
}

TEST_F(TraceWriterTest, AchievedSamplesAndMeta) {
  AchievedSample sample;
  sample.correlation_id = 101;
  sample.context_id = 1;
  sample.status = "measured";
  sample.achieved_occupancy_pct = 12.5;
  sample.warps_active_per_cycle = 8;
  sample.policy = "sample";
  writer_.AddAchieved(sample);
  AchievedSample skipped;
  skipped.correlation_id = 102;
  skipped.status = "graph";
  skipped.policy = "sample";
  writer_.AddAchieved(skipped);
  writer_.SetMeta("status", "running");
  writer_.SetMeta("status", "complete");
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT achievedOccupancyPct FROM OCC_ACHIEVED WHERE correlationId=101"), "12.5");
  EXPECT_EQ(reader.Text("SELECT coalesce(achievedOccupancyPct, 'absent') || status FROM OCC_ACHIEVED WHERE correlationId=102"),
            "absentgraph");
  EXPECT_EQ(reader.Meta("status"), "complete");
}

TEST_F(TraceWriterTest, UnknownRecordKindsAreSkipped) {
  FakeActivityBuffer buffer;
  CUpti_ActivityMemcpy6 memcpy_record{};
  memcpy_record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  ASSERT_TRUE(buffer.Add(memcpy_record));
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 1, 10, 20)));
  writer_.AddBuffer(buffer.data(), buffer.size());
  EXPECT_EQ(writer_.stats().other_records, 1u);
  EXPECT_EQ(writer_.stats().launches, 1u);
}

TEST_F(TraceWriterTest, CommitMakesRowsVisibleToOtherConnections) {
  FakeActivityBuffer buffer;
  for (uint32_t i = 0; i < 100; ++i) ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, i, i, i + 1)));
  writer_.AddBuffer(buffer.data(), buffer.size());
  {
    TraceReader reader(path_);
    EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 0) << "uncommitted rows are invisible";
  }
  ASSERT_TRUE(writer_.Commit());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 100);
}

TEST(TraceWriterFailureTest, UnwritablePathTurnsWriterOff) {
  TraceWriter writer;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(writer.Open("/nonexistent-dir-occtrace/trace.db"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(writer.failed());
  EXPECT_EQ(err.rfind("occtrace: ", 0), 0u) << err;
  EXPECT_NE(err.find("tracing off"), std::string::npos) << err;
  FakeActivityBuffer buffer;
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 1, 10, 20)));
  writer.AddBuffer(buffer.data(), buffer.size());  // a no-op, never a crash
  EXPECT_EQ(writer.stats().launches, 0u);
}

}  // namespace
}  // namespace occ::inj
