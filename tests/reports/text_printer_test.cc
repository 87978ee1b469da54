#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "reports/strings.h"
#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::LoadReport;
using testing::ParseReport;
using testing::Render;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The text with every run of whitespace (line wraps included) collapsed to one space, so
// sentences can be matched wherever the printer wrapped them.
std::string Flatten(const std::string& text) {
  return std::regex_replace(text, std::regex("\\s+"), " ");
}

std::string StripAnsi(const std::string& text) {
  return std::regex_replace(text, std::regex("\x1b\\[[0-9;]*m"), "");
}

// Display column just after the first `needle` in `line`, or -1.
int EndColumn(const std::string& line, const std::string& needle) {
  const size_t pos = line.find(needle);
  if (pos == std::string::npos) return -1;
  return DisplayWidth(line.substr(0, pos + needle.size()));
}

const std::string* FindLine(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const std::string& line : lines) {
    if (line.rfind(prefix, 0) == 0) return &line;
  }
  return nullptr;
}

TEST(TextPrinterTest, FitsTheWidth) {
  const occtrace::Report report = LoadReport("h100_report.textproto");
  for (const int width : {100, 132}) {
    for (const std::string& line : Lines(Render("text", report, false, width))) {
      EXPECT_LE(DisplayWidth(line), width) << line;
    }
  }
  // Widths below 80 are raised to 80 rather than producing an unreadable report.
  for (const std::string& line : Lines(Render("text", report, false, 40))) {
    EXPECT_LE(DisplayWidth(line), 80) << line;
  }
}

TEST(TextPrinterTest, ColorOnlyWhenAskedAndAlignmentUnchanged) {
  const occtrace::Report report = LoadReport("h100_report.textproto");
  const std::string plain = Render("text", report, false);
  const std::string colored = Render("text", report, true);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_NE(colored.find("\x1b[31m"), std::string::npos);  // 37.5% theoretical is below 50%
  EXPECT_EQ(StripAnsi(colored), plain);
}

TEST(TextPrinterTest, IsSelfDescribing) {
  const std::string text = Flatten(Render("text", LoadReport("h100_report.textproto")));
  EXPECT_THAT(text, HasSubstr("occ-report 0.1.0"));
  EXPECT_THAT(text, HasSubstr("NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs)"));
  EXPECT_THAT(text, HasSubstr("runs/train_step.db"));
  EXPECT_THAT(text, HasSubstr("command: python train.py --batch 64 --steps 20"));
  EXPECT_THAT(text, HasSubstr("CUDA driver 13.0, runtime 12.8, CUPTI 13.0"));
  EXPECT_THAT(text, HasSubstr("61.2% of GPU time runs below 50% theoretical occupancy"));
  EXPECT_THAT(text, HasSubstr("58.4% theoretical"));
  EXPECT_THAT(text, HasSubstr("41.9% achieved (measured"));
  EXPECT_THAT(text, HasSubstr("up to 412.0 ms by the occupancy model (an upper bound)"));
  EXPECT_THAT(text, HasSubstr("3 launch rows with zero duration were skipped"));
}

TEST(TextPrinterTest, TopTableIsAligned) {
  const std::vector<std::string> lines = Lines(Render("text", LoadReport("h100_report.textproto")));
  const std::string* header = FindLine(lines, "  # Kernel");
  ASSERT_NE(header, nullptr);
  const std::string* row1 = FindLine(lines, "  1 ");
  const std::string* row2 = FindLine(lines, "  2 ");
  const std::string* row3 = FindLine(lines, "  3 ");
  ASSERT_TRUE(row1 != nullptr && row2 != nullptr && row3 != nullptr);
  EXPECT_EQ(EndColumn(*header, "Theo%"), EndColumn(*row1, "37.5"));
  EXPECT_EQ(EndColumn(*header, "Theo%"), EndColumn(*row2, "12.5"));
  EXPECT_EQ(EndColumn(*header, "Theo%"), EndColumn(*row3, "100.0"));
  EXPECT_EQ(EndColumn(*header, "Ach%"), EndColumn(*row1, "35.2"));
  EXPECT_EQ(EndColumn(*header, "Launches"), EndColumn(*row3, "9,000"));
  EXPECT_EQ(EndColumn(*header, "Block"), EndColumn(*row3, " 100"));
  // Not measured is shown as a dash in the achieved column, never as 0.
  EXPECT_THAT(*row2, HasSubstr("–"));
  EXPECT_THAT(*row2, Not(HasSubstr(" 0.0 ")));
}

TEST(TextPrinterTest, ShortensLongNamesInTheTable) {
  const std::vector<std::string> lines = Lines(Render("text", LoadReport("h100_report.textproto")));
  const std::string* row1 = FindLine(lines, "  1 ");
  ASSERT_NE(row1, nullptr);
  EXPECT_THAT(*row1, HasSubstr("indexSelectLargeIndex<float, long,"));
  EXPECT_THAT(*row1, Not(HasSubstr("at::native")));
  EXPECT_THAT(*row1, Not(HasSubstr("TensorInfo")));
}

TEST(TextPrinterTest, KernelDetails) {
  const std::string text = Flatten(Render("text", LoadReport("h100_report.textproto")));
  EXPECT_THAT(text, HasSubstr("Theoretical occupancy 37.5% (24 of 64 warps per SM) is limited by"));
  EXPECT_THAT(text, HasSubstr("registers 3, shared memory 32 (executed carveout; 228 at the"));
  EXPECT_THAT(text, HasSubstr("35.2% (replay: mean of 8 launches, min 34.8%, max 35.9%"));
  EXPECT_THAT(text, HasSubstr("Launch grid 3225 × block 256 (256 threads), 67 registers/thread (72 "
                              "allocated), 0 B static + 0 B dynamic shared memory"));
  EXPECT_THAT(text, HasSubstr("Suggestions 1. Cap registers"));
  EXPECT_THAT(text, HasSubstr("2. Use 128 threads per block (grid 6450)"));
  EXPECT_THAT(text, HasSubstr("Recoverable up to 246.7 ms (upper bound)"));
  EXPECT_THAT(text, HasSubstr("Recoverable none (no occupancy headroom)"));
  EXPECT_THAT(text, HasSubstr("not measured: graph launch"));
  EXPECT_THAT(text, HasSubstr("8.14 (8 full waves + a partial wave of 57 blocks"));
  EXPECT_THAT(text, HasSubstr("1. Cap registers at 64/thread (now 67): __launch_bounds__(256, 4) or "
                              "-maxrregcount=64 → 4 blocks/SM, theoretical occupancy 37.5% → 50%."));
  EXPECT_THAT(text, HasSubstr("Assumes: block size and shared memory unchanged"));
  EXPECT_THAT(text, HasSubstr("grid of 128 blocks is smaller than the GPU's 132 SMs"));
}

TEST(TextPrinterTest, ListsUnjudgedKernelsWithTheirReason) {
  const std::string text = Flatten(Render("text", LoadReport("h100_report.textproto")));
  EXPECT_THAT(text, HasSubstr("Not judged (1 configuration, 1.0% of GPU time)"));
  EXPECT_THAT(text, HasSubstr("registers per thread not recorded (0 in the trace)"));
  EXPECT_THAT(text, HasSubstr("evil<"));
}

TEST(TextPrinterTest, LimiterShares) {
  const std::string text = Render("text", LoadReport("h100_report.textproto"));
  EXPECT_THAT(text, HasSubstr("GPU time by limiting factor"));
  EXPECT_THAT(text, ::testing::ContainsRegex("registers +62\\.0% +1\\.15 s  █+"));
}

TEST(TextPrinterTest, EmptyReportStillDescribesItself) {
  const std::string text = Render("text", ParseReport(R"pb(
    tool_version: "0.1.0"
    files { path: "empty.db" format: "occtrace" launches: 0 }
  )pb"));
  EXPECT_THAT(text, HasSubstr("occ-report 0.1.0"));
  EXPECT_THAT(text, HasSubstr("empty.db"));
  EXPECT_THAT(text, HasSubstr("(no device recorded)"));
  EXPECT_THAT(text, HasSubstr("(no kernel launches in this report)"));
}

TEST(TextPrinterTest, ControlCharactersInTraceStringsCannotMoveTheCursor) {
  const std::string text = Render("text", ParseReport(R"pb(
    tool_version: "0.1.0"
    files { path: "x.db" command: "evil\x1b[2J\rcmd" }
    groups { rank: 1 name: "void k\x1b[31m(int)" judged: true }
  )pb"));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace occ::reports
