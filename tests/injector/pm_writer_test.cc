// PM-sample images (injector/achieved/pm_samples.h) into OCC_PM_SAMPLE rows: the real TraceWriter
// (with its PmSampleJoin) and TraceSession with real SQLite files, over an evaluator that reads
// each sample's values from the image bytes (CUPTI's evaluation is what needs the GPU's counter
// data) and counts what it was asked.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "injector/achieved/pm_samples.h"
#include "injector/session/trace_session.h"
#include "injector/writer/trace_writer.h"
#include "tests/injector/fake_records.h"
#include "tests/injector/writer_file_test.h"

namespace occ::inj {
namespace {

using testing::MakeKernel;
using testing::TraceReader;

constexpr uint64_t kInterval = 50;  // ns: the images' sample length here

// Sample i's values are PmValues stored at offset i * sizeof(PmValues) of the image; a sample
// whose cycles are negative fails to evaluate. Counts its calls and the samples asked for.
class BytesEvaluator final : public PmEvaluator {
 public:
  void Evaluate(const std::vector<uint8_t>& image, const std::vector<uint32_t>& samples, std::vector<PmValues>* values,
                std::vector<uint8_t>* failed, std::string* error) override {
    ++calls;
    values->assign(samples.size(), PmValues{});
    failed->assign(samples.size(), 0);
    for (size_t k = 0; k < samples.size(); ++k) {
      asked.push_back(samples[k]);
      std::memcpy(&(*values)[k], image.data() + samples[k] * sizeof(PmValues), sizeof(PmValues));
      if ((*values)[k].sm_cycles_active < 0) {
        (*failed)[k] = 1;
        if (error->empty()) *error = "cuptiProfilerHostEvaluateToGpuValues failed: CUPTI_ERROR_INVALID_PARAMETER";
      }
    }
  }
  std::atomic<int> calls{0};  // read by a test while the writer evaluates
  std::vector<uint32_t> asked;
};

PmImage MakeImage(uint32_t device, uint64_t first_start, const std::vector<PmValues>& values,
                  std::shared_ptr<BytesEvaluator> evaluator = std::make_shared<BytesEvaluator>()) {
  PmImage image;
  image.device_id = device;
  image.interval_ns = kInterval;
  image.counter_data.resize(values.size() * sizeof(PmValues));
  std::memcpy(image.counter_data.data(), values.data(), image.counter_data.size());
  for (size_t i = 0; i < values.size(); ++i) {
    image.spans.push_back({first_start + kInterval * i, first_start + kInterval * (i + 1)});
  }
  image.evaluator = std::move(evaluator);
  return image;
}

// `n` samples, all with one SM active (so that an evaluated sample becomes a row).
std::vector<PmValues> Active(size_t n) { return std::vector<PmValues>(n, PmValues{10, 320, -1}); }

class PmWriterTest : public testing::WriterFileTest {
 protected:
  void OpenPm(size_t max_held_images = 8) {
    OpenWriter("pm");
    PmJoinSettings settings;
    settings.interval_ns = kInterval;
    settings.max_held_images = max_held_images;
    writer_.StartPmJoin(settings);
  }
  uint64_t Meta(const std::string& name) {
    for (const auto& [key, value] : writer_.PmMeta()) {
      if (key == name) return std::stoull(value);
    }
    ADD_FAILURE() << name << " is not a PM row";
    return 0;
  }
};

// At the end every image is judged: evaluated samples with an SM active are rows, the others
// only counted. Here no kernel record came, so no sample is known to be idle: all are evaluated.
TEST_F(PmWriterTest, ActiveSamplesBecomeRowsIdleOnesAreOnlyCounted) {
  OpenPm();
  writer_.AddPmImage(MakeImage(1, 1000, {{0, 0, 3.5},           // idle: no SM active
                                         {1320, 42240, 12.5},   // all 132 SMs, 32 warps each
                                         {660, 5280, -1},       // DRAM not collected: NULL
                                         {-1, 0, 0}}));         // evaluation fails
  writer_.JudgePmImages(/*all=*/true, 0);
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
  EXPECT_EQ(reader.Meta("pm_samples_ahead_of_records"), "4");
}

// Once kernel records are complete past an image, only the samples that overlap a kernel are
// evaluated, all in one call (one hold of CUPTI's lock per image); the rest are idle, counted
// and never evaluated.
TEST_F(PmWriterTest, ACaughtUpImageEvaluatesOnlyItsBusySamplesInOneCall) {
  OpenPm();
  // Samples [1000,1050) ... [1450,1500); the kernels overlap samples 2-3 and 7-8.
  AddRecords({MakeKernel("_Z1av", 1, 1110, 1190), MakeKernel("_Z1bv", 2, 1390, 1360 + 80)});
  auto evaluator = std::make_shared<BytesEvaluator>();
  writer_.AddPmImage(MakeImage(0, 1000, Active(10), evaluator), 0);
  writer_.JudgePmImages(false, 0);
  EXPECT_EQ(evaluator->calls, 0) << "records are not complete past the image yet: it waits";
  writer_.PmRecordsThrough(1500);
  writer_.JudgePmImages(false, 0);
  EXPECT_EQ(evaluator->calls, 1);
  EXPECT_EQ(evaluator->asked, (std::vector<uint32_t>{2, 3, 7, 8}));
  EXPECT_EQ(writer_.stats().pm_samples, 4u);
  EXPECT_EQ(Meta("pm_samples_idle"), 6u);
  EXPECT_EQ(Meta("pm_samples_idle_unevaluated"), 6u);
  EXPECT_EQ(Meta("pm_samples_evaluated"), 4u);
  EXPECT_EQ(Meta("pm_samples_ahead_of_records"), 0u);
  EXPECT_EQ(Meta("pm_images_judged_caught_up"), 1u);
}

// The drop policy. The idle start of a run fills the pipeline with images while kernel records
// lag; the writer holds at most max_held_images of them and must give their slots back, so it
// judges the oldest with what it knows: nothing busy is dropped (every busy sample becomes a
// row), and the samples that are not evaluated are idle ones.
TEST_F(PmWriterTest, WhenImagesMustGoIdleSamplesAreDroppedAndBusyOnesKept) {
  OpenPm(/*max_held_images=*/2);
  std::vector<int> returned;
  auto evaluator = std::make_shared<BytesEvaluator>();
  uint64_t start = 1000;
  // 20 idle images, then 5 busy ones (a kernel over all of them), 10 samples each.
  std::vector<PmValues> idle(10, PmValues{0, 0, -1});
  for (int i = 0; i < 25; ++i) {
    PmImage image = MakeImage(0, start, i < 20 ? idle : Active(10), evaluator);
    image.recycle = [&returned, i](std::vector<uint8_t>&& bytes) {
      if (!bytes.empty()) returned.push_back(i);
    };
    writer_.AddPmImage(std::move(image), 0);
    start += 10 * kInterval;
    if (i == 21) {  // the idle part's records are complete (a flush while the GPU was idle)
      writer_.PmRecordsThrough(1000 + 20 * 10 * kInterval);
    }
    writer_.JudgePmImages(false, 0);
    EXPECT_LE(i + 1 - static_cast<int>(returned.size()), 2) << "more than max_held_images held after image " << i;
  }
  AddRecords({MakeKernel("_Z4busyv", 1, 1000 + 200 * kInterval, 1000 + 250 * kInterval)});
  writer_.PmRecordsThrough(UINT64_MAX);
  writer_.JudgePmImages(true, 0);
  EXPECT_EQ(returned.size(), 25u);
  EXPECT_EQ(writer_.stats().pm_samples, 50u) << "every busy sample is a row";
  EXPECT_EQ(Meta("pm_samples_lost_busy") + Meta("pm_samples_lost_idle"), 0u);
  EXPECT_EQ(Meta("pm_samples") + Meta("pm_samples_idle"), 250u);
  // The idle images judged once their records were complete were not evaluated at all.
  EXPECT_GT(Meta("pm_samples_idle_unevaluated"), 0u);
  EXPECT_EQ(Meta("pm_samples_evaluated"), 250u - Meta("pm_samples_idle_unevaluated"));
}

// Samples the collector had no image for come as spans only; the kernel timeline tells the lost
// idle ones from the lost busy ones. Samples longer than kMaxSampleIntervals intervals are
// rejected, and every decoded sample is counted exactly once.
TEST_F(PmWriterTest, EveryDecodedSampleIsCountedOnceLostOnesAsIdleOrBusy) {
  OpenPm();
  AddRecords({MakeKernel("_Z1av", 1, 2000, 2100)});  // busy: samples [2000,2100) of the dropped image
  PmImage dropped;
  dropped.device_id = 0;
  dropped.interval_ns = kInterval;
  dropped.dropped = true;
  for (uint64_t t = 1900; t < 2200; t += kInterval) dropped.spans.push_back({t, t + kInterval});  // 6 samples
  writer_.AddPmImage(std::move(dropped), 0);
  PmImage image = MakeImage(0, 3000, {{10, 320, -1}, {0, 0, -1}, {-1, 0, 0}, {10, 320, -1}});
  image.spans[3] = {3150, 3150 + 5 * kInterval};  // 5 intervals long: rejected
  writer_.AddPmImage(std::move(image), 0);
  AddRecords({MakeKernel("_Z1bv", 2, 3000, 3300)});
  writer_.PmRecordsThrough(UINT64_MAX);
  writer_.JudgePmImages(true, 0);
  EXPECT_EQ(Meta("pm_samples_lost_busy"), 2u);
  EXPECT_EQ(Meta("pm_samples_lost_idle"), 4u);
  EXPECT_EQ(Meta("pm_samples_rejected_long"), 1u);
  EXPECT_EQ(Meta("pm_samples"), 1u);
  EXPECT_EQ(Meta("pm_samples_idle"), 1u);
  EXPECT_EQ(Meta("pm_evaluate_errors"), 1u);
  const uint64_t decoded = 6 + 4;
  EXPECT_EQ(Meta("pm_samples") + Meta("pm_samples_idle") + Meta("pm_evaluate_errors") +
                Meta("pm_samples_rejected_long") + Meta("pm_samples_lost_idle") + Meta("pm_samples_lost_busy") +
                Meta("pm_samples_lost_write_error") + Meta("pm_samples_waiting"),
            decoded);
}

TEST(PmSessionTest, ImagesAreCommittedWhileRunningAndGoBackToTheirPool) {
  const std::string path = testing::TempPath("pm-session");
  SessionOptions options;
  options.path = path;
  options.flush_period_ms = 20;
  options.quiet = true;
  options.handle_signals = false;
  options.pm_samples = true;
  options.pm_join.interval_ns = kInterval;
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
  // Committed by the writer's period (as a SIGKILL would find them), before any Finish: with no
  // kernel records coming, images wait at most kMostImageWaitNs for them.
  TraceReader reader(path);
  int64_t rows = 0;
  for (int i = 0; i < 300 && rows < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rows = reader.Int("SELECT count(*) FROM OCC_PM_SAMPLE");
  }
  EXPECT_EQ(rows, 10);
  EXPECT_EQ(reader.Meta("pm_samples"), "10");
  EXPECT_EQ(returned.load(), 10) << "every image went back to its pool once judged, before Finish";
  session->Finish();
  TraceReader after(path);
  EXPECT_EQ(after.Meta("pm_samples"), "10");
  EXPECT_EQ(after.Meta("pm_samples_idle"), "10");
  EXPECT_EQ(after.Meta("pm_samples_waiting"), "0");
  EXPECT_EQ(after.Text("PRAGMA integrity_check"), "ok");
  session.reset();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

// Through the session: kernel records are complete only from a flush after which CUPTI holds no
// buffer. Here CUPTI's stand-in keeps its buffer (a record not complete) until the record age
// forces it out; only then is the image caught up, judged with the kernel (its busy samples
// evaluated, its idle ones not), and the collector told which configuration wants samples.
TEST(PmSessionTest, AnImageIsJudgedOnceAFlushHasBroughtInTheRecordsOfItsTime) {
  const std::string path = testing::TempPath("pm-caught-up");
  SessionOptions options;
  options.path = path;
  options.flush_period_ms = 20;
  options.max_record_age_ms = 100;
  options.buffer_bytes = 64 << 10;
  options.quiet = true;
  options.handle_signals = false;
  options.pm_samples = true;
  options.pm_join.interval_ns = kInterval;
  TraceSession* session_ptr = nullptr;
  std::mutex mutex;
  uint8_t* held = nullptr;
  size_t held_size = 0;
  std::atomic<int> forced{0};
  std::mutex reports_mutex;
  std::vector<PmWorkReport> reports;
  SessionHooks hooks;
  hooks.flush_activity = [&](bool is_forced) {
    if (!is_forced) return;  // withheld: an incomplete record
    ++forced;
    std::lock_guard lock(mutex);
    if (held != nullptr) session_ptr->CompleteBuffer(std::exchange(held, nullptr), held_size, 0);
  };
  hooks.cupti_timestamp = [] { return uint64_t{5000}; };
  hooks.pm_work = [&](const PmWorkReport& report) {
    std::lock_guard lock(reports_mutex);
    reports.push_back(report);
  };
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  session_ptr = session.get();
  {
    size_t size = 0;
    uint8_t* data = session->AcquireBuffer(&size);
    ASSERT_NE(data, nullptr);
    testing::FakeActivityBuffer buffer(data, size);
    ASSERT_TRUE(buffer.Add(MakeKernel("_Z1av", 1, 1000, 1100)));
    std::lock_guard lock(mutex);
    held = data;
    held_size = buffer.size();
  }
  auto evaluator = std::make_shared<BytesEvaluator>();
  session->SubmitPmImage(MakeImage(0, 900, Active(6), evaluator));  // [900, 1200)
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (forced.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Until the writer has judged the image, then a little longer for its work report: a fixed
  // wait alone was too short on a loaded 2-core machine.
  while (evaluator->calls.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("pm_images_judged_caught_up"), "1");
  EXPECT_EQ(reader.Meta("pm_samples"), "2");
  EXPECT_EQ(reader.Meta("pm_samples_idle_unevaluated"), "4");
  EXPECT_EQ(reader.Meta("pm_samples_ahead_of_records"), "0");
  EXPECT_EQ(evaluator->asked, (std::vector<uint32_t>{2, 3}));
  std::lock_guard lock(reports_mutex);
  ASSERT_FALSE(reports.empty());
  ASSERT_EQ(reports.back().devices.size(), 1u);
  EXPECT_EQ(reports.back().devices[0].wanting, 1u) << "100 ns sampled of the 1250 it needs";
  EXPECT_EQ(reports.back().devices[0].busy_ns, 100);
  session.reset();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace
}  // namespace occ::inj
