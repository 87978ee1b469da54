#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::LoadReport;
using testing::ParseReport;
using testing::Render;

TEST(JsonPrinterTest, RoundTripsThroughTheProtobufJsonMapping) {
  const occtrace::Report report = LoadReport("h100_report.textproto");
  const std::string json = Render("json", report);
  occtrace::Report parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  std::string differences;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differencer.Compare(report, parsed)) << differences;
}

TEST(JsonPrinterTest, KeepsProtoFieldNamesAndPrintsZeros) {
  const std::string json = Render("json", LoadReport("h100_report.textproto"));
  EXPECT_THAT(json, HasSubstr("\"theoretical_occupancy_pct\": 37.5"));
  EXPECT_THAT(json, HasSubstr("\"recoverable_ns_upper_bound\": \"246666666\""));  // int64 as string
  EXPECT_THAT(json, HasSubstr("\"time_below_50pct_theoretical_pct\": 61.2"));
  EXPECT_THAT(json, HasSubstr("\"dropped_records\": \"0\""));
  EXPECT_THAT(json, HasSubstr("\"source\": \"SOURCE_TRACE\""));
  EXPECT_THAT(json, Not(HasSubstr("theoreticalOccupancyPct")));
  EXPECT_EQ(json.back(), '\n');
}

TEST(JsonPrinterTest, RepairsInvalidUtf8InsteadOfFailing) {
  occtrace::Report report = ParseReport("tool_version: \"0.1.0\"");
  report.add_groups()->set_name(std::string("bad\xff") + "name");
  const std::string json = Render("json", report);
  occtrace::Report parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  EXPECT_EQ(parsed.groups(0).name(), "bad\xEF\xBF\xBDname");
}

}  // namespace
}  // namespace occ::reports
