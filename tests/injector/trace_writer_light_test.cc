// TraceWriter in light mode (trace_writer_light.cc): launch calls into OCC_LAUNCH_CALL with one
// configuration per launch shape built from the function's facts; graph launches expanded into
// their kernel nodes; kernel records from timing windows attached to the light configuration of
// their shape (filling in the record's facts), or stored as in a full trace when none matches.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "injector/light/launch_calls.h"
#include "injector/writer/trace_writer.h"
#include "tests/injector/fake_records.h"
#include "tests/injector/writer_file_test.h"

namespace occ::inj {
namespace {

using testing::FakeActivityBuffer;
using testing::MakeKernel;
using testing::TraceReader;

constexpr char kGemm[] = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE";
constexpr char kSquare[] = "_Z6squarePfi";

FunctionFacts Facts(const char* name, int32_t registers, int32_t static_smem, int32_t local,
                    int32_t max_dynamic, int32_t carveout, uint32_t cluster_x) {
  FunctionFacts facts;
  facts.mangled_name = name;
  facts.registers_per_thread = registers;
  facts.static_shared_memory = static_smem;
  facts.local_memory_per_thread = local;
  facts.max_dynamic_shared_memory = max_dynamic;
  facts.carveout_pct = carveout;
  if (cluster_x != 0) {
    facts.required_cluster[0] = cluster_x;
    facts.required_cluster[1] = 1;
    facts.required_cluster[2] = 1;
  }
  return facts;
}

// As light_tracer.cc keeps them: read once, never freed while the process runs.
const FunctionFacts kSquareFacts = Facts(kSquare, 40, 2048, 24, 0, 50, 0);
// 0 + 200000 bytes of shared memory > 48 KiB: opted in.
const FunctionFacts kGemmFacts = Facts(kGemm, 168, 0, 0, 200000, -1, 2);

GraphKernelNode Node(const FunctionFacts* function, uint64_t node_id, uint32_t grid_x, uint32_t block_x,
                     uint32_t dynamic_smem) {
  GraphKernelNode node;
  node.function = function;
  node.node_id = node_id;
  node.grid[0] = grid_x;
  node.block[0] = block_x;
  node.dynamic_shared_memory = dynamic_smem;
  return node;
}

GraphExecFacts ThreeKernelGraph() {
  GraphExecFacts graph;
  graph.graph_id = 3;
  graph.kernels = {Node(&kSquareFacts, 1001, 8, 64, 0), Node(&kGemmFacts, 1002, 66, 128, 100000),
                   Node(&kSquareFacts, 1003, 16, 64, 0)};
  graph.other_nodes = 2;
  return graph;
}
const GraphExecFacts kGraph = ThreeKernelGraph();

// A launch of `function` in the shape MakeKernel's records have by default (context 1,
// 132 x 256 threads, no dynamic shared memory), so that such a record times it.
LaunchCall Call(const FunctionFacts* function, uint32_t correlation_id, uint64_t api_start_ns) {
  LaunchCall call;
  call.function = function;
  call.api_start_ns = api_start_ns;
  call.correlation_id = correlation_id;
  call.context_id = 1;
  call.device_id = 0;
  call.stream_id = 7;
  call.grid[0] = 132;
  call.block[0] = 256;
  return call;
}

LaunchCall GraphCall(const GraphExecFacts* graph, uint32_t correlation_id, uint64_t api_start_ns) {
  LaunchCall call;
  call.graph = graph;
  call.api_start_ns = api_start_ns;
  call.correlation_id = correlation_id;
  call.context_id = 1;
  call.stream_id = 9;
  return call;
}

class TraceWriterLightTest : public testing::WriterFileTest {
 protected:
  void SetUp() override {
    OpenWriter("light-");
    writer_.SetLightMode();
    ASSERT_TRUE(writer_.light_mode());
  }
};

TEST_F(TraceWriterLightTest, LaunchCallsGetOneConfigurationPerShape) {
  for (uint32_t i = 0; i < 10; ++i) writer_.AddLaunchCall(Call(&kSquareFacts, 100 + i, 5000 + i));
  for (uint32_t i = 0; i < 5; ++i) {
    LaunchCall wider = Call(&kSquareFacts, 200 + i, 6000 + i);
    wider.grid[0] = 264;
    writer_.AddLaunchCall(wider);
  }
  for (uint32_t i = 0; i < 3; ++i) {
    LaunchCall gemm = Call(&kGemmFacts, 300 + i, 7000 + i);
    gemm.grid[0] = 66;
    gemm.grid[1] = 2;
    gemm.block[0] = 128;
    gemm.dynamic_shared_memory = 100000;
    gemm.cluster[0] = 4;
    gemm.cluster[1] = 1;
    gemm.cluster[2] = 1;
    gemm.stream_id = 13;
    gemm.launch_type = 3;
    writer_.AddLaunchCall(gemm);
  }
  EXPECT_EQ(writer_.stats().launch_calls, 18u);
  EXPECT_EQ(writer_.stats().graph_launches, 0u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Meta("trace_mode"), "light");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), 18);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 0) << "no kernel records were handed over";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 3);
  auto calls_of = [&](const std::string& where) {
    return reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                      "WHERE " + where);
  };
  EXPECT_EQ(calls_of("c.gridX = 132"), 10);
  EXPECT_EQ(calls_of("c.gridX = 264"), 5);
  EXPECT_EQ(calls_of("c.gridX = 66"), 3);
  EXPECT_EQ(reader.Text("SELECT apiStart || ',' || streamId FROM OCC_LAUNCH_CALL WHERE correlationId = 103"),
            "5003,7");
  EXPECT_EQ(reader.Text("SELECT apiStart || ',' || streamId FROM OCC_LAUNCH_CALL WHERE correlationId = 302"),
            "7002,13");
  auto config = [&](const std::string& columns, int grid_x) {
    return reader.Text("SELECT " + columns + " FROM OCC_KERNEL_CONFIG WHERE gridX = " + std::to_string(grid_x));
  };
  const std::string facts_columns =
      "registersPerThread || ',' || staticSharedMemory || ',' || localMemoryPerThread || ',' || "
      "ifnull(sharedMemoryRequestedPercentage, 'none') || ',' || sharedMemoryLimitConfig";
  EXPECT_EQ(config(facts_columns, 132), "40,2048,24,50,0");
  EXPECT_EQ(config(facts_columns, 264), "40,2048,24,50,0");
  EXPECT_EQ(config(facts_columns, 66), "168,0,0,none,1");
  EXPECT_EQ(config("blockX || 'x' || blockY || 'x' || blockZ || ',' || dynamicSharedMemory", 66), "128x1x1,100000");
  EXPECT_EQ(config("gridX || 'x' || gridY || 'x' || gridZ", 66), "66x2x1");
  EXPECT_EQ(config("clusterX || 'x' || clusterY || 'x' || clusterZ", 66), "4x1x1") << "the launch's cluster";
  EXPECT_EQ(config("clusterX || 'x' || clusterY || 'x' || clusterZ", 132), "0x0x0");
  EXPECT_EQ(config("launchType || ',' || graphId || ',' || graphNodeId || ',' || contextId", 66), "3,0,0,1");
  EXPECT_EQ(config("sharedMemoryExecuted", 132), "0") << "not known until a kernel record says";
  EXPECT_EQ(reader.Text("SELECT s.value FROM OCC_KERNEL_CONFIG c JOIN StringIds s ON s.id = c.mangledName "
                        "WHERE c.gridX = 66"), kGemm);
  EXPECT_EQ(reader.Text("SELECT s.value FROM OCC_KERNEL_CONFIG c JOIN StringIds s ON s.id = c.shortName "
                        "WHERE c.gridX = 264"), "square");
}

TEST_F(TraceWriterLightTest, GraphLaunchIsOneRowPerKernelNode) {
  for (uint32_t i = 0; i < 4; ++i) writer_.AddLaunchCall(GraphCall(&kGraph, 400 + i, 9000 + i));
  EXPECT_EQ(writer_.stats().graph_launches, 4u);
  EXPECT_EQ(writer_.stats().launch_calls, 12u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), 12);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL WHERE correlationId = 402"), 3)
      << "the nodes of one launch share its correlation id";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL WHERE streamId = 9 AND apiStart = 9002"), 3);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 3);
  EXPECT_EQ(reader.Text("SELECT group_concat(graphNodeId || ':' || gridX, ' ') FROM "
                        "(SELECT * FROM OCC_KERNEL_CONFIG WHERE graphId = 3 ORDER BY graphNodeId)"),
            "1001:8 1002:66 1003:16");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                       "WHERE c.graphNodeId = 1002"), 4);
  EXPECT_EQ(reader.Text("SELECT clusterX || 'x' || clusterY || 'x' || clusterZ || ',' || registersPerThread || ',' || "
                        "dynamicSharedMemory FROM OCC_KERNEL_CONFIG WHERE graphNodeId = 1002"),
            "2x1x1,168,100000") << "a graph node's cluster is its function's required one";
}

TEST_F(TraceWriterLightTest, UnknownGraphLaunchIsCountedWithoutRows) {
  LaunchCall unknown = GraphCall(nullptr, 500, 9500);
  unknown.unknown_graph = 1;
  writer_.AddLaunchCall(unknown);
  writer_.AddLaunchCall(Call(&kSquareFacts, 501, 9501));
  EXPECT_EQ(writer_.stats().graph_launches, 1u);
  EXPECT_EQ(writer_.stats().unknown_graph_launches, 1u);
  EXPECT_EQ(writer_.stats().launch_calls, 1u);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), 1);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL WHERE correlationId = 500"), 0);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 1);
}

TEST_F(TraceWriterLightTest, TimedRecordJoinsItsLightConfigurationAndFillsItsFacts) {
  writer_.AddLaunchCall(Call(&kSquareFacts, 100, 5000));
  writer_.AddLaunchCall(Call(&kSquareFacts, 101, 5100));
  ActivityKernel timed = MakeKernel(kSquare, 100, 1'000'000, 1'000'500);
  timed.sharedMemoryExecuted = 102400;
  timed.cacheConfig.config.requested = 2;
  timed.localMemoryTotal_v2 = 777;
  timed.maxPotentialClusterSize = 8;
  timed.maxActiveClusters = 33;
  // A later record of the same shape: the facts were filled by the first one.
  ActivityKernel later = MakeKernel(kSquare, 101, 2'000'000, 2'000'300);
  later.sharedMemoryExecuted = 65536;
  AddRecords({timed, later});
  EXPECT_EQ(writer_.stats().timed_launches, 2u);
  EXPECT_EQ(writer_.stats().timed_unmatched, 0u);
  EXPECT_EQ(writer_.stats().launches, 2u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 1) << "no configuration of the record's own";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 2);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH l JOIN OCC_LAUNCH_CALL c "
                       "ON c.configId = l.configId AND c.correlationId = l.correlationId"), 2);
  EXPECT_EQ(reader.Text("SELECT start || ',' || duration || ',' || streamId FROM OCC_LAUNCH WHERE correlationId = 100"),
            "1000000,500,7");
  EXPECT_EQ(reader.Text("SELECT sharedMemoryExecuted || ',' || cacheConfig || ',' || localMemoryTotal || ',' || "
                        "maxPotentialClusterSize || ',' || maxActiveClusters FROM OCC_KERNEL_CONFIG"),
            "102400,2,777,8,33");
  EXPECT_EQ(reader.Text("SELECT registersPerThread || ',' || staticSharedMemory FROM OCC_KERNEL_CONFIG"), "40,2048")
      << "the function's facts stay (the record says 32, 1024)";
}

TEST_F(TraceWriterLightTest, RecordWithAnotherGraphNodeIdMatchesByShape) {
  writer_.AddLaunchCall(GraphCall(&kGraph, 600, 9600));
  ActivityKernel node = MakeKernel(kSquare, 600, 3'000'000, 3'000'040);
  node.gridX = 16;  // node 1003's shape
  node.blockX = 64;
  node.graphId = 3;
  node.graphNodeId = 777777;  // not the id read at instantiation
  ActivityKernel exact = MakeKernel(kGemm, 600, 3'000'100, 3'000'900);
  exact.gridX = 66;  // node 1002's shape: 66 x 128 threads, 100000 bytes of dynamic shared memory
  exact.blockX = 128;
  exact.dynamicSharedMemory = 100000;
  exact.graphId = 3;
  exact.graphNodeId = 1002;
  AddRecords({node, exact});
  EXPECT_EQ(writer_.stats().timed_launches, 2u);
  EXPECT_EQ(writer_.stats().timed_unmatched, 0u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 3);
  EXPECT_EQ(reader.Text("SELECT c.graphNodeId FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                        "WHERE l.duration = 40"), "1003");
  EXPECT_EQ(reader.Text("SELECT c.graphNodeId FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                        "WHERE l.duration = 800"), "1002");
}

// A graph with two kernel nodes of one shape (launch_matrix's k_graph_a): CUPTI's records carry
// the executed graph's node ids, not those read at instantiation, so both records are matched by
// shape to the first node's configuration. The nsys view must still count the launch's two
// kernels once each: matched per correlation id by count, not by (correlationId, configId),
// which counted the second node's call again (H100, 2026-11-28: 15 rows for 10 launches).
TEST_F(TraceWriterLightTest, TwoGraphNodesOfOneShapeAreCountedOnceEachInTheView) {
  GraphExecFacts twins;
  twins.graph_id = 1;
  twins.kernels = {Node(&kSquareFacts, 4294967296, 8, 128, 0), Node(&kSquareFacts, 4294967298, 8, 128, 0)};
  writer_.AddLaunchCall(GraphCall(&twins, 610, 9600));
  writer_.AddLaunchCall(GraphCall(&twins, 611, 9700));  // its records fall outside any window
  writer_.KernelRecordsStoppedAt(9'000'000);
  auto record = [](uint64_t node_id, uint64_t start) {
    ActivityKernel kernel = MakeKernel(kSquare, 610, start, start + 50);
    kernel.gridX = 8;
    kernel.blockX = 128;
    kernel.graphId = 2;
    kernel.graphNodeId = node_id;
    return kernel;
  };
  AddRecords({record(8589934592ull, 3'000'000), record(8589934594ull, 3'000'100)});
  EXPECT_EQ(writer_.stats().timed_launches, 2u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(DISTINCT configId) FROM OCC_LAUNCH"), 1) << "both records on one configuration";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4) << "two launches of two kernels";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE occTimeEstimated = 1"), 2)
      << "the untimed graph launch's two kernels";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 610"), 2);
}

// Every launch call of a configuration counts as under-timed until kWellTimedLaunches of its
// launches were timed; graph nodes count one by one, and a record matched by shape only (another
// node id) times the configuration it joins.
TEST_F(TraceWriterLightTest, LaunchesCountAsUnderTimedUntilTheirConfigurationIsWellTimed) {
  ASSERT_EQ(kWellTimedLaunches, 16u) << "the counts below assume 16";
  for (uint32_t i = 0; i < 20; ++i) writer_.AddLaunchCall(Call(&kSquareFacts, 100 + i, 5000 + i));
  EXPECT_EQ(writer_.stats().under_timed_launch_calls, 20u) << "nothing timed yet";
  FakeActivityBuffer buffer;
  for (uint32_t i = 0; i < 15; ++i) {
    ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 100 + i, 1'000'000 + 1000 * i, 1'000'500 + 1000 * i)));
  }
  writer_.AddBuffer(buffer.data(), buffer.size());
  writer_.AddLaunchCall(Call(&kSquareFacts, 200, 9000));
  EXPECT_EQ(writer_.stats().under_timed_launch_calls, 21u) << "15 timed: still under-timed";
  AddRecords({MakeKernel(kSquare, 115, 2'000'000, 2'000'500)});
  writer_.AddLaunchCall(Call(&kSquareFacts, 201, 9100));
  EXPECT_EQ(writer_.stats().under_timed_launch_calls, 21u) << "16 timed: well timed";
  EXPECT_EQ(writer_.stats().timed_launches, 16u);

  // A graph of three kernel nodes in two configurations of kSquare and one of kGemm.
  writer_.AddLaunchCall(GraphCall(&kGraph, 600, 9600));
  EXPECT_EQ(writer_.stats().under_timed_launch_calls, 24u) << "each node of the graph";
  FakeActivityBuffer nodes;
  for (uint32_t i = 0; i < 16; ++i) {
    ActivityKernel node = MakeKernel(kSquare, 600, 3'000'000 + 100 * i, 3'000'040 + 100 * i);
    node.gridX = 16;  // node 1003's shape, under another node id: matched by shape
    node.blockX = 64;
    node.graphId = 3;
    node.graphNodeId = 777777;
    ASSERT_TRUE(nodes.Add(node));
  }
  writer_.AddBuffer(nodes.data(), nodes.size());
  writer_.AddLaunchCall(GraphCall(&kGraph, 601, 9700));
  EXPECT_EQ(writer_.stats().under_timed_launch_calls, 26u) << "node 1003 is well timed now, 1001 and 1002 not";
  EXPECT_EQ(writer_.stats().timed_unmatched, 0u);
  ASSERT_TRUE(writer_.Close());
}

// A kernel running when records were switched off comes back with a wrong end (graph kernels on
// an H100 ended 248 ms late): a record that starts before a switch-off and ends at or after it
// is neither timed nor stored, nor is one that started while records were off (queued before
// the switch-off); records wholly inside a window are kept.
TEST_F(TraceWriterLightTest, RecordRunningAcrossARecordsSwitchOffIsDropped) {
  for (uint32_t i = 0; i < 4; ++i) writer_.AddLaunchCall(Call(&kSquareFacts, 100 + i, 5000 + i));
  for (uint32_t i = 4; i < 6; ++i) writer_.AddLaunchCall(Call(&kSquareFacts, 100 + i, 5000 + i));
  writer_.KernelRecordsStoppedAt(2'000'000);
  writer_.KernelRecordsStartedAt(2'500'000);
  writer_.KernelRecordsStoppedAt(9'000'000);
  AddRecords({MakeKernel(kSquare, 100, 1'000'000, 1'000'500),      // before the first switch-off
              MakeKernel(kSquare, 101, 1'999'900, 250'000'000),    // across it, ending late
              MakeKernel(kSquare, 102, 1'999'900, 2'000'000),      // ends at it
              MakeKernel(kSquare, 104, 2'100'000, 252'000'000),    // queued: started while off
              MakeKernel(kSquare, 105, 2'400'000, 2'400'300),      // started while off, sane end
              MakeKernel(kSquare, 103, 3'000'000, 3'000'400)});    // inside the next window
  EXPECT_EQ(writer_.stats().timed_launches, 2u);
  EXPECT_EQ(writer_.stats().timed_dropped_at_switch, 4u);
  EXPECT_EQ(writer_.stats().timed_unmatched, 0u);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT group_concat(duration) FROM (SELECT duration FROM OCC_LAUNCH ORDER BY start)"),
            "500,400");
}

// A forced flush hands back a kernel still running without its end (end 0): at the end of a
// window when CUPTI detaches (OCCTRACE_LIGHT_DETACH), or for a stale buffer. Its duration is
// unknown, so it is not a timing sample (counted with the records dropped at a switch);
// complete records of the same window are.
TEST_F(TraceWriterLightTest, RecordWithoutAnEndIsNotATimingSample) {
  for (uint32_t i = 0; i < 3; ++i) writer_.AddLaunchCall(Call(&kSquareFacts, 100 + i, 5000 + i));
  writer_.KernelRecordsStoppedAt(9'000'000);
  AddRecords({MakeKernel(kSquare, 100, 1'000'000, 1'000'500),
              MakeKernel(kSquare, 101, 1'100'000, 0),     // handed back while running
              MakeKernel(kSquare, 102, 1'200'000, 1'200'700)});
  EXPECT_EQ(writer_.stats().timed_launches, 2u);
  EXPECT_EQ(writer_.stats().timed_dropped_at_switch, 1u);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT group_concat(duration) FROM (SELECT duration FROM OCC_LAUNCH ORDER BY start)"),
            "500,700");
}

TEST_F(TraceWriterLightTest, UnmatchedRecordIsStoredAsInAFullTrace) {
  writer_.AddLaunchCall(Call(&kSquareFacts, 100, 5000));
  ActivityKernel other_shape = MakeKernel(kSquare, 700, 4'000'000, 4'000'100);
  other_shape.gridX = 999;
  ActivityKernel other_context = MakeKernel(kSquare, 701, 4'000'200, 4'000'300);
  other_context.contextId = 2;
  ActivityKernel other_kernel = MakeKernel(kGemm, 702, 4'000'400, 4'000'500);
  AddRecords({other_shape, other_context, other_kernel});
  EXPECT_EQ(writer_.stats().timed_unmatched, 3u);
  EXPECT_EQ(writer_.stats().timed_launches, 0u);
  EXPECT_EQ(writer_.stats().launches, 3u);
  EXPECT_EQ(writer_.stats().launch_calls, 1u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 4) << "the light one and one per record";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 3);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH l JOIN OCC_LAUNCH_CALL c ON c.configId = l.configId"), 0);
  EXPECT_EQ(reader.Text("SELECT c.gridX || ',' || c.registersPerThread || ',' || c.sharedMemoryExecuted "
                        "FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId WHERE l.correlationId = 700"),
            "999,32,102400") << "the record's own facts";
  EXPECT_EQ(reader.Text("SELECT c.contextId FROM OCC_LAUNCH l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                        "WHERE l.correlationId = 701"), "2");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4)
      << "the three records and the call no record matched";
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE occTimeEstimated = 1"), 1);
  EXPECT_EQ(reader.Text("SELECT sharedMemoryExecuted FROM OCC_KERNEL_CONFIG WHERE gridX = 132 AND contextId = 1 "
                        "AND registersPerThread = 40"), "0") << "the light configuration was not touched";
}

TEST_F(TraceWriterLightTest, CallsAreBatchedAndCommittedInOrder) {
  // More than one multi-row INSERT batch, then a remainder, across a Commit.
  const uint32_t total = 3 * static_cast<uint32_t>(kLaunchBatchRows) + 7;
  for (uint32_t i = 0; i < total; ++i) writer_.AddLaunchCall(Call(&kSquareFacts, i, 10'000 + i));
  ASSERT_TRUE(writer_.Commit());
  {
    TraceReader reader(path_);
    EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), total) << "visible after Commit";
  }
  writer_.AddLaunchCall(Call(&kSquareFacts, total, 10'000 + total));
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), total + 1);
  EXPECT_EQ(reader.Int("SELECT count(DISTINCT correlationId) FROM OCC_LAUNCH_CALL"), total + 1);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL WHERE apiStart != 10000 + correlationId"), 0);
}

TEST(TraceWriterFullModeTest, LaunchCallsAreIgnoredWithoutLightMode) {
  const std::string path = testing::TempPath("light-off");
  {
    TraceWriter writer;
    ASSERT_TRUE(writer.Open(path));
    writer.AddLaunchCall(Call(&kSquareFacts, 1, 1));
    EXPECT_EQ(writer.stats().launch_calls, 0u);
    ASSERT_TRUE(writer.Close());
  }
  TraceReader reader(path);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), 0);
  EXPECT_EQ(reader.Meta("trace_mode"), "<no row>");
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace
}  // namespace occ::inj
