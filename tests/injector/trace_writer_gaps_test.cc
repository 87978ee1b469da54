// TraceWriter's re-attach gaps (trace_writer_gaps.cc): in a full trace, the launch hook's calls
// from around a re-attach are held, those a kernel record also describes (same correlation id)
// dropped, the others stored as OCC_LAUNCH_CALL rows under the configuration the kernel records
// of their launch shape made.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "injector/launch_calls.h"
#include "injector/trace_writer.h"
#include "tests/injector/fake_records.h"
#include "tests/injector/writer_file_test.h"

namespace occ::inj {
namespace {

using testing::MakeKernel;
using testing::TraceReader;

constexpr char kSquare[] = "_Z6squarePfi";
constexpr char kFresh[] = "_Z5freshv";

FunctionFacts Facts(const char* name) {
  FunctionFacts facts;
  facts.mangled_name = name;
  facts.registers_per_thread = 32;
  facts.static_shared_memory = 1024;
  return facts;
}
const FunctionFacts kSquareFacts = Facts(kSquare);
const FunctionFacts kFreshFacts = Facts(kFresh);

// A launch in the shape MakeKernel's records have (context 1, 132 x 256, stream 7).
LaunchCall Call(const FunctionFacts* function, uint32_t correlation_id, uint64_t api_start_ns) {
  LaunchCall call;
  call.function = function;
  call.api_start_ns = api_start_ns;
  call.correlation_id = correlation_id;
  call.context_id = 1;
  call.stream_id = 7;
  call.grid[0] = 132;
  call.block[0] = 256;
  call.attach_epoch = 1;
  return call;
}

class TraceWriterGapsTest : public testing::WriterFileTest {
 protected:
  void SetUp() override {
    OpenWriter("gaps-");
    writer_.EnableGapCalls();
  }
};

TEST_F(TraceWriterGapsTest, CallsWithARecordAreDroppedTheOthersStoredUnderTheRecordsConfiguration) {
  AddRecords({MakeKernel(kSquare, 10, 1000, 2000), MakeKernel(kSquare, 11, 3000, 4000)});
  writer_.BeginGapCalls(1);
  // Recording began while records were still on: 12 and 13 have records (12 before the calls
  // are handed over, 13 after). 14 was made with records off while attached, 0 while detached.
  AddRecords({MakeKernel(kSquare, 12, 5000, 6000)});
  writer_.AddGapCall(Call(&kSquareFacts, 12, 4500));
  writer_.AddGapCall(Call(&kSquareFacts, 13, 4600));
  writer_.AddGapCall(Call(&kSquareFacts, 14, 4700));
  writer_.AddGapCall(Call(&kSquareFacts, 0, 4800));
  writer_.AddGapCall(Call(&kSquareFacts, 0, 4900));
  AddRecords({MakeKernel(kSquare, 13, 7000, 8000)});
  EXPECT_EQ(writer_.stats().gap_launches, 0u) << "held until resolved";
  writer_.ResolveGapCalls();
  EXPECT_EQ(writer_.stats().gap_calls_held, 5u);
  EXPECT_EQ(writer_.stats().gap_duplicates, 2u);
  EXPECT_EQ(writer_.stats().gap_launches, 3u);
  EXPECT_EQ(writer_.stats().gap_configs_from_calls, 0u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 4);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), 3);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 1) << "the calls use the records' configuration";
  EXPECT_EQ(reader.Int("SELECT count(DISTINCT configId) FROM (SELECT configId FROM OCC_LAUNCH UNION ALL "
                       "SELECT configId FROM OCC_LAUNCH_CALL)"), 1);
  EXPECT_EQ(reader.Text("SELECT group_concat(correlationId) FROM (SELECT correlationId FROM OCC_LAUNCH_CALL "
                        "ORDER BY apiStart)"), "14,0,0");
  EXPECT_EQ(reader.Text("SELECT sharedMemoryExecuted FROM OCC_KERNEL_CONFIG"), "102400")
      << "the record's facts, which calls lack";
  // #28: the nsys-style view has every launch, the gap's flagged and timed by the mean of the
  // configuration's records (every MakeKernel record here lasts 1000 ns).
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4 + 3);
  EXPECT_EQ(reader.Text("SELECT group_concat(start || '-' || \"end\") FROM (SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL "
                        "WHERE occTimeEstimated = 1 ORDER BY start)"),
            "4700-5700,4800-5800,4900-5900");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE occTimeEstimated = 0"), 4);
}

TEST_F(TraceWriterGapsTest, ACallOfAShapeNoRecordHadGetsAConfigurationFromItsFacts) {
  AddRecords({MakeKernel(kSquare, 10, 1000, 2000)});
  writer_.BeginGapCalls(1);
  LaunchCall wider = Call(&kSquareFacts, 0, 4500);
  wider.grid[0] = 264;
  writer_.AddGapCall(wider);
  writer_.AddGapCall(Call(&kFreshFacts, 0, 4600));
  writer_.AddGapCall(Call(&kFreshFacts, 0, 4700));
  writer_.ResolveGapCalls();
  EXPECT_EQ(writer_.stats().gap_launches, 3u);
  EXPECT_EQ(writer_.stats().gap_configs_from_calls, 2u);
  ASSERT_TRUE(writer_.Close());

  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_KERNEL_CONFIG"), 3);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                       "WHERE c.gridX = 264"), 1);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL l JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                       "JOIN StringIds s ON s.id = c.mangledName WHERE s.value = '" + std::string(kFresh) + "'"), 2);
}

TEST_F(TraceWriterGapsTest, ResolvingForgetsTheCorrelationIdsOfThePreviousGap) {
  AddRecords({MakeKernel(kSquare, 10, 1000, 2000)});
  writer_.BeginGapCalls(1);
  AddRecords({MakeKernel(kSquare, 11, 3000, 4000)});
  writer_.ResolveGapCalls();
  // A later gap's call with id 11 (correlation ids are CUPTI's, unique over the run; a clash
  // here would come from a stale set) is stored.
  writer_.BeginGapCalls(1);
  writer_.AddGapCall(Call(&kSquareFacts, 11, 9000));
  writer_.ResolveGapCalls();
  EXPECT_EQ(writer_.stats().gap_launches, 1u);
  EXPECT_EQ(writer_.stats().gap_duplicates, 0u);
}

// CUPTI's correlation ids after a re-attach are not known to differ from those before: a call
// recorded before the finalize (records off) whose id a record after the attach carries is kept;
// a call after the attach with a record of its epoch is dropped.
TEST_F(TraceWriterGapsTest, CorrelationIdsMatchOnlyWithinOneAttachment) {
  AddRecords({MakeKernel(kSquare, 10, 1000, 2000)});
  writer_.BeginGapCalls(1);
  writer_.AddGapCall(Call(&kSquareFacts, 12, 4500));  // records off, before the finalize
  writer_.SetGapEpoch(2);
  AddRecords({MakeKernel(kSquare, 12, 9000, 9500)});  // the new attachment's id 12
  LaunchCall after = Call(&kSquareFacts, 12, 8900);
  after.attach_epoch = 2;
  writer_.AddGapCall(after);
  writer_.ResolveGapCalls();
  EXPECT_EQ(writer_.stats().gap_launches, 1u);
  EXPECT_EQ(writer_.stats().gap_duplicates, 1u);
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Text("SELECT apiStart FROM OCC_LAUNCH_CALL"), "4500");
}

TEST_F(TraceWriterGapsTest, AFullTraceWithoutGapCallsWritesNoCalls) {
  AddRecords({MakeKernel(kSquare, 10, 1000, 2000)});
  writer_.ResolveGapCalls();
  ASSERT_TRUE(writer_.Close());
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH_CALL"), 0);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 1);
}

}  // namespace
}  // namespace occ::inj
