// `occ-report calc` run in-process through occ::RunOccReport.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <sstream>

#include "analyzer/cli/occ_report.h"
#include "schema/occupancy.pb.h"

namespace occ {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun Calc(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.emplace_back("calc");
  for (const auto& a : args) argv.push_back(a);
  std::ostringstream out, err;
  const int code = RunOccReport(argv, out, err);
  return {code, out.str(), err.str()};
}

TEST(CalcCli, TextReport) {
  const CliRun r = Calc({"--gpu", "H100", "--block", "256", "--regs", "44", "--grid", "1000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("Theoretical occupancy  62.5%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limited by registers: 44 regs/thread"), std::string::npos);
  EXPECT_NE(r.out.find("Occupancy vs block size"), std::string::npos);
  EXPECT_NE(r.out.find("<- current"), std::string::npos);
  EXPECT_NE(r.out.find("Cap registers at 40"), std::string::npos);  // 40 regs -> 6 blocks (75 %)
  EXPECT_NE(r.out.find("Waves: 1.52"), std::string::npos);          // 1000 / (5 x 132)
}

TEST(CalcCli, JsonUsesProtoFieldNames) {
  const CliRun r = Calc({"--gpu", "RTX 4090", "--block", "256", "--regs", "16", "--smem-config", "16384",
                      "--grid", "65535", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* field : {"\"theoretical_occupancy_pct\"", "\"active_blocks_per_sm\"",
                            "\"active_warps_per_sm\"", "\"block_limit_warps\"",
                            "\"block_limit_registers\"", "\"block_limit_shared_mem\"",
                            "\"block_limit_blocks\"", "\"block_limit_barriers\"",
                            "\"limiting_factors\"", "\"suggestions\"", "\"ncu_block_limit_shared_mem\""}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field;
  }
  occtrace::OccupancyCalc calc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &calc).ok());
  // Nsight Compute on an RTX 4090 (occupancy-model.md §5.2): Regs 16, Smem 16, Warps 6, SM 24.
  EXPECT_EQ(calc.block_limit_registers(), 16);
  EXPECT_EQ(calc.ncu_block_limit_shared_mem(), 16);
  EXPECT_EQ(calc.block_limit_warps(), 6);
  EXPECT_EQ(calc.block_limit_blocks(), 24);
  EXPECT_DOUBLE_EQ(calc.theoretical_occupancy_pct(), 100.0);
  EXPECT_NEAR(calc.waves().waves_per_sm(), 85.33, 0.005);
  ASSERT_EQ(calc.limiting_factors_size(), 1);
  EXPECT_EQ(calc.limiting_factors(0), "warps");
}

TEST(CalcCli, BlockDimsSmemAndBarriers) {
  const CliRun r = Calc({"--gpu", "sm_90", "--block", "32x8", "--regs", "16", "--smem-dynamic", "100K",
                      "--opt-in", "--barriers", "16", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  occtrace::OccupancyCalc calc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &calc).ok());
  EXPECT_EQ(calc.block_size(), 256);
  EXPECT_EQ(calc.dynamic_shared_mem(), 102400);
  EXPECT_TRUE(calc.opt_in());
  // 100 KiB + 1 KiB reserve = 103,424 B -> 2 blocks in 228 KiB; 16 barriers -> 64 / 16 = 4.
  EXPECT_EQ(calc.block_limit_shared_mem(), 2);
  EXPECT_EQ(calc.block_limit_barriers(), 4);
  EXPECT_EQ(calc.active_blocks_per_sm(), 2);
}

// The "Barriers" row is Nsight Compute's Block Limit Barriers, as in the reports. Expected
// values: Nsight Compute on an H100, B=256, 0 B shared memory, 1/4/16 named barriers → 32/16/4
// (occupancy-model.md §5.3): cuda_occupancy.h's 64 for one barrier is never shown.
TEST(CalcCli, BarrierRowIsNsightComputes) {
  for (const auto& [barriers, expected] : std::vector<std::pair<std::string, std::string>>{
           {"1", "32"}, {"4", "16"}, {"16", "4"}}) {
    const CliRun r = Calc({"--gpu", "H100", "--block", "256", "--regs", "16", "--barriers", barriers});
    ASSERT_EQ(r.code, 0) << r.err;
    const size_t row = r.out.find("  Barriers ");
    ASSERT_NE(row, std::string::npos) << r.out;
    const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
    EXPECT_NE(line.find(" " + expected), std::string::npos) << barriers << " barriers: " << line;
    EXPECT_EQ(line.find("64"), std::string::npos) << line;
  }
}

// Advice printed once: the register verdict that is suggestion 1 refers to it.
TEST(CalcCli, RegisterAdvicePrintedOnce) {
  const CliRun r = Calc({"--gpu", "H100", "--block", "256", "--regs", "64", "--grid", "1000"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string cap = "Cap registers at 48/thread";  // 48 regs × 256 → 5 blocks (65,536 / 12,288)
  const size_t first = r.out.find(cap);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(cap, first + 1), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Registers: advice 1 above"), std::string::npos) << r.out;
}

TEST(CalcCli, HelpExitsZero) {
  const CliRun r = Calc({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--smem-config"), std::string::npos);
}

// Every bad input: exit code 2, nothing on stdout, exactly one line on stderr naming the value.
TEST(CalcCli, BadInputExitsTwoWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--gpu", "H100", "--block", "0"}, "0"},
      {{"--gpu", "H100", "--block", "1025"}, "1024"},
      {{"--gpu", "H100", "--block", "2048"}, "2048"},
      {{"--gpu", "H100", "--block", "32x32x2"}, "2048"},
      {{"--gpu", "H100", "--block", "abc"}, "abc"},
      {{"--gpu", "H100", "--block", "-5"}, "-5"},
      {{"--gpu", "H100", "--block", "256", "--regs", "256"}, "255"},
      {{"--gpu", "H100", "--block", "256", "--regs", "12abc"}, "12abc"},
      {{"--gpu", "H100", "--block", "256", "--regs", "99999999999999999999"}, "99999999999999999999"},
      {{"--gpu", "H100", "--block", "256", "--smem-dynamic", "300000", "--opt-in"}, "232448"},
      {{"--gpu", "H100", "--block", "256", "--smem-dynamic", "60000"}, "49152"},
      {{"--gpu", "H100", "--block", "256", "--smem-static", "50000"}, "49152"},
      {{"--gpu", "H100", "--block", "256", "--smem-dynamic", "1.5K"}, "1.5K"},
      {{"--gpu", "H100", "--block", "256", "--smem-config", "512", "--smem-static", "4096"}, "512"},
      {{"--gpu", "H100", "--block", "256", "--carveout", "101"}, "101"},
      {{"--gpu", "H100", "--block", "256", "--barriers", "17"}, "17"},
      {{"--gpu", "H100", "--block", "256", "--grid", "0"}, "0"},
      {{"--gpu", "H100", "--block", "256", "--format", "xml"}, "xml"},
      {{"--gpu", "H1000", "--block", "256"}, "H1000"},
      {{"--gpu", "sm_42", "--block", "256"}, "4.2"},
      {{"--gpu", "sm_88", "--block", "256"}, "--sms"},
      {{"--block", "256"}, "--gpu"},
      {{"--gpu", "H100"}, "--block"},
      {{"--gpu", "H100", "--block", "256", "stray"}, "stray"},
  };
  for (const auto& [args, needle] : cases) {
    const CliRun r = Calc(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.code, kExitBadInput) << joined << "-> " << r.err;
    EXPECT_TRUE(r.out.empty()) << joined;
    ASSERT_FALSE(r.err.empty()) << joined;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << joined << "-> " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << joined << "-> " << r.err;
  }
}

}  // namespace
}  // namespace occ
