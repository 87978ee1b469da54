#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

using ::testing::ElementsAre;
using testing::LoadReport;
using testing::ParseReport;
using testing::Render;

// A strict RFC 4180 reader: records end in CRLF, quoted fields may hold commas, quotes
// (doubled) and line breaks; an unquoted field may not hold a quote. Fails the test otherwise.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  size_t i = 0;
  bool at_field_start = true;
  while (i < text.size()) {
    if (at_field_start && text[i] == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) {
          ADD_FAILURE() << "unterminated quoted field";
          return records;
        }
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
      at_field_start = false;
      continue;
    }
    if (text[i] == ',') {
      record.push_back(field);
      field.clear();
      at_field_start = true;
      ++i;
    } else if (text[i] == '\r') {
      EXPECT_TRUE(i + 1 < text.size() && text[i + 1] == '\n') << "CR without LF";
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
      at_field_start = true;
      i += 2;
    } else {
      EXPECT_NE(text[i], '"') << "quote inside an unquoted field";
      EXPECT_NE(text[i], '\n') << "bare LF";
      field += text[i++];
      at_field_start = false;
    }
  }
  EXPECT_TRUE(record.empty() && field.empty()) << "last record lacks CRLF";
  return records;
}

size_t Column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

TEST(CsvPrinterTest, OneRowPerGroupWithNsysColumns) {
  const auto records = ParseCsv(Render("csv", LoadReport("h100_report.textproto")));
  ASSERT_EQ(records.size(), 1u + 3u + 1u);  // header, 3 top groups, 1 unjudged
  const std::vector<std::string>& header = records[0];
  EXPECT_THAT(std::vector<std::string>(header.begin() + 1, header.begin() + 11),
              ElementsAre("Name", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd",
                          "StcSMem (B)", "DymSMem (B)"));
  for (const auto& record : records) EXPECT_EQ(record.size(), header.size());

  const auto& row1 = records[1];
  EXPECT_EQ(row1[Column(header, "Rank")], "1");
  EXPECT_EQ(row1[Column(header, "GrdX")], "3225");
  EXPECT_EQ(row1[Column(header, "BlkX")], "256");
  EXPECT_EQ(row1[Column(header, "Reg/Trd")], "67");
  EXPECT_EQ(row1[Column(header, "Instances")], "1200");
  EXPECT_EQ(row1[Column(header, "Total Time (ns)")], "740000000");
  EXPECT_EQ(row1[Column(header, "Avg (ns)")], "616666.7");
  EXPECT_EQ(row1[Column(header, "Time (%)")], "40.00");
  EXPECT_EQ(row1[Column(header, "Theoretical Occupancy (%)")], "37.50");
  EXPECT_EQ(row1[Column(header, "Achieved Occupancy (measured) (%)")], "35.20");
  EXPECT_EQ(row1[Column(header, "Limiter")], "registers");
  EXPECT_EQ(row1[Column(header, "Block Limit Registers")], "3");
  EXPECT_EQ(row1[Column(header, "Block Limit Shared Mem")], "32");  // Nsight Compute's figure
  EXPECT_EQ(row1[Column(header, "Waves Per SM")], "8.14");
  EXPECT_EQ(row1[Column(header, "Recoverable Time Upper Bound (ns)")], "246666666");
  EXPECT_EQ(row1[Column(header, "GPU")], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(row1[Column(header, "CC")], "9.0");
  EXPECT_EQ(row1[Column(header, "SMs")], "132");
  EXPECT_EQ(row1[Column(header, "Input")], "runs/train_step.db");
  EXPECT_EQ(row1[Column(header, "Tool")], "occ-report 0.1.0");
  // Full demangled names, not shortened ones.
  EXPECT_EQ(row1[Column(header, "Name")].rfind("void at::native::(anonymous namespace)::indexSelectLargeIndex<", 0), 0u);

  // Not measured is empty, never 0.
  EXPECT_EQ(records[2][Column(header, "Achieved Occupancy (measured) (%)")], "");
  // Unjudged: occupancy columns empty, the reason given.
  const auto& unjudged = records[4];
  EXPECT_EQ(unjudged[Column(header, "Judged")], "no");
  EXPECT_EQ(unjudged[Column(header, "Theoretical Occupancy (%)")], "");
  EXPECT_EQ(unjudged[Column(header, "Not Judged Reason")], "registers per thread not recorded (0 in the trace)");
  EXPECT_EQ(unjudged[Column(header, "Name")], "void evil<\"</script><img src=x onerror=alert(1)>\", 'q' & co>(int|char)");
}

TEST(CsvPrinterTest, QuotesCommasQuotesAndLineBreaks) {
  const auto records = ParseCsv(Render("csv", ParseReport(R"pb(
    tool_version: "0.1.0"
    groups { rank: 1 name: "void k<1, \"x\">(int,\nchar)" judged: true }
  )pb")));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1][1], "void k<1, \"x\">(int,\nchar)");
}

TEST(CsvPrinterTest, NoLimitIsAnEmptyCell) {
  const auto records = ParseCsv(Render("csv", ParseReport(R"pb(
    groups { rank: 1 judged: true occupancy { block_limit_registers: 2147483647 block_limit_warps: 8 } }
  )pb")));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1][Column(records[0], "Block Limit Registers")], "");
  EXPECT_EQ(records[1][Column(records[0], "Block Limit Warps")], "8");
}

}  // namespace
}  // namespace occ::reports
