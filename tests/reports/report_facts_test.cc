#include "reports/report_facts.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

using testing::ParseReport;

TEST(FindDeviceTest, MatchesFileAndOrdinal) {
  const occtrace::Report report = ParseReport(R"pb(
    files { path: "a.db" } files { path: "b.db" }
    devices { file_index: 0 device_id: 0 name: "A0" }
    devices { file_index: 1 device_id: 0 name: "B0" }
    devices { file_index: 1 device_id: 1 name: "B1" }
    groups { file_index: 1 device_id: 1 }
    groups { file_index: 1 device_id: 0 }
    groups { file_index: -1 device_id: 0 }
    groups { file_index: 0 device_id: 1 }
  )pb");
  EXPECT_EQ(FindDevice(report, report.groups(0))->name(), "B1");
  EXPECT_EQ(FindDevice(report, report.groups(1))->name(), "B0");
  EXPECT_EQ(FindDevice(report, report.groups(2))->name(), "A0");  // merged: first with the ordinal
  EXPECT_EQ(FindDevice(report, report.groups(3)), nullptr);        // file 0 has no device 1
}

TEST(FindDeviceTest, WhatIfDeviceWins) {
  const occtrace::Report report = ParseReport(R"pb(
    what_if_gpu: "NVIDIA A100 SXM (sm_80, 108 SMs)"
    devices { file_index: 0 device_id: 0 name: "H100" }
    devices { file_index: -1 device_id: -1 name: "A100" }
    groups { file_index: 0 device_id: 0 }
  )pb");
  EXPECT_EQ(FindDevice(report, report.groups(0))->name(), "A100");
  EXPECT_EQ(DeviceTag(report, report.devices(1)), "what-if");
  EXPECT_EQ(DeviceTag(report, report.devices(0)), "device 0");
}

TEST(ReportFactsTest, DeviceDescriptions) {
  const occtrace::Report report = ParseReport(R"pb(
    devices {
      name: "NVIDIA H100 80GB HBM3" cc_major: 9 cc_minor: 0 num_sms: 132 max_warps_per_sm: 64
      max_blocks_per_sm: 32 regs_per_sm: 65536 smem_per_sm: 233472 smem_per_block_optin: 232448
      reserved_smem_per_block: 1024 source: SOURCE_ARCH_TABLE defaulted_fields: "reserved_smem_per_block"
    }
  )pb");
  const occtrace::Device& d = report.devices(0);
  EXPECT_EQ(DeviceTitle(d), "NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs)");
  EXPECT_EQ(DeviceLimits(d), "64 warps/SM, 32 blocks/SM, 65,536 registers/SM, 228 KiB shared memory/SM "
                             "(227 KiB opt-in per block, 1 KiB reserved per block)");
  EXPECT_EQ(DeviceProvenance(d), "limits not recorded in the trace were taken from the built-in "
                                 "architecture table: reserved_smem_per_block");
}

TEST(ReportFactsTest, TopTitle) {
  EXPECT_EQ(TopTitle(ParseReport("groups {} groups {} groups_total: 120")),
            "Top 2 of 120 kernel configurations");
  EXPECT_EQ(TopTitle(ParseReport("groups {} groups {} groups_total: 2")), "Top 2 kernel configurations");
  EXPECT_EQ(TopTitle(ParseReport("groups {} groups_total: 1")), "The kernel configuration");
}

TEST(ReportFactsTest, LimitsAndLabels) {
  EXPECT_EQ(BlockLimitText(INT_MAX), "no limit");
  EXPECT_EQ(BlockLimitText(3), "3");
  EXPECT_EQ(LimiterLabel("shared_memory"), "shared memory");
  EXPECT_EQ(LimiterLabel("unjudged"), "not judged");
  EXPECT_EQ(LimiterShortLabel("blocks"), "blocks/SM");
  EXPECT_EQ(DimsText(1024, 1, 1), "1024");
  EXPECT_EQ(DimsText(64, 32, 1), "64×32");
  EXPECT_EQ(DimsText(8, 1, 4), "8×1×4");
  occtrace::Occupancy occ;
  occ.set_block_limit_shared_mem(228);
  occ.set_ncu_block_limit_shared_mem(32);
  EXPECT_EQ(SharedMemLimitText(occ), "32 (executed carveout; 228 at the largest carveout)");
  occ.set_ncu_block_limit_shared_mem(0);  // executed carveout unknown: the model's figure
  EXPECT_EQ(SharedMemLimitText(occ), "228");
}

TEST(ReportFactsTest, WavesAndAchieved) {
  const occtrace::Report report = ParseReport(R"pb(
    groups { waves_per_sm: 8.14 full_waves: 8 tail_blocks: 57 tail_pct: 11.1 }
    groups { waves_per_sm: 0.48 full_waves: 0 tail_blocks: 128 }
    groups { waves_per_sm: 2 full_waves: 2 tail_blocks: 0
             achieved { samples: 0 not_measured_reason: "graph launch" } }
    groups { achieved { samples: 3 mean_pct: 40 min_pct: 39 max_pct: 41.5 } }
  )pb");
  EXPECT_EQ(WavesText(report.groups(0)),
            "8.14 (8 full waves + a partial wave of 57 blocks; the tail can be up to 11% of the runtime)");
  EXPECT_EQ(WavesText(report.groups(1)),
            "0.48 (less than one full wave: some SMs stay idle or under-filled)");
  EXPECT_EQ(WavesText(report.groups(2)), "2.00");
  EXPECT_EQ(AchievedText(report.groups(2)), "not measured: graph launch");
  EXPECT_FALSE(HasAchieved(report.groups(2)));
  EXPECT_EQ(AchievedText(report.groups(3)), "40.0% (replay: mean of 3 launches, min 39.0%, max 41.5%)");
}

TEST(ReportFactsTest, RecoverableIsAlwaysAnUpperBound) {
  EXPECT_EQ(RecoverableText(246666666), "up to 246.7 ms (upper bound)");
  EXPECT_EQ(RecoverableText(0), "none (no occupancy headroom)");
}

TEST(ReportFactsTest, DiffChange) {
  const occtrace::Report report = ParseReport(R"pb(
    diff {
      total_ns_before: 2250000 total_ns_after: 1695000
      changed_kernels: 3 changed_delta_ns: -560000 same_kernels: 1 same_delta_ns: 5000
      rows { status: "changed" total_ns_before: 1600000 total_ns_after: 1050000
             config_before: "grid 2048x1x1, 128 regs" config_after: "grid 2048x1x1, 64 regs" }
      rows { status: "same" total_ns_before: 600000 total_ns_after: 605000 config_before: "c" config_after: "c" }
      rows { status: "new" total_ns_after: 40000 config_after: "n" }
      rows { status: "gone" total_ns_before: 50000 config_before: "g" }
    }
  )pb");
  const occtrace::Diff& d = report.diff();
  EXPECT_EQ(DiffTimeChange(d.rows(0)), "-34.4%");  // (1.05 - 1.6) / 1.6
  EXPECT_EQ(DiffTimeChange(d.rows(1)), "+0.8%");
  EXPECT_EQ(DiffTimeChange(d.rows(2)), "");
  EXPECT_EQ(DiffTimeChange(d.rows(3)), "");
  EXPECT_EQ(DiffConfigChange(d.rows(0)), "was grid 2048x1x1, 128 regs; now grid 2048x1x1, 64 regs");
  EXPECT_EQ(DiffConfigChange(d.rows(1)), "");
  EXPECT_EQ(DiffConfigChange(d.rows(2)), "");
  // 2.25 ms → 1.695 ms: 555 µs less, -24.7 % (555 / 2250).
  EXPECT_EQ(DiffTotalText(d), "2.25 ms → 1.70 ms: 555.0 µs less GPU time (-24.7%)");
  EXPECT_EQ(DiffChangedText(d), "3 kernels (configuration or occupancy changed, new or gone): -560.0 µs");
  EXPECT_EQ(DiffSameText(d), "1 kernel in the same configuration: +5.00 µs (run-to-run variation, or other work)");
  EXPECT_EQ(SignedDuration(0), "±0");
}

TEST(ReportFactsTest, DistinctFileNamesKeepWhatDiffers) {
  // Two ranks of one run in one directory: the directory goes, the names fit.
  EXPECT_EQ(DistinctFileNames({"/scratch/me/runs/ddp_slow/rank0.db", "/scratch/me/runs/ddp_slow/rank1.db"}, 30),
            (std::vector<std::string>{"rank0.db", "rank1.db"}));
  // Long names that differ only past the 9th character: the cut keeps the tail.
  EXPECT_EQ(DistinctFileNames({"/d/ddp_slow_rank_experiment_0.pt.trace.json.gz",
                               "/d/ddp_slow_rank_experiment_1.pt.trace.json.gz"},
                              20),
            (std::vector<std::string>{"…_0.pt.trace.json.gz", "…_1.pt.trace.json.gz"}));
  // A long common suffix: the part from the first difference on.
  EXPECT_EQ(DistinctFileNames({"ab0_" + std::string(40, 'x'), "ab1_" + std::string(40, 'x')}, 10),
            (std::vector<std::string>{"…0_xxxxxx…", "…1_xxxxxx…"}));
  // One file, or no directory in common: unchanged.
  EXPECT_EQ(DistinctFileNames({"/a/x.db"}, 5), (std::vector<std::string>{"/a/x.db"}));
  EXPECT_EQ(DistinctFileNames({"trace-0.db", "trace-1.db"}, 40),
            (std::vector<std::string>{"trace-0.db", "trace-1.db"}));
}

TEST(ReportFactsTest, LimiterLine) {
  const occtrace::Report report = ParseReport(R"pb(
    groups { occupancy { theoretical_occupancy_pct: 37.5 active_warps_per_sm: 24 max_warps_per_sm: 64
             limiter_sentence: "limited by registers: 67 regs/thread" } }
    groups { occupancy { limiter_sentence: "cannot run: 1024 threads x 255 registers exceed the register file" } }
  )pb");
  EXPECT_EQ(LimiterLine(report.groups(0)),
            "Theoretical occupancy 37.5% (24 of 64 warps per SM) is limited by registers: 67 regs/thread.");
  EXPECT_EQ(LimiterLine(report.groups(1)),
            "Cannot run: 1024 threads x 255 registers exceed the register file.");
}

}  // namespace
}  // namespace occ::reports
