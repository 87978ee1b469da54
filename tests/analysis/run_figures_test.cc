// One action per function, and recoverable time that adds up: hand-built kernel groups run
// through the measured-evidence pass and BuildRunActions. Expected gains are the arithmetic of
// the durations given here ((slower mean - fastest mean) x launches), not the code's output.
#include "analyzer/analyze/run_figures.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/analyze/measured_evidence.h"

namespace occ {
namespace {

occtrace::KernelGroup Group(const std::string& mangled, int grid, int block, int64_t launches, double mean_ns) {
  occtrace::KernelGroup g;
  g.set_mangled_name(mangled);
  g.set_name(mangled);
  g.set_grid_x(grid);
  g.set_grid_y(1);
  g.set_grid_z(1);
  g.set_block_x(block);
  g.set_block_y(1);
  g.set_block_z(1);
  g.set_registers_per_thread(20);
  g.set_loader("my_app");  // the program's own kernels (OCC_MODULE.loader)
  g.set_launches(launches);
  g.set_mean_ns(mean_ns);
  g.set_total_ns(static_cast<int64_t>(mean_ns * static_cast<double>(launches)));
  g.set_judged(true);
  g.mutable_occupancy()->set_theoretical_occupancy_pct(100);
  return g;
}

void AddModelSuggestion(occtrace::KernelGroup* g, int64_t bound_ns) {
  auto* s = g->add_suggestions();
  s->set_kind("block_size");
  s->set_block_size(128);
  s->set_text("Try 128 threads per block");
  g->set_recoverable_ns_upper_bound(bound_ns);
}

TEST(RunFigures, OneActionPerFunctionSumsItsSlowerConfigurations) {
  // One function over the same 4,194,304 threads at three block sizes: 64 (40 µs x 20),
  // 128 (30 µs x 10) and 256 (12 µs x 20, the fastest). Gains: (40-12) x 20 = 560 µs and
  // (30-12) x 10 = 180 µs; 740 µs in all, one action.
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 40'000), Group(k, 32768, 128, 10, 30'000),
                                               Group(k, 16384, 256, 20, 12'000)};
  const int64_t total = 20 * 40'000 + 10 * 30'000 + 20 * 12'000;
  ApplyOwnerAndEvidence(&groups, total);
  RunActions run = BuildRunActions(&groups, total);
  ASSERT_EQ(run.actions.size() + run.minor_actions.size(), 1u);
  const occtrace::Action& a = run.actions.at(0);
  EXPECT_EQ(a.gain_kind(), "measured");
  EXPECT_EQ(a.gain_ns(), 740'000);
  EXPECT_EQ(a.configurations(), 2);
  EXPECT_NE(a.change().find("block 256 takes 12.0 µs"), std::string::npos) << a.change();
  EXPECT_EQ(groups[0].counted_gain_ns(), 560'000);
  EXPECT_EQ(groups[1].counted_gain_ns(), 180'000);
  EXPECT_EQ(groups[2].counted_gain_ns(), 0);
  occtrace::Summary summary;
  SetRecoverable(run, &summary);
  EXPECT_EQ(summary.recoverable_measured_ns(), 740'000);
  EXPECT_EQ(summary.recoverable_model_ns(), 0);
  EXPECT_EQ(summary.recoverable_ns_upper_bound(), 740'000);
}

TEST(RunFigures, MeasuredFirstModelBoundsApartAndSmallActionsMinor) {
  // Measured: (40-12) x 20 = 560 µs. Model: another function with a 100 µs bound. A third with a
  // 5 µs bound is below 1 % of the 1.54 ms run (15.4 µs), so it is minor; the summary counts all.
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 40'000), Group(k, 16384, 256, 20, 12'000),
                                               Group("_Z5otherv", 100, 96, 10, 50'000),
                                               Group("_Z5smallv", 100, 96, 1, 10'000)};
  AddModelSuggestion(&groups[2], 100'000);
  AddModelSuggestion(&groups[3], 5'000);
  ApplyOwnerAndEvidence(&groups, 1'540'000);
  RunActions run = BuildRunActions(&groups, 1'540'000);
  ASSERT_EQ(run.actions.size(), 2u);
  EXPECT_EQ(run.actions[0].gain_kind(), "measured");
  EXPECT_EQ(run.actions[0].gain_ns(), 560'000);
  EXPECT_EQ(run.action_group[0], 0u);
  EXPECT_EQ(run.actions[1].gain_kind(), "upper bound");
  EXPECT_EQ(run.actions[1].gain_ns(), 100'000);
  ASSERT_EQ(run.minor_actions.size(), 1u);
  EXPECT_EQ(run.minor_actions[0].gain_ns(), 5'000);
  occtrace::Summary summary;
  SetRecoverable(run, &summary);
  EXPECT_EQ(summary.recoverable_measured_ns(), 560'000);
  EXPECT_EQ(summary.recoverable_model_ns(), 105'000);
  EXPECT_EQ(summary.recoverable_ns_upper_bound(), 665'000);
}

TEST(RunFigures, OnlySmallActionsStayActions) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z5smallv", 100, 96, 1, 10'000)};
  AddModelSuggestion(&groups[0], 5'000);
  ApplyOwnerAndEvidence(&groups, 10'000'000);
  RunActions run = BuildRunActions(&groups, 10'000'000);
  EXPECT_EQ(run.actions.size(), 1u);
  EXPECT_TRUE(run.minor_actions.empty());
}

// "What to change" holds only what has a gain: a model suggestion the model bounds at 0 ns (a
// block size for SM balance under one wave) and a measured occupancy gap (gain not predicted)
// stay in their kernels' sections; Recoverable, the sum of the actions, says none, and agrees.
TEST(RunFigures, SuggestionsWithoutAGainAreNoActions) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z6nogainv", 66, 256, 10, 50'000),
                                               Group("_Z5shortv", 20000, 256, 10, 30'000)};
  AddModelSuggestion(&groups[0], 0);
  auto* gap = groups[1].add_suggestions();
  gap->set_kind("larger_blocks");
  gap->set_text("Blocks are too short-lived ...");
  ApplyOwnerAndEvidence(&groups, 800'000);
  RunActions run = BuildRunActions(&groups, 800'000);
  EXPECT_TRUE(run.actions.empty() && run.minor_actions.empty());
  EXPECT_EQ(groups[0].suggestions_size(), 1) << "the suggestion stays in its kernel's section";
  occtrace::Summary summary;
  SetRecoverable(run, &summary);
  EXPECT_EQ(summary.recoverable_ns_upper_bound(), 0);
}

// A function with a measured occupancy gap and a model bound: the action is the model's, with
// its bound, never the gap's unpredicted gain.
TEST(RunFigures, AModelActionIsTheModelsSuggestionNotAMeasuredGap) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z4bothv", 20000, 96, 10, 30'000)};
  auto* gap = groups[0].add_suggestions();
  gap->set_kind("larger_blocks");
  gap->set_text("Blocks are too short-lived ...");
  AddModelSuggestion(&groups[0], 20'000);
  ApplyOwnerAndEvidence(&groups, 300'000);
  RunActions run = BuildRunActions(&groups, 300'000);
  ASSERT_EQ(run.actions.size(), 1u);
  EXPECT_EQ(run.actions[0].change(), "Try 128 threads per block");
  EXPECT_EQ(run.actions[0].gain_kind(), "upper bound");
  EXPECT_EQ(run.actions[0].gain_ns(), 20'000);
}

}  // namespace
}  // namespace occ
