// KernelWindowSchedule (kernel_windows.h): when light tracing's kernel records are on. Times
// are plain nanosecond counts chosen so that every expected value follows from the settings
// by hand.
#include "injector/light/kernel_windows.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace occ::inj {
namespace {

KernelWindowSettings Settings(int64_t period_ns, int64_t window_ns, double max_duty, int64_t grace_ns,
                              bool new_configs = true) {
  KernelWindowSettings settings;
  settings.period_ns = period_ns;
  settings.window_ns = window_ns;
  settings.max_duty = max_duty;
  settings.grace_ns = grace_ns;
  settings.windows_for_new_configs = new_configs;
  return settings;
}

TEST(KernelWindowScheduleTest, RecordsAreOnBeforeTheFirstLaunch) {
  KernelWindowSchedule schedule(Settings(1000, 100, 0.1, 0));
  EXPECT_TRUE(schedule.open());
  EXPECT_TRUE(schedule.Update(0, false, false));
  EXPECT_TRUE(schedule.Update(50'000, false, true)) << "still no launch: records stay on however long";
  EXPECT_FALSE(schedule.started());
  EXPECT_TRUE(schedule.open());
  EXPECT_EQ(schedule.windows_opened(), 0u);
  EXPECT_EQ(schedule.open_ns_total(50'000), 0) << "time before the first launch is not counted";
}

TEST(KernelWindowScheduleTest, FirstWindowEndsAWindowAfterTheFirstLaunch) {
  KernelWindowSchedule schedule(Settings(1000, 100, 0.1, 0, false));
  EXPECT_TRUE(schedule.Update(500, false, false));
  EXPECT_TRUE(schedule.Update(1000, true, false));  // the first launch
  EXPECT_TRUE(schedule.started());
  EXPECT_EQ(schedule.start_ns(), 1000);
  EXPECT_EQ(schedule.windows_opened(), 1u);
  EXPECT_TRUE(schedule.Update(1099, true, false));
  EXPECT_TRUE(schedule.open());
  EXPECT_FALSE(schedule.Update(1100, true, false)) << "window_ns = 100 after the first launch";
  EXPECT_FALSE(schedule.open());
  EXPECT_EQ(schedule.open_ns_total(1100), 100);
  EXPECT_FALSE(schedule.Update(1500, true, false));
  EXPECT_EQ(schedule.windows_opened(), 1u);
  EXPECT_EQ(schedule.windows_for_new_configs(), 0u);
}

TEST(KernelWindowScheduleTest, PeriodicWindowsAndOpenTime) {
  KernelWindowSchedule schedule(Settings(1000, 100, 0.1, 0, false));
  ASSERT_TRUE(schedule.Update(1000, true, false));
  ASSERT_FALSE(schedule.Update(1100, true, false));
  // The next window opens period_ns after the last one opened.
  EXPECT_FALSE(schedule.Update(1999, true, false));
  EXPECT_TRUE(schedule.Update(2000, true, false));
  EXPECT_EQ(schedule.windows_opened(), 2u);
  EXPECT_EQ(schedule.open_ns_total(2040), 100 + 40) << "an open window counts up to now";
  EXPECT_TRUE(schedule.Update(2099, true, false));
  EXPECT_FALSE(schedule.Update(2100, true, false));
  EXPECT_EQ(schedule.open_ns_total(2100), 200);
  // A late wake-up: the window opens at 3050, so the next one is due at 4050, and it stays
  // open until a wake-up at least window_ns later (3150).
  EXPECT_TRUE(schedule.Update(3050, true, false));
  EXPECT_FALSE(schedule.Update(3150, true, false));
  EXPECT_EQ(schedule.open_ns_total(3150), 300);
  EXPECT_FALSE(schedule.Update(4049, true, false));
  EXPECT_TRUE(schedule.Update(4050, true, false));
  // A window closed late counts the time it was really open: 4050 to 4200.
  EXPECT_FALSE(schedule.Update(4200, true, false));
  EXPECT_EQ(schedule.open_ns_total(4200), 450);
  EXPECT_EQ(schedule.open_ns_total(9999), 450) << "closed: no more time accrues";
  EXPECT_EQ(schedule.windows_opened(), 4u);
  EXPECT_EQ(schedule.windows_for_new_configs(), 0u);
}

TEST(KernelWindowScheduleTest, PeriodIsAtLeastTheWindow) {
  KernelWindowSchedule schedule(Settings(50, 100, 0.1, 0, false));  // period raised to 100
  ASSERT_TRUE(schedule.Update(1000, true, false));
  EXPECT_FALSE(schedule.Update(1100, true, false)) << "closes; never back to back in one wake-up";
  EXPECT_TRUE(schedule.Update(1101, true, false)) << "101 >= period 100 since the last opening at 1000";
  EXPECT_EQ(schedule.windows_opened(), 2u);
}

// max_duty 0.25, grace 2000, window 100: within the grace period records may be on for
// 0.25 x 2000 = 500 ns, the first window's 100 included, so four new-configuration windows
// fit (closed time 200, 300, 400, 500) and a fifth (600) does not until
// 0.25 x (now - start + window) >= 600, i.e. now >= start + 2300 = 3300.
TEST(KernelWindowScheduleTest, NewConfigurationWindowsAreRationedByDutyAndGrace) {
  KernelWindowSchedule schedule(Settings(1'000'000, 100, 0.25, 2000));
  ASSERT_TRUE(schedule.Update(1000, true, true));
  ASSERT_FALSE(schedule.Update(1100, true, true)) << "a closing wake-up opens nothing";
  for (int64_t at : {1200, 1400, 1600, 1800}) {
    EXPECT_TRUE(schedule.Update(at, true, true)) << at;
    EXPECT_TRUE(schedule.Update(at + 50, true, true)) << "already open: new configs change nothing";
    EXPECT_FALSE(schedule.Update(at + 100, true, false)) << at;
  }
  EXPECT_EQ(schedule.windows_for_new_configs(), 4u);
  EXPECT_EQ(schedule.open_ns_total(1900), 500) << "max_duty x grace";
  EXPECT_FALSE(schedule.Update(2000, true, true)) << "600 > 0.25 x 2000";
  EXPECT_FALSE(schedule.Update(3299, true, true)) << "600 > 0.25 x 2399";
  EXPECT_FALSE(schedule.Update(3300, true, false)) << "no new configuration: no window";
  EXPECT_TRUE(schedule.Update(3300, true, true)) << "600 <= 0.25 x 2400";
  EXPECT_EQ(schedule.windows_for_new_configs(), 5u);
  EXPECT_EQ(schedule.windows_opened(), 6u);
  EXPECT_FALSE(schedule.Update(3400, true, false));
  EXPECT_EQ(schedule.open_ns_total(3400), 600);
}

TEST(KernelWindowScheduleTest, ZeroDutyAllowsOnlyPeriodicWindows) {
  KernelWindowSchedule schedule(Settings(1000, 100, 0.0, 10'000));
  ASSERT_TRUE(schedule.Update(1000, true, true));
  ASSERT_FALSE(schedule.Update(1100, true, true));
  EXPECT_FALSE(schedule.Update(1200, true, true));
  EXPECT_TRUE(schedule.Update(2000, true, true)) << "periodic windows are not rationed";
  EXPECT_EQ(schedule.windows_for_new_configs(), 0u);
  EXPECT_EQ(schedule.windows_opened(), 2u);
}

TEST(KernelWindowScheduleTest, NewConfigurationWindowsCanBeOff) {
  KernelWindowSchedule schedule(Settings(1000, 100, 1.0, 10'000, false));
  ASSERT_TRUE(schedule.Update(1000, true, true));
  ASSERT_FALSE(schedule.Update(1100, true, true));
  EXPECT_FALSE(schedule.Update(1200, true, true));
  EXPECT_FALSE(schedule.Update(1999, true, true));
  EXPECT_TRUE(schedule.Update(2000, true, true));
  EXPECT_EQ(schedule.windows_for_new_configs(), 0u);
  EXPECT_EQ(schedule.windows_opened(), 2u);
}

}  // namespace
}  // namespace occ::inj

namespace occ::inj {
namespace {

// Under-timed configurations (launched again while too few of their launches were timed) open
// windows like new configurations do, rationed by the same duty cycle, counted apart. Same
// numbers as NewConfigurationWindowsAreRationedByDutyAndGrace: four windows fit in the grace
// period, the fifth from 3300 on.
TEST(KernelWindowScheduleTest, UnderTimedWindowsAreRationedLikeNewConfigurationWindows) {
  KernelWindowSchedule schedule(Settings(1'000'000, 100, 0.25, 2000));
  ASSERT_TRUE(schedule.Update(1000, true, false, true));
  ASSERT_FALSE(schedule.Update(1100, true, false, true)) << "a closing wake-up opens nothing";
  EXPECT_TRUE(schedule.Update(1200, true, false, true));
  EXPECT_FALSE(schedule.Update(1300, true, false, false));
  EXPECT_TRUE(schedule.Update(1400, true, true, true)) << "new and under-timed: counted as new";
  EXPECT_FALSE(schedule.Update(1500, true, false, false));
  for (int64_t at : {1600, 1800}) {
    EXPECT_TRUE(schedule.Update(at, true, false, true)) << at;
    EXPECT_FALSE(schedule.Update(at + 100, true, false, false)) << at;
  }
  EXPECT_EQ(schedule.windows_for_under_timed(), 3u);
  EXPECT_EQ(schedule.windows_for_new_configs(), 1u);
  EXPECT_FALSE(schedule.Update(2000, true, false, true)) << "600 > 0.25 x 2000";
  EXPECT_FALSE(schedule.Update(3299, true, false, true)) << "600 > 0.25 x 2399";
  EXPECT_TRUE(schedule.Update(3300, true, false, true)) << "600 <= 0.25 x 2400";
  EXPECT_EQ(schedule.windows_for_under_timed(), 4u);
  EXPECT_EQ(schedule.windows_opened(), 6u);
}

TEST(KernelWindowScheduleTest, UnderTimedWindowsAreOffWithNewConfigurationWindows) {
  KernelWindowSchedule schedule(Settings(1000, 100, 1.0, 10'000, false));
  ASSERT_TRUE(schedule.Update(1000, true, false, true));
  ASSERT_FALSE(schedule.Update(1100, true, false, true));
  EXPECT_FALSE(schedule.Update(1200, true, false, true));
  EXPECT_TRUE(schedule.Update(2000, true, false, true)) << "periodic";
  EXPECT_EQ(schedule.windows_for_under_timed(), 0u);
}

}  // namespace
}  // namespace occ::inj
