#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

using ::testing::HasSubstr;
using testing::LoadReport;
using testing::ParseReport;
using testing::Render;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Cell separators of a GFM table row: pipes not escaped with a backslash.
int CountSeparators(const std::string& row) {
  int n = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) ++n;
  }
  return n;
}

// Removes inline code spans (CommonMark: a backtick run closed by a run of the same length).
std::string StripCodeSpans(const std::string& line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '`') {
      out += line[i++];
      continue;
    }
    size_t run = 0;
    while (i + run < line.size() && line[i + run] == '`') ++run;
    const std::string fence(run, '`');
    size_t close = line.find(fence, i + run);
    while (close != std::string::npos && close + run < line.size() && line[close + run] == '`') {
      close = line.find(fence, close + run + 1);
    }
    if (close == std::string::npos) {
      out += line.substr(i);
      break;
    }
    i = close + run;
  }
  return out;
}

TEST(MarkdownPrinterTest, EveryTableIsWellFormed) {
  const std::vector<std::string> lines = Lines(Render("markdown", LoadReport("h100_report.textproto")));
  int tables = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] != '|' || (i > 0 && !lines[i - 1].empty() && lines[i - 1][0] == '|')) {
      continue;
    }
    ++tables;
    ASSERT_LT(i + 1, lines.size());
    EXPECT_TRUE(std::regex_match(lines[i + 1], std::regex("(\\| -{3,}:? )+\\|"))) << lines[i + 1];
    const int columns = CountSeparators(lines[i]);
    for (size_t k = i; k < lines.size() && !lines[k].empty() && lines[k][0] == '|'; ++k) {
      EXPECT_EQ(CountSeparators(lines[k]), columns) << lines[k];
      EXPECT_EQ(lines[k].back(), '|') << lines[k];
    }
  }
  // Run facts, top table, one metric table per judged top kernel, limiter shares, unjudged.
  EXPECT_EQ(tables, 1 + 1 + 3 + 1 + 1);
}

TEST(MarkdownPrinterTest, NoRawHtmlOutsideCodeSpans) {
  const std::string md = Render("markdown", LoadReport("h100_report.textproto"));
  for (const std::string& line : Lines(md)) {
    const std::string prose = StripCodeSpans(line);
    EXPECT_FALSE(std::regex_search(prose, std::regex("(^|[^\\\\])<[A-Za-z/!?]"))) << line;
    EXPECT_FALSE(std::regex_search(prose, std::regex("(^|[^\\\\])&[A-Za-z#]"))) << line;
  }
  // The hostile kernel name is present, inside a code span with its pipe escaped.
  EXPECT_THAT(md, HasSubstr("| `evil<\"</script><img src=x onerror=alert(1)>\", 'q' & co>` |"));
}

TEST(MarkdownPrinterTest, SummaryComesFirstAndIsSelfDescribing) {
  const std::string md = Render("markdown", LoadReport("h100_report.textproto"));
  EXPECT_EQ(md.rfind("# Occupancy report: NVIDIA H100 80GB HBM3\n\n**Summary:** 61.2% of 1.85 s GPU "
                     "time runs below 50% theoretical occupancy.",
                     0),
            0u);
  EXPECT_THAT(md, HasSubstr("achieved (measured) 41.9%"));
  EXPECT_THAT(md, HasSubstr("Recoverable: up to 412.0 ms by the occupancy model (an upper bound); the sum of the actions"));
  EXPECT_THAT(md, HasSubstr("| Tool | occ-report 0.1.0 |"));
  EXPECT_THAT(md, HasSubstr("| GPU | NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs); 64 warps/SM"));
  EXPECT_THAT(md, HasSubstr("| Input | `runs/train_step.db` (occtrace trace, schema 1, 48,213 launches"));
  EXPECT_THAT(md, HasSubstr("| Command | `python train.py --batch 64 --steps 20 --tag \"a\\|b\"` |"));
  EXPECT_LT(md.find("## Top 3 of 120 kernel configurations"), md.find("### #1 "));
}

TEST(MarkdownPrinterTest, NsightComputeStyleMetrics) {
  const std::string md = Render("markdown", LoadReport("h100_report.textproto"));
  EXPECT_THAT(md, HasSubstr("| Metric | Value |\n| --- | ---: |\n| Theoretical Occupancy | 37.50 % |\n"
                            "| Theoretical Active Warps per SM | 24 of 64 |\n"
                            "| Achieved Occupancy (replay) | 35.20 % |\n"));
  EXPECT_THAT(md, HasSubstr("| Block Limit Registers | 3 |\n"));
  EXPECT_THAT(md, HasSubstr("| Block Limit Shared Mem | 32 (executed carveout; 228 at the largest carveout) |\n"));
  EXPECT_THAT(md, HasSubstr("| Block Limit Warps | 8 |\n| Block Limit SM | 32 |\n| Block Limit Barriers | 32 |\n"));
  EXPECT_THAT(md, HasSubstr("| Registers Per Thread | 67 (72 allocated) |\n"));
  EXPECT_THAT(md, HasSubstr("| Waves Per SM | 8.14 |\n"));
  EXPECT_THAT(md, HasSubstr("| Achieved Occupancy | not measured: graph launch (the range profiler"));
  EXPECT_THAT(md, HasSubstr("> **Limiter:** Theoretical occupancy 37.5% (24 of 64 warps per SM) is "
                            "limited by registers: 67 regs/thread (72 allocated) × 256 threads → 3 "
                            "blocks/SM (of 32)."));
  EXPECT_THAT(md, HasSubstr("1. Cap registers at 64/thread (now 67): \\_\\_launch\\_bounds\\_\\_(256, 4) "
                            "or -maxrregcount=64 → 4 blocks/SM, theoretical occupancy 37.5% → 50%. "
                            "*Assumes: block size"));
}

TEST(MarkdownPrinterTest, FullNamesAndShortNamesInTheTable) {
  const std::string md = Render("markdown", LoadReport("h100_report.textproto"));
  EXPECT_THAT(md, HasSubstr("Full name: `void at::native::(anonymous namespace)::indexSelectLargeIndex<float"));
  EXPECT_THAT(md, HasSubstr("| 1 | `indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>` |"));
}

TEST(MarkdownPrinterTest, PipesInNamesDoNotBreakTables) {
  const std::string md = Render("markdown", ParseReport(R"pb(
    tool_version: "0.1.0"
    groups { rank: 1 name: "void k<a|b>(int)" judged: true limiting_factor: "warps" }
  )pb"));
  EXPECT_THAT(md, HasSubstr("| 1 | `k<a\\|b>` |"));
}

}  // namespace
}  // namespace occ::reports
