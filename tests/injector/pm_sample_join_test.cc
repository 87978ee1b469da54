// PmSampleJoin (injector/writer/pm_sample_join.h) on its own: sampled kernel time per
// configuration whichever of a sample and its kernel record comes first, GPU-busy time as the
// union of kernel times, what the sampling policy is told (wanting configurations), records that
// come after their samples were judged idle, and kernels whose record came without an end. The
// expected figures are worked out by hand from the spans below.
#include "injector/writer/pm_sample_join.h"

#include <gtest/gtest.h>

#include <vector>

namespace occ::inj {
namespace {

constexpr uint64_t kInterval = 100;

// An image of `count` samples of kInterval from `start` (no counter data: the join never reads
// it).
PmImage Image(uint64_t start, size_t count, uint32_t device = 0) {
  PmImage image;
  image.device_id = device;
  image.interval_ns = kInterval;
  image.counter_data.assign(8, 0);
  for (size_t i = 0; i < count; ++i) image.spans.push_back({start + kInterval * i, start + kInterval * (i + 1)});
  return image;
}

// Judges every due image and says that every evaluated sample was stored.
void JudgeAndStoreAll(PmSampleJoin* join, bool all = false) {
  PmSampleJoin::Judged judged;
  while (join->NextJudged(all, 0, &judged)) join->Credit(judged, std::vector<uint8_t>(judged.evaluate.size(), 1));
  join->Trim();
}

PmJoinSettings Settings() {
  PmJoinSettings settings;
  settings.interval_ns = kInterval;
  settings.running_window_ns = 10'000;
  return settings;
}

// Configuration 1 runs [1050,1250) and [1400,1420); configuration 2 [1250,1300). Samples
// [1000,1100) ... [1400,1500) stored. Sampled kernel time: 1 gets 50+100+50 (first kernel) + 20
// = 220, 2 gets 50: the same whether the records come before the samples or after.
TEST(PmSampleJoinTest, SampledKernelTimeIsTheSameWhicheverComesFirst) {
  for (bool records_first : {true, false}) {
    PmSampleJoin join(Settings());
    auto records = [&] {
      join.AddKernel(0, 1050, 1250, 1);
      join.AddKernel(0, 1250, 1300, 2);
      join.AddKernel(0, 1400, 1420, 1);
    };
    if (records_first) {
      records();
      join.RecordsThrough(1500);
    }
    join.AddImage(Image(1000, 5), 0);
    JudgeAndStoreAll(&join, /*all=*/!records_first);  // without records: judged ahead of them
    if (!records_first) records();
    EXPECT_EQ(join.sampled_ns(1), 220u) << (records_first ? "records first" : "samples first");
    EXPECT_EQ(join.sampled_ns(2), 50u) << (records_first ? "records first" : "samples first");
  }
}

// A sample the writer did not store (no SM active, evaluation failed) credits nothing.
TEST(PmSampleJoinTest, OnlyStoredSamplesCredit) {
  PmSampleJoin join(Settings());
  join.AddKernel(0, 1000, 1300, 7);
  join.AddImage(Image(1000, 3), 0);
  join.RecordsThrough(1300);
  PmSampleJoin::Judged judged;
  ASSERT_TRUE(join.NextJudged(false, 0, &judged));
  ASSERT_EQ(judged.evaluate.size(), 3u);
  join.Credit(judged, {1, 0, 1});
  EXPECT_EQ(join.sampled_ns(7), 200u);
}

// GPU-busy time is the union of kernel times, whatever order the records come in: kernels
// [100,300), [200,400) (overlapping), [600,700) and, late, [450,500) and [50,150).
TEST(PmSampleJoinTest, GpuBusyTimeIsTheUnionOfKernelTimes) {
  PmSampleJoin join(Settings());
  join.AddKernel(0, 200, 400, 1);
  join.AddKernel(0, 100, 300, 1);
  join.AddKernel(0, 600, 700, 2);
  join.AddKernel(0, 450, 500, 3);
  join.AddKernel(0, 50, 150, 3);
  join.RecordsThrough(1000);
  join.Trim();
  PmWorkReport report;
  ASSERT_TRUE(join.Report(&report));
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].busy_ns, (400 - 50) + (500 - 450) + (700 - 600));
  EXPECT_FALSE(join.Report(&report)) << "nothing changed since";
}

// What the policy follows: configurations that ran within the running window and lack
// kEnoughSampleIntervals intervals of sampled kernel time. A new configuration is wanting; one
// with enough is not; one that stopped running is not either.
TEST(PmSampleJoinTest, ConfigurationsThatKeepRunningWithoutEnoughAreWanting) {
  PmSampleJoin join(Settings());
  const uint64_t enough = kEnoughSampleIntervals * kInterval;  // 2500 ns
  join.AddKernel(0, 1000, 1000 + enough, 1);          // covered by the samples below
  join.AddKernel(0, 1000 + enough, 1100 + enough, 2);  // sampled for 100 ns only
  join.AddImage(Image(1000, kEnoughSampleIntervals + 1), 0);
  join.RecordsThrough(1100 + enough);
  JudgeAndStoreAll(&join);
  ASSERT_EQ(join.sampled_ns(1), enough);
  PmWorkReport report;
  ASSERT_TRUE(join.Report(&report));
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].configs, 2u);
  EXPECT_EQ(report.devices[0].satisfied, 1u);
  EXPECT_EQ(report.devices[0].wanting, 1u) << "configuration 2";
  // A new configuration appears: wanting too.
  join.AddKernel(0, 5000, 5050, 3);
  ASSERT_TRUE(join.Report(&report));
  EXPECT_EQ(report.devices[0].wanting, 2u);
  // Much later, only configuration 3 keeps running: 2 is out of the running window.
  join.AddKernel(0, 50'000, 50'050, 3);
  join.RecordsThrough(50'100);
  ASSERT_TRUE(join.Report(&report));
  EXPECT_EQ(report.devices[0].wanting, 1u);
}

// A record whose kernel overlaps samples already judged idle (records said complete past them)
// is counted: the check on "caught up".
TEST(PmSampleJoinTest, ARecordAfterItsSamplesWereJudgedIdleIsCounted) {
  PmSampleJoin join(Settings());
  join.AddImage(Image(1000, 4), 0);
  join.RecordsThrough(1400);
  JudgeAndStoreAll(&join);
  EXPECT_EQ(join.counts().idle, 4u);
  join.AddKernel(0, 1500, 1600, 1);  // after the judged samples: fine
  EXPECT_EQ(join.counts().late_kernel_records, 0u);
  join.AddKernel(0, 1150, 1250, 1);
  EXPECT_EQ(join.counts().late_kernel_records, 1u);
}

// A kernel whose record came without its end (a forced flush while it ran) is taken to run
// until the next point where records are complete, not forever: samples after that are idle.
TEST(PmSampleJoinTest, AKernelWithoutItsEndRunsUntilTheFlush) {
  PmSampleJoin join(Settings());
  join.AddKernel(0, 1000, 0, 1);
  join.RecordsThrough(1200);
  join.AddImage(Image(1000, 4), 0);
  join.RecordsThrough(1400);
  PmSampleJoin::Judged judged;
  ASSERT_TRUE(join.NextJudged(false, 0, &judged));
  EXPECT_EQ(judged.evaluate, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(join.counts().idle, 2u);
}

// An image waits for records at most kMostImageWaitNs, and no more than max_held_images wait.
TEST(PmSampleJoinTest, ImagesWaitForRecordsBoundedInTimeAndNumber) {
  PmJoinSettings settings = Settings();
  settings.max_held_images = 2;
  PmSampleJoin join(settings);
  PmSampleJoin::Judged judged;
  join.AddImage(Image(1000, 2), 0);
  EXPECT_FALSE(join.NextJudged(false, kMostImageWaitNs - 1, &judged));
  EXPECT_TRUE(join.NextJudged(false, kMostImageWaitNs, &judged));
  for (uint64_t i = 0; i < 3; ++i) join.AddImage(Image(2000 + 1000 * i, 2), 10);
  ASSERT_TRUE(join.NextJudged(false, 10, &judged));
  EXPECT_EQ(judged.image.spans.front().start_ns, 2000u) << "the oldest goes first";
  EXPECT_FALSE(join.NextJudged(false, 10, &judged));
  EXPECT_EQ(join.waiting_images(), 2u);
}

}  // namespace
}  // namespace occ::inj
