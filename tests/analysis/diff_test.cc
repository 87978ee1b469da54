// --diff (analyzer/analyze/diff.h): the rows, the totals and the "do these two traces compare?" rule.
// Expected values are worked out by hand from the inputs (GPU times given below).
#include "analyzer/analyze/diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_traces.h"

namespace occ {
namespace {

occtrace::KernelGroup Group(const std::string& name, int64_t total_ns, int regs = 32, double theo = 100) {
  occtrace::KernelGroup g;
  g.set_name(name);
  g.set_total_ns(total_ns);
  g.set_launches(1);
  g.set_grid_x(1024);
  g.set_grid_y(1);
  g.set_grid_z(1);
  g.set_block_x(256);
  g.set_block_y(1);
  g.set_block_z(1);
  g.set_registers_per_thread(regs);
  g.set_judged(true);
  g.mutable_occupancy()->set_theoretical_occupancy_pct(theo);
  return g;
}

DiffSide Side(std::vector<occtrace::KernelGroup> groups, const std::string& command = "",
              const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  DiffSide side;
  occtrace::InputFile f;
  f.set_path("t.db");
  f.set_command(command);
  side.files.push_back(f);
  for (const auto& g : groups) {
    side.total_ns += g.total_ns();
    side.launches += g.launches();
  }
  side.groups = std::move(groups);
  side.gpus = {gpu};
  return side;
}

TEST(DiffProgram, ScriptOrExecutableNeverArguments) {
  EXPECT_EQ(ProgramOf("python train.py --lr 3"), "train.py");
  EXPECT_EQ(ProgramOf("python3 -u /home/me/train.py --batch 128"), "train.py");
  EXPECT_EQ(ProgramOf("torchrun --nproc_per_node 2 train.py"), "train.py");
  EXPECT_EQ(ProgramOf("./bench --layers 24"), "bench");
  EXPECT_EQ(ProgramOf("/opt/app/bin/bench"), "bench");
  EXPECT_EQ(ProgramOf(""), "");
}

TEST(Diff, TotalsSplitIntoChangedAndSameAndRankChangedFirst) {
  // Before 1.0 + 0.5 + 0.2 ms; after: "a" from 64 to 32 registers (changed, 1.0 → 0.6 ms), "b"
  // the same (0.5 → 0.52 ms), "c" gone, "d" new (0.1 ms).
  const DiffSide before = Side({Group("a", 1'000'000, 64, 50), Group("b", 500'000), Group("c", 200'000)});
  const DiffSide after = Side({Group("a", 600'000, 32, 100), Group("b", 520'000), Group("d", 100'000)});
  const occtrace::Diff d = BuildDiff(before, after);
  EXPECT_EQ(d.total_ns_before(), 1'700'000);
  EXPECT_EQ(d.total_ns_after(), 1'220'000);
  EXPECT_EQ(d.changed_kernels(), 3);
  EXPECT_EQ(d.changed_delta_ns(), -400'000 - 200'000 + 100'000);
  EXPECT_EQ(d.same_kernels(), 1);
  EXPECT_EQ(d.same_delta_ns(), 20'000);
  EXPECT_EQ(d.changed_delta_ns() + d.same_delta_ns(), d.total_ns_after() - d.total_ns_before());
  ASSERT_EQ(d.rows_size(), 4);
  EXPECT_EQ(d.rows(0).name(), "a");  // -400 µs
  EXPECT_EQ(d.rows(0).status(), "changed");
  EXPECT_EQ(d.rows(1).name(), "c");  // -200 µs
  EXPECT_EQ(d.rows(1).status(), "gone");
  EXPECT_EQ(d.rows(2).name(), "d");  // +100 µs
  EXPECT_EQ(d.rows(2).status(), "new");
  EXPECT_EQ(d.rows(3).name(), "b");  // same configuration last, though +20 µs
  EXPECT_EQ(d.rows(3).status(), "same");
  // a and b ran in both: 1.5 of 1.7 ms before, 1.12 of 1.22 ms after.
  EXPECT_NEAR(d.common_time_pct_before(), 100.0 * 1.5 / 1.7, 1e-9);
  EXPECT_NEAR(d.common_time_pct_after(), 100.0 * 1.12 / 1.22, 1e-9);
  EXPECT_EQ(d.warnings_size(), 0);
}

TEST(Diff, AKernelInAnotherConfigurationTooIsChanged) {
  occtrace::KernelGroup second = Group("a", 100'000);
  second.set_grid_x(2048);
  const occtrace::Diff d = BuildDiff(Side({Group("a", 500'000)}), Side({Group("a", 500'000), second}));
  ASSERT_EQ(d.rows_size(), 1);
  EXPECT_EQ(d.rows(0).status(), "changed");
  EXPECT_NE(d.rows(0).config_after().find("(+1 more configuration)"), std::string::npos)
      << d.rows(0).config_after();
}

TEST(Diff, SameProgramOtherArgumentsDoesNotWarn) {
  const occtrace::Diff d = BuildDiff(Side({Group("a", 100)}, "python train.py --batch 64"),
                                     Side({Group("a", 90)}, "python3 train.py --batch 128 --compile"));
  EXPECT_EQ(d.warnings_size(), 0);
}

TEST(Diff, DifferentProgramsWarnWithTheirNames) {
  const occtrace::Diff d = BuildDiff(Side({Group("a", 100), Group("x", 100)}, "python train.py"),
                                     Side({Group("a", 100), Group("y", 100)}, "./bench"));
  ASSERT_EQ(d.warnings_size(), 1);
  EXPECT_NE(d.warnings(0).find("different programs: train.py before, bench after"), std::string::npos)
      << d.warnings(0);
  EXPECT_NE(d.warnings(0).find("50.0% of the GPU time before and 50.0% after"), std::string::npos)
      << d.warnings(0);
}

TEST(Diff, LittleCommonKernelTimeWarnsWithoutCommands) {
  // Nsight Systems exports record no command: the kernels decide. "shared" is 100 of 1000 ns
  // before (10 %) and 100 of 900 ns after (11.1 %): below half on both sides.
  const occtrace::Diff d = BuildDiff(Side({Group("gemm", 900), Group("shared", 100)}),
                                     Side({Group("conv", 800), Group("shared", 100)}));
  ASSERT_EQ(d.warnings_size(), 1);
  EXPECT_NE(d.warnings(0).find("may come from different programs or workloads"), std::string::npos)
      << d.warnings(0);
  EXPECT_NE(d.warnings(0).find("10.0% of the GPU time before and 11.1% after"), std::string::npos)
      << d.warnings(0);
  // A fix that replaced one kernel of three (40 % of the time) keeps 60 % common: no warning.
  const occtrace::Diff fix = BuildDiff(Side({Group("old", 400), Group("k1", 300), Group("k2", 300)}),
                                       Side({Group("new", 200), Group("k1", 300), Group("k2", 300)}));
  EXPECT_EQ(fix.warnings_size(), 0);
}

TEST(Diff, SameProgramMostlyOtherKernelsSaysSo) {
  // One script, the kernels both ran hold 100 of 1000 ns before and 100 of 900 ns after.
  const occtrace::Diff d = BuildDiff(Side({Group("gemm", 900), Group("shared", 100)}, "python train.py --model a"),
                                     Side({Group("conv", 800), Group("shared", 100)}, "python train.py --model b"));
  ASSERT_EQ(d.warnings_size(), 1);
  EXPECT_NE(d.warnings(0).find("the same program (train.py) ran mostly different kernels"), std::string::npos)
      << d.warnings(0);
}

TEST(Diff, DifferentGpusWarn) {
  const occtrace::Diff d = BuildDiff(Side({Group("a", 100)}, "./bench", "NVIDIA A100-SXM4-80GB"),
                                     Side({Group("a", 60)}, "./bench", "NVIDIA H100 80GB HBM3"));
  ASSERT_EQ(d.warnings_size(), 1);
  EXPECT_NE(d.warnings(0).find("different GPUs (NVIDIA A100-SXM4-80GB before, NVIDIA H100 80GB HBM3 after)"),
            std::string::npos)
      << d.warnings(0);
}

// The whole output of --diff is the comparison; options that order or hide a report's
// configurations do not apply (exit 2, one line); --kernel matching nothing is exit 3.
TEST(DiffCli, OptionsThatDoNotApplyAreRefused) {
  testing::ScratchDir dir;
  const std::string trace = dir.Path("t.db");
  testing::MakeOccTrace(trace, testing::H100TraceInserts());
  auto ok = testing::RunCli({trace, "--diff", trace});
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out.find("── Summary"), std::string::npos) << "the diff is printed alone";
  const size_t total = ok.out.find("GPU time     ");
  ASSERT_NE(total, std::string::npos) << ok.out;
  EXPECT_LT(std::count(ok.out.begin(), ok.out.begin() + static_cast<long>(total), '\n'), 12) << ok.out;
  // h100_trace.sql: 400+400+200+100+100+50+0+20+100+100 µs of kernel time, the profiled launch's
  // 52 µs from OCC_ACHIEVED: 1.52 ms on both sides.
  EXPECT_NE(ok.out.find("1.52 ms → 1.52 ms: unchanged"), std::string::npos) << ok.out;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--sort", "priority"}, {"--min-time-pct", "5"},
        {"--format", "trace", "-o", dir.Path("x.json")}}) {
    std::vector<std::string> args = {trace, "--diff", trace};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = testing::RunCli(args);
    EXPECT_EQ(r.code, 2) << extra[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--diff"), std::string::npos) << r.err;
  }
  auto none = testing::RunCli({trace, "--diff", trace, "--kernel", "no_such_kernel"});
  EXPECT_EQ(none.code, 3) << none.err;
}

}  // namespace
}  // namespace occ
