// The measured-evidence pass on hand-built kernel groups: only configurations of the same
// function on the same device that launched the same number of threads (up to rounding the grid
// to whole blocks) are compared, a faster
// one must be at least 10 % faster per launch, the gain is measured time, and library kernels
// lose launch-configuration advice. Durations below are chosen for the rule being tested.
#include "analyzer/analyze/measured_evidence.h"
#include "analyzer/analyze/run_figures.h"
#include "analyzer/model/arch_table.h"
#include "analyzer/model/register_advice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
  g.set_launches(launches);
  g.set_mean_ns(mean_ns);
  g.set_total_ns(static_cast<int64_t>(mean_ns * static_cast<double>(launches)));
  g.set_judged(true);
  g.mutable_occupancy()->set_theoretical_occupancy_pct(100);
  // C++ names here stand for the program's own kernels: loaded by the program (OCC_MODULE.loader).
  if (mangled.rfind("_Z", 0) == 0) g.set_loader("my_app");
  return g;
}

const occtrace::Suggestion* Measured(const occtrace::KernelGroup& g) {
  for (const auto& s : g.suggestions()) {
    if (s.kind() == "measured_config") return &s;
  }
  return nullptr;
}

TEST(MeasuredEvidence, SameWorkFasterConfigurationIsRecommendedWithItsMeasuredGain) {
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 40'000),
                                               Group(k, 16384, 256, 20, 12'000)};
  ApplyOwnerAndEvidence(&groups, /*run_total_ns=*/1'040'000);
  const occtrace::Suggestion* s = Measured(groups[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->block_size(), 256);
  EXPECT_NE(s->text().find("<<<16384, 256>>>"), std::string::npos) << s->text();
  EXPECT_EQ(groups[0].measured_gain_ns(), 20 * (40'000 - 12'000));
  // Priority: the measured gain in % of GPU time (560 us of 1.04 ms).
  EXPECT_NEAR(groups[0].priority(), 100.0 * 560'000 / 1'040'000, 1e-9);
  EXPECT_EQ(Measured(groups[1]), nullptr) << "the faster one is not told to become slower";
}

// The points beside the occupancy curve: every block size that ran the same work, one point
// each, ordered by block size, this group's own marked; other work and other functions left out.
TEST(MeasuredEvidence, MeasuredPointsAreTheSameWorkAtEachBlockSize) {
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {
      Group(k, 16384, 256, 20, 12'000),  // 4,194,304 threads
      Group(k, 65536, 64, 20, 40'000),   // the same work
      Group(k, 32768, 128, 10, 21'000),  // the same work
      Group(k, 1024, 256, 5, 2'000),     // other work: not a point of the others
      Group("_Z5otherPfif", 65536, 64, 3, 1'000)};
  groups[1].mutable_achieved()->set_samples(2);
  groups[1].mutable_achieved()->set_mean_pct(26.5);
  groups[2].mutable_occupancy()->set_theoretical_occupancy_pct(75);
  ApplyOwnerAndEvidence(&groups, 2'000'000);
  const occtrace::KernelGroup& g = groups[1];
  EXPECT_EQ(g.measured_work_threads(), 4'194'304);
  ASSERT_EQ(g.measured_points_size(), 3);
  EXPECT_EQ(g.measured_points(0).block_size(), 64);
  EXPECT_TRUE(g.measured_points(0).current());
  EXPECT_DOUBLE_EQ(g.measured_points(0).achieved_pct(), 26.5);
  EXPECT_EQ(g.measured_points(1).block_size(), 128);
  EXPECT_FALSE(g.measured_points(1).current());
  EXPECT_EQ(g.measured_points(1).launches(), 10);
  EXPECT_DOUBLE_EQ(g.measured_points(1).mean_ns(), 21'000);
  EXPECT_DOUBLE_EQ(g.measured_points(1).theoretical_pct(), 75);
  EXPECT_LT(g.measured_points(1).achieved_pct(), 0) << "not measured";
  EXPECT_EQ(g.measured_points(2).block_size(), 256);
  EXPECT_EQ(groups[0].measured_points_size(), 3);
  EXPECT_TRUE(groups[0].measured_points(2).current());
  EXPECT_EQ(groups[3].measured_points_size(), 0) << "the only configuration with its work";
  EXPECT_EQ(groups[4].measured_points_size(), 0) << "another function";
}

TEST(MeasuredEvidence, DifferentWorkIsNotCompared) {
  const std::string k = "_Z5scalePfif";
  // 65536 x 64 = 4.19 M threads against 1024 x 256 = 262 k threads: not the same work.
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 40'000), Group(k, 1024, 256, 20, 2'000)};
  ApplyOwnerAndEvidence(&groups, 840'000);
  EXPECT_EQ(Measured(groups[0]), nullptr);
  EXPECT_EQ(groups[0].measured_gain_ns(), 0);
}

// ceil(n / block) grids over one n launch n rounded up to whole blocks: the H100 membound trace's
// saxpy over 4,194,304 floats ran grid 43691 x block 96 (4,194,336 threads, 29.1 us) and grid
// 16384 x block 256 (4,194,304 threads, 22.8 us).
TEST(MeasuredEvidence, GridsRoundedUpToWholeBlocksAreTheSameWork) {
  const std::string k = "_Z5saxpyfPKfPfi";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 43691, 96, 5, 29'100), Group(k, 16384, 256, 5, 22'800)};
  ApplyOwnerAndEvidence(&groups, /*run_total_ns=*/3'320'000);
  const occtrace::Suggestion* s = Measured(groups[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->block_size(), 256);
  EXPECT_EQ(groups[0].measured_points_size(), 2);
  // Nine more blocks of 96 (4,195,200 threads: 896 more than 16384 x 256) is other work.
  std::vector<occtrace::KernelGroup> other = {Group(k, 43700, 96, 5, 29'100), Group(k, 16384, 256, 5, 22'800)};
  ApplyOwnerAndEvidence(&other, /*run_total_ns=*/3'320'000);
  EXPECT_EQ(Measured(other[0]), nullptr);
  // One block of 1,024 threads and one of 128 (the H100 launch matrix's k_dims) differ by less
  // than a block, but by 88 % of the work: not the same work.
  std::vector<occtrace::KernelGroup> tiny = {Group(k, 1, 1024, 1, 1'056), Group(k, 1, 128, 3, 939)};
  ApplyOwnerAndEvidence(&tiny, /*run_total_ns=*/1'000'000);
  EXPECT_EQ(tiny[0].measured_points_size(), 0);
}

TEST(MeasuredEvidence, LessThanTenPercentFasterIsNoise) {
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 10'000), Group(k, 16384, 256, 20, 9'200)};
  ApplyOwnerAndEvidence(&groups, 384'000);
  EXPECT_EQ(Measured(groups[0]), nullptr);
}

TEST(MeasuredEvidence, OtherFunctionsAndDevicesAreNotCompared) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z1av", 65536, 64, 20, 40'000),
                                               Group("_Z1bv", 16384, 256, 20, 12'000),
                                               Group("_Z1av", 16384, 256, 20, 12'000)};
  groups[2].set_device_id(1);
  ApplyOwnerAndEvidence(&groups, 1'280'000);
  EXPECT_EQ(Measured(groups[0]), nullptr);
}

TEST(MeasuredEvidence, LibraryKernelsGetNoLaunchConfigurationAdvice) {
  std::vector<occtrace::KernelGroup> groups = {Group("sm90_xmma_fprop_implicit_gemm_bf16", 264, 384, 10, 90'000),
                                               Group("sm90_xmma_fprop_implicit_gemm_bf16", 132, 768, 10, 50'000)};
  auto* s = groups[0].add_suggestions();
  s->set_kind("register_cap");
  s->set_text("Cap registers at 128/thread: __launch_bounds__(384, 1)");
  groups[0].set_priority(5);
  groups[0].set_recoverable_ns_upper_bound(1000);
  ApplyOwnerAndEvidence(&groups, 1'400'000);
  EXPECT_EQ(groups[0].origin(), "vendor");
  EXPECT_FALSE(groups[0].tunable());
  EXPECT_EQ(groups[0].suggestions_size(), 0);
  EXPECT_EQ(groups[0].priority(), 0);
  EXPECT_EQ(groups[0].recoverable_ns_upper_bound(), 0);
  EXPECT_EQ(Measured(groups[0]), nullptr) << "not even a measured configuration: the library chooses it";
}

TEST(MeasuredEvidence, TritonAdviceNamesTheRecordedConfig) {
  // An Inductor kernel compiled with num_warps=4, num_stages=3 (OCC_TRITON_KERNEL) and a model
  // register cap of 64: the advice is that triton.Config, not __launch_bounds__.
  std::vector<occtrace::KernelGroup> groups = {Group("triton_per_fused_sum_19", 2048, 128, 10, 8'000)};
  groups[0].set_triton_num_warps(4);
  groups[0].set_triton_num_stages(3);
  auto* s = groups[0].add_suggestions();
  s->set_kind("register_cap");
  s->set_registers_per_thread(64);
  s->set_text("Cap registers at 64/thread: __launch_bounds__(128, 8) or -maxrregcount=64");
  ApplyOwnerAndEvidence(&groups, 80'000);
  EXPECT_EQ(groups[0].origin(), "inductor");
  EXPECT_EQ(groups[0].suggestions(0).text().rfind("cap registers: triton.Config({...}, num_warps=4, num_stages=3, maxnreg=64)", 0), 0u)
      << groups[0].suggestions(0).text();
}

// One name compiled several ways (XLA's autotuner: registers 30-218) is several functions: their
// configurations are never compared, even on the same work.
TEST(MeasuredEvidence, CompiledVariantsOfOneNameAreNotCompared) {
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 40'000), Group(k, 16384, 256, 20, 12'000)};
  groups[0].set_registers_per_thread(30);
  groups[1].set_registers_per_thread(64);
  ApplyOwnerAndEvidence(&groups, 1'040'000);
  EXPECT_EQ(Measured(groups[0]), nullptr);
  EXPECT_EQ(groups[0].measured_points_size(), 0);
  EXPECT_EQ(groups[0].name_variants(), 2);
  groups[1].set_registers_per_thread(30);
  groups[1].clear_suggestions();
  ApplyOwnerAndEvidence(&groups, 1'040'000);
  EXPECT_NE(Measured(groups[0]), nullptr) << "the same code at two block sizes is compared";
  EXPECT_EQ(groups[0].name_variants(), 1);
}

// Triton's @autotune: four configurations benchmarked in a burst, then the chosen one ran 200
// more times after the others stopped (tail_launches, from the reader). The trials are named
// as such and never become actions; the choice gets no launch-configuration advice either.
TEST(MeasuredEvidence, AutotuningTrialsNeverBecomeActions) {
  std::vector<occtrace::KernelGroup> groups;
  const int warps[] = {1, 2, 4, 8};
  for (int w : warps) {
    occtrace::KernelGroup g = Group("add_kernel", 4096 / w, 32 * w, 500, 10'000 + 1'000 * w);
    g.set_loader("triton-cache/cuda_utils.so");
    g.set_registers_per_thread(20 + w);
    g.set_tail_launches(w == 8 ? 200 : 0);
    auto* s = g.add_suggestions();
    s->set_kind("block_size");
    s->set_block_size(256);
    s->set_text("model suggestion");
    g.set_recoverable_ns_upper_bound(1000);
    groups.push_back(g);
  }
  ApplyOwnerAndEvidence(&groups, 100'000'000);
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_EQ(groups[i].origin(), "triton");
    EXPECT_EQ(groups[i].autotuning_trial(), i != 3) << i;
    EXPECT_NE(groups[i].autotuner().find("@triton.autotune"), std::string::npos);
    EXPECT_EQ(groups[i].suggestions_size(), 0) << i;
  }
  const RunActions run = BuildRunActions(&groups, 100'000'000);
  EXPECT_TRUE(run.actions.empty() && run.minor_actions.empty());
  // Without a configuration that ran on after the others, nothing is called autotuning.
  for (auto& g : groups) {
    g.set_tail_launches(0);
    g.set_autotuner("");
    g.set_autotuning_trial(false);
  }
  ApplyOwnerAndEvidence(&groups, 100'000'000);
  for (const auto& g : groups) EXPECT_FALSE(g.autotuning_trial());
}

// XLA's autotuner: one name in several compiled variants, owned by XLA through the loader.
TEST(MeasuredEvidence, XlaVariantsAreXlasAndTrials) {
  std::vector<occtrace::KernelGroup> groups;
  for (int r : {30, 90, 218}) {
    occtrace::KernelGroup g = Group("gemm_fusion_dot_4", 256, 128, 2, 100'000.0 - r);
    g.set_loader("jaxlib/xla_extension.so");
    g.set_registers_per_thread(r);
    g.set_tail_launches(r == 90 ? 300 : 0);
    groups.push_back(g);
  }
  ApplyOwnerAndEvidence(&groups, 10'000'000);
  for (const auto& g : groups) {
    EXPECT_EQ(g.origin(), "vendor");
    EXPECT_EQ(g.owner_library(), "XLA (jaxlib)");
    EXPECT_EQ(g.owner_evidence(), "loader");
    EXPECT_EQ(g.name_variants(), 3);
    EXPECT_EQ(g.autotuning_trial(), g.registers_per_thread() != 90);
    EXPECT_EQ(Measured(g), nullptr);
  }
}

// A kernel near a throughput ceiling gets no occupancy suggestion: its own evidence says more
// resident warps will not help, and the verdict says what would.
TEST(MeasuredEvidence, NoOccupancyActionNearAThroughputCeiling) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z4copyPfPKf", 65536, 256, 200, 50'000)};
  auto* s = groups[0].add_suggestions();
  s->set_kind("register_cap");
  s->set_registers_per_thread(32);
  s->set_text("Cap registers at 32/thread: __launch_bounds__(256, 8)");
  groups[0].set_recoverable_ns_upper_bound(1'000'000);
  groups[0].set_priority(3);
  auto* t = groups[0].mutable_achieved()->mutable_throughput();
  t->set_verdict("near_ceiling");
  t->set_summary("near the DRAM ceiling (DRAM at 86.8 % of peak): fewer bytes will help");
  ApplyOwnerAndEvidence(&groups, 10'000'000);
  EXPECT_EQ(groups[0].suggestions_size(), 0);
  EXPECT_EQ(groups[0].recoverable_ns_upper_bound(), 0);
  bool said = false;
  for (const auto& issue : groups[0].issues()) said |= issue.find("DRAM ceiling") != std::string::npos;
  EXPECT_TRUE(said);
  const RunActions run = BuildRunActions(&groups, 10'000'000);
  EXPECT_TRUE(run.actions.empty() && run.minor_actions.empty());
}

// Nobody identified the owner (no loader: older traces, Nsight Systems and torch.profiler
// exports): a configuration measured 3.3x faster on the same work is still the advice, first and
// as the action, with the owner caveat; the model's suggestion comes after it. Gain: (40 - 12) µs
// x 20 launches = 560 µs.
TEST(MeasuredEvidence, UnknownOwnersKeepTheMeasuredComparisonWithTheCaveat) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z5scalePfif", 65536, 64, 20, 40'000),
                                               Group("_Z5scalePfif", 16384, 256, 20, 12'000)};
  for (auto& g : groups) g.clear_loader();
  auto* s = groups[0].add_suggestions();
  s->set_kind("block_size");
  s->set_block_size(128);
  s->set_text("Use 128 threads per block");
  ApplyOwnerAndEvidence(&groups, 1'040'000);
  EXPECT_EQ(groups[0].origin(), "unknown");
  ASSERT_EQ(groups[0].suggestions_size(), 2);
  EXPECT_EQ(groups[0].suggestions(0).kind(), "measured_config");
  EXPECT_EQ(groups[0].suggestions(1).kind(), "block_size");
  for (const auto& suggestion : groups[0].suggestions()) {
    EXPECT_EQ(suggestion.text().rfind("Owner unknown", 0), 0u) << suggestion.text();
  }
  EXPECT_EQ(groups[0].measured_gain_ns(), 560'000);
  RunActions run = BuildRunActions(&groups, 1'040'000);
  ASSERT_EQ(run.actions.size(), 1u);
  EXPECT_EQ(run.actions[0].gain_kind(), "measured");
  EXPECT_EQ(run.actions[0].gain_ns(), 560'000);
  EXPECT_NE(run.actions[0].change().find("<<<16384, 256>>>"), std::string::npos) << run.actions[0].change();
  EXPECT_EQ(run.actions[0].change().rfind("Owner unknown", 0), 0u) << run.actions[0].change();
}

// torch.profiler traces carry no mangled names: two Inductor kernels with the same registers and
// the same 65,536 threads are two functions, never one's measured alternative; the same name at
// two block sizes still is.
TEST(MeasuredEvidence, WithoutMangledNamesTheNameTellsFunctionsApart) {
  std::vector<occtrace::KernelGroup> groups = {Group("triton_per_fused_softmax_3", 2048, 32, 10, 9'000),
                                               Group("triton_per_fused_layer_norm_0", 2048, 32, 10, 6'500),
                                               Group("triton_poi_fused_gelu_1", 512, 128, 10, 9'000),
                                               Group("triton_poi_fused_gelu_1", 256, 256, 10, 4'000)};
  for (auto& g : groups) {
    g.set_short_name(g.mangled_name());
    g.clear_mangled_name();
  }
  ApplyOwnerAndEvidence(&groups, 285'000);
  EXPECT_EQ(Measured(groups[0]), nullptr) << "another kernel is no measured configuration of this one";
  EXPECT_EQ(groups[0].measured_points_size(), 0);
  ASSERT_NE(Measured(groups[2]), nullptr);
  EXPECT_EQ(groups[2].measured_gain_ns(), 10 * (9'000 - 4'000));
}

// Measured evidence comes first whatever order the advisors added it in: every printer's "best
// suggestion" (CSV), list and chart read the suggestions in this order.
TEST(MeasuredEvidence, MeasuredConfigurationsComeBeforeTheModelAndAMeasuredGapBeforeBoth) {
  std::vector<occtrace::KernelGroup> groups = {Group("_Z5scalePfif", 65536, 64, 20, 40'000),
                                               Group("_Z5scalePfif", 16384, 256, 20, 12'000)};
  for (const char* kind : {"block_size", "register_cap"}) {
    auto* s = groups[0].add_suggestions();
    s->set_kind(kind);
    s->set_block_size(128);
  }
  ApplyOwnerAndEvidence(&groups, 1'040'000);
  ASSERT_EQ(groups[0].suggestions_size(), 3);
  EXPECT_EQ(groups[0].suggestions(0).kind(), "measured_config");
  EXPECT_EQ(groups[0].suggestions(1).kind(), "block_size");
  EXPECT_EQ(groups[0].suggestions(2).kind(), "register_cap");
}

// Launches that overlapped other kernels (launch_overlap.h): `overlapped_pct` of the group's
// time, `solo` of its launches alone at `solo_mean_ns`, beside streams 13..16.
void SetOverlap(occtrace::KernelGroup* g, double overlapped_pct, int64_t solo, double solo_mean_ns) {
  occtrace::LaunchOverlap* o = g->mutable_overlap();
  o->Clear();
  o->set_launches(g->launches());
  o->set_overlapped_pct(overlapped_pct);
  o->set_overlapped_ns(static_cast<int64_t>(overlapped_pct / 100 * static_cast<double>(g->total_ns())));
  o->set_solo_launches(solo);
  o->set_solo_mean_ns(solo_mean_ns);
  for (int64_t stream : {13, 14, 15, 16}) o->add_streams(stream);
}

// A user's report of 2026-11-28: one stencil on four concurrent streams, one block size each, 2,000
// launches each. Over all launches block 256 averages 145.9 us (60 % of its time overlapped) and
// block 512 75 us, which would advise 512; alone, 256 took 59.7 us (620 launches) and 512 63.5 us
// (900): neither is 10 % faster, so neither is told to change. Block 64 alone took 80 us (400
// launches): it is told to use 256, by the solo means, (80 - 59.7) us x 2,000 = 40.6 ms.
std::vector<occtrace::KernelGroup> StencilOnFourStreams() {
  const std::string k = "_Z8stencil5PKfPfii";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 256, 2000, 145'900), Group(k, 32768, 512, 2000, 75'000),
                                               Group(k, 262144, 64, 2000, 170'000)};
  SetOverlap(&groups[0], 60, 620, 59'700);
  SetOverlap(&groups[1], 40, 900, 63'500);
  SetOverlap(&groups[2], 70, 400, 80'000);
  return groups;
}

TEST(MeasuredEvidence, OverlappedLaunchesAreComparedByTheirSoloLaunches) {
  std::vector<occtrace::KernelGroup> groups = StencilOnFourStreams();
  ApplyOwnerAndEvidence(&groups, 780'000'000);
  EXPECT_EQ(Measured(groups[0]), nullptr) << "block 256 is not told to use 512: alone it is as fast";
  EXPECT_EQ(Measured(groups[1]), nullptr);
  const occtrace::Suggestion* s = Measured(groups[2]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->block_size(), 256);
  EXPECT_EQ(groups[2].measured_gain_ns(), (80'000 - 59'700) * 2000);
  EXPECT_NE(s->text().find("launches that ran alone: 620 of 2000 and 400 of 2000"), std::string::npos) << s->text();
  EXPECT_NE(s->text().find("Confidence: high"), std::string::npos) << s->text();
  // The measured points show the solo means the comparison used.
  ASSERT_EQ(groups[0].measured_points_size(), 3);
  EXPECT_DOUBLE_EQ(groups[0].measured_points(1).mean_ns(), 59'700);
  EXPECT_TRUE(groups[0].measured_points(1).solo());
}

// Too few solo launches on one side (5 of 2,000): the comparison includes contention. The
// suggestion stays in the kernel's section, says so, and its gain is not counted: no action.
TEST(MeasuredEvidence, OverlappedWithoutEnoughSoloLaunchesIsNotCountedAsMeasured) {
  std::vector<occtrace::KernelGroup> groups = StencilOnFourStreams();
  SetOverlap(&groups[2], 30, 5, 80'000);
  ApplyOwnerAndEvidence(&groups, 780'000'000);
  const occtrace::Suggestion* s = Measured(groups[2]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(groups[2].measured_gain_ns(), 0);
  EXPECT_NE(s->text().find("block 64: 30 % of its time overlapped other kernels (streams 13, 14, 15, 16)"),
            std::string::npos)
      << s->text();
  EXPECT_NE(s->text().find("Confidence: low"), std::string::npos) << s->text();
  const RunActions run = BuildRunActions(&groups, 780'000'000);
  for (const auto* list : {&run.actions, &run.minor_actions}) {
    for (const auto& a : *list) EXPECT_NE(a.gain_kind(), "measured") << a.change();
  }
}

// Both sides mostly overlapped with too few solo launches: nothing measured to compare; the
// kernel says why instead of suggesting.
TEST(MeasuredEvidence, BothMostlyOverlappedAreNotCompared) {
  std::vector<occtrace::KernelGroup> groups = StencilOnFourStreams();
  SetOverlap(&groups[0], 60, 3, 59'700);
  SetOverlap(&groups[1], 55, 4, 63'500);
  groups.pop_back();
  ApplyOwnerAndEvidence(&groups, 780'000'000);
  EXPECT_EQ(Measured(groups[0]), nullptr);
  EXPECT_EQ(groups[0].measured_gain_ns(), 0);
  bool said = false;
  for (const auto& issue : groups[0].issues()) said |= issue.find("not compared with block 512") != std::string::npos;
  EXPECT_TRUE(said);
}

// Overlap under 1 % of a configuration's time: every launch counts as alone (the mean over all).
TEST(MeasuredEvidence, NegligibleOverlapKeepsTheMeanOverAllLaunches) {
  const std::string k = "_Z5scalePfif";
  std::vector<occtrace::KernelGroup> groups = {Group(k, 65536, 64, 20, 40'000), Group(k, 16384, 256, 20, 12'000)};
  SetOverlap(&groups[0], 0.5, 2, 39'000);
  SetOverlap(&groups[1], 0.5, 2, 11'000);
  ApplyOwnerAndEvidence(&groups, 1'040'000);
  ASSERT_NE(Measured(groups[0]), nullptr);
  EXPECT_EQ(groups[0].measured_gain_ns(), 20 * (40'000 - 12'000));
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// The model's register cap for a kernel compiled with __launch_bounds__(1024) and launched with
// 1,024 threads at 40 registers on an H200. By hand: 40 x 32 = 1,280 registers per warp (already
// a multiple of the 256 allocation unit), 32 warps x 1,280 = 40,960 per block, so 1 block of
// 65,536 registers fits (50 % occupancy); 2 blocks need <= 32,768 per block, 1,024 per warp, 32
// per thread (100 %). __launch_bounds__(1024, 2) asks exactly that.
occtrace::KernelGroup BoundedKernel(int launch_bound, int block, int registers) {
  occtrace::KernelGroup g = Group("_Z5heavyPfi", 4096, block, 10, 50'000);
  g.set_launch_bounds_max_threads(launch_bound);
  LaunchParams l;
  l.block_threads = block;
  l.regs_per_thread = registers;
  const RegisterAdvice advice = AdviseRegisterCap(LookupGpu("H200").value(), l, 0).value();
  EXPECT_TRUE(advice.suggestion.has_value());
  occtrace::Suggestion* s = g.add_suggestions();
  s->set_kind("register_cap");
  s->set_registers_per_thread(advice.suggestion->registers_per_thread);
  s->set_predicted_blocks_per_sm(advice.suggestion->predicted_blocks_per_sm);
  s->set_predicted_occupancy_pct(advice.suggestion->predicted_occupancy_pct);
  s->set_text(advice.suggestion->text);
  return g;
}

TEST(MeasuredEvidence, RegisterCapBuildsOnTheCompiledLaunchBounds) {
  std::vector<occtrace::KernelGroup> groups = {BoundedKernel(1024, 1024, 40)};
  ApplyOwnerAndEvidence(&groups, 500'000);
  ASSERT_EQ(groups[0].origin(), "cuda_cpp");
  ASSERT_EQ(groups[0].suggestions_size(), 1);
  const std::string& text = groups[0].suggestions(0).text();
  EXPECT_EQ(groups[0].suggestions(0).registers_per_thread(), 32);
  EXPECT_NE(text.find("change __launch_bounds__(1024) to __launch_bounds__(1024, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("theoretical occupancy 50% → 100%"), std::string::npos) << text;
  // The user's own kernel: -maxrregcount is named, with its reach.
  EXPECT_NE(text.find("-maxrregcount=32 caps every kernel in the translation unit; prefer __launch_bounds__ on "
                      "this kernel"),
            std::string::npos)
      << text;
}

TEST(MeasuredEvidence, LaunchBoundsChangeKeepsTheBoundWhereTheThreadsDivide) {
  // Bound 1024, launched at 256 with 64 registers: 64 x 32 = 2,048 per warp, 8 warps = 16,384 per
  // block, 4 blocks (50 %); 5 blocks need <= 13,107 per block, 1,638 -> 1,536 per warp (6 x 256),
  // 48 per thread. 256 x 5 = 1,280 threads is no multiple of 1,024: the bound moves to 256.
  std::vector<occtrace::KernelGroup> groups = {BoundedKernel(1024, 256, 64)};
  ApplyOwnerAndEvidence(&groups, 500'000);
  ASSERT_EQ(groups[0].suggestions_size(), 1);
  EXPECT_EQ(groups[0].suggestions(0).registers_per_thread(), 48);
  EXPECT_NE(groups[0].suggestions(0).text().find(
                "change __launch_bounds__(1024) to __launch_bounds__(256, 5) (the bound lowered to the 256 threads"),
            std::string::npos)
      << groups[0].suggestions(0).text();
  // Bound 512, launched at 256, 40 registers: 8 warps x 1,280 = 10,240 per block, 6 blocks
  // (61,440; 75 %); 8 blocks need <= 8,192 per block, 1,024 per warp, 32 per thread. 256 x 8 =
  // 2,048 = 512 x 4.
  groups = {BoundedKernel(512, 256, 40)};
  ApplyOwnerAndEvidence(&groups, 500'000);
  ASSERT_EQ(groups[0].suggestions_size(), 1);
  EXPECT_NE(groups[0].suggestions(0).text().find("change __launch_bounds__(512) to __launch_bounds__(512, 4)"),
            std::string::npos)
      << groups[0].suggestions(0).text();
}

TEST(MeasuredEvidence, MaxrregcountOnlyForTheUsersOwnCudaCpp) {
  // The same cap for a kernel nobody identified (no loader) and for a Numba kernel: no
  // -maxrregcount, a flag that would cap every kernel of a translation unit the user may not own.
  std::vector<occtrace::KernelGroup> groups = {BoundedKernel(0, 256, 64)};
  groups[0].clear_loader();
  groups.push_back(BoundedKernel(0, 256, 64));
  groups[1].set_mangled_name("_ZN8__main__5saxpyB2v1B96cw51cXTLSUwv1sDU");
  groups[1].set_name("__main__::saxpy[abi:v1][abi:cw51cXTLSUwv1sDU](float)");
  groups[1].set_loader("_ctypes.cpython-312-x86_64-linux-gnu.so");
  ApplyOwnerAndEvidence(&groups, 500'000);
  ASSERT_EQ(groups[0].origin(), "unknown");
  ASSERT_EQ(groups[1].origin(), "numba");
  for (const auto& g : groups) {
    ASSERT_EQ(g.suggestions_size(), 1) << g.origin();
    EXPECT_EQ(g.suggestions(0).text().find("maxrregcount"), std::string::npos) << g.suggestions(0).text();
  }
}

TEST(MeasuredEvidence, HeaderLibraryKernelInTheUsersBinaryGetsNoLaunchAdvice) {
  // thrust::sort's onesweep pass, as nvcc 13.0 compiles it into the user's program (CCCL 3.0.1,
  // cub/cub/device/dispatch/kernels/kernel_radix_sort.cuh): 56 registers at its policy's 384
  // threads. The model's cap would be __launch_bounds__(384, 4) / -maxrregcount=40.
  const std::string onesweep =
      "_ZN3cub17CUB_300001_SM_9006detail10radix_sort29DeviceRadixSortOnesweepKernelINS1_5radix10policy_hubIjNS0_"
      "8NullTypeEyE10Policy1000ELNS0_9SortOrderE0EjS6_yiiNS1_21identity_decomposer_tEEEvPT5_SC_PT3_PKSD_PT1_PKSH_PT2_"
      "PKSL_T4_iiT6_";
  std::vector<occtrace::KernelGroup> groups = {BoundedKernel(384, 384, 56)};
  groups[0].set_mangled_name(onesweep);
  groups[0].set_name(onesweep);
  groups[0].set_loader("thrust_prog");
  ApplyOwnerAndEvidence(&groups, 500'000);
  EXPECT_EQ(groups[0].origin(), "header_library");
  EXPECT_EQ(groups[0].owner_library(), "CUB");
  EXPECT_FALSE(groups[0].tunable());
  EXPECT_EQ(groups[0].suggestions_size(), 0);
  ASSERT_GE(groups[0].issues_size(), 1);
  const std::string& issue = groups[0].issues(groups[0].issues_size() - 1);
  EXPECT_NE(issue.find("a CUB kernel compiled into thrust_prog picks its own launch configuration; what you "
                       "control is the algorithm call and its inputs"),
            std::string::npos)
      << issue;
}

}  // namespace
}  // namespace occ
