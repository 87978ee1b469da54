// PM-sample images (injector/achieved/pm_samples.h) into OCC_PM_SAMPLE rows: the real TraceWriter and
// TraceSession with real SQLite files, over an evaluator that reads each sample's values from
// the image bytes (CUPTI's evaluation is what needs the GPU's counter data).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "injector/achieved/pm_samples.h"
#include "injector/session/trace_session.h"
#include "injector/writer/trace_writer.h"
#include "tests/injector/fake_records.h"
#include "tests/injector/writer_file_test.h"

namespace occ::inj {
namespace {

using testing::TraceReader;

// Sample i's values are PmValues stored at offset i * sizeof(PmValues) of the image; a sample
// whose cycles are negative fails to evaluate.
class BytesEvaluator final : public PmEvaluator {
 public:
  bool Evaluate(const std::vector<uint8_t>& image, size_t sample_index, PmValues* out, std::string* error) override {
    std::memcpy(out, image.data() + sample_index * sizeof(PmValues), sizeof(PmValues));
    if (out->sm_cycles_active < 0) {
      *error = "cuptiProfilerHostEvaluateToGpuValues failed: CUPTI_ERROR_INVALID_PARAMETER";
      return false;
    }
    return true;
  }
};

PmImage MakeImage(uint32_t device, uint64_t first_start, const std::vector<PmValues>& values) {
  PmImage image;
  image.device_id = device;
  image.counter_data.resize(values.size() * sizeof(PmValues));
  std::memcpy(image.counter_data.data(), values.data(), image.counter_data.size());
  for (size_t i = 0; i < values.size(); ++i) image.spans.push_back({first_start + 50 * i, first_start + 50 * (i + 1)});
  image.evaluator = std::make_shared<BytesEvaluator>();
  return image;
}

class PmWriterTest : public testing::WriterFileTest {};

TEST_F(PmWriterTest, ActiveSamplesBecomeRowsIdleOnesAreOnlyCounted) {
  OpenWriter("pm");
  writer_.AddPmImage(MakeImage(1, 1000, {{0, 0, 3.5},           // idle: no SM active
                                         {1320, 42240, 12.5},   // all 132 SMs, 32 warps each
                                         {660, 5280, -1},       // DRAM not collected: NULL
                                         {-1, 0, 0}}));         // evaluation fails
  writer_.WritePmMeta();
  ASSERT_TRUE(writer_.Commit());
  EXPECT_EQ(writer_.stats().pm_samples, 2u);
  EXPECT_EQ(writer_.stats().pm_samples_idle, 1u);
  EXPECT_EQ(writer_.stats().pm_evaluate_errors, 1u);
  TraceReader reader(path_);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_PM_SAMPLE"), 2);
  EXPECT_EQ(reader.Text("SELECT deviceId || ',' || start || ',' || \"end\" || ',' || smCyclesActive || ',' || "
                        "warpsActive || ',' || dramThroughputPct FROM OCC_PM_SAMPLE ORDER BY start LIMIT 1"),
            "1,1050,1100,1320.0,42240.0,12.5");
  EXPECT_EQ(reader.Text("SELECT dramThroughputPct FROM OCC_PM_SAMPLE WHERE start = 1100"), "<null>");
  EXPECT_EQ(reader.Meta("pm_samples"), "2");
  EXPECT_EQ(reader.Meta("pm_samples_idle"), "1");
  EXPECT_EQ(reader.Meta("pm_evaluate_errors"), "1");
}

TEST(PmSessionTest, ImagesAreCommittedWhileRunningAndGoBackToTheirPool) {
  const std::string path = testing::TempPath("pm-session");
  SessionOptions options;
  options.path = path;
  options.flush_period_ms = 20;
  options.quiet = true;
  options.handle_signals = false;
  options.pm_samples = true;
  auto session = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(session, nullptr);
  std::atomic<int> returned{0};
  for (int i = 0; i < 10; ++i) {
    PmImage image = MakeImage(0, 1000 + 1000 * static_cast<uint64_t>(i), {{100, 800, 1.0}, {0, 0, 0}});
    image.recycle = [&returned](std::vector<uint8_t>&& bytes) {
      if (!bytes.empty()) ++returned;
    };
    session->SubmitPmImage(std::move(image));
  }
  // Committed by the writer's period (as a SIGKILL would find them), before any Finish.
  TraceReader reader(path);
  int64_t rows = 0;
  for (int i = 0; i < 200 && rows < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rows = reader.Int("SELECT count(*) FROM OCC_PM_SAMPLE");
  }
  EXPECT_EQ(rows, 10);
  EXPECT_EQ(reader.Meta("pm_samples"), "10");
  session->Finish();
  EXPECT_EQ(returned.load(), 10) << "every image went back to its pool after the writer used it";
  TraceReader after(path);
  EXPECT_EQ(after.Meta("pm_samples"), "10");
  EXPECT_EQ(after.Meta("pm_samples_idle"), "10");
  EXPECT_EQ(after.Text("PRAGMA integrity_check"), "ok");
  session.reset();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace
}  // namespace occ::inj
