#include "tests/reports/test_report.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "reports/printer.h"

namespace occ::reports::testing {

occtrace::Report ParseReport(const std::string& textproto) {
  occtrace::Report report;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(textproto, &report))
      << "cannot parse the test report";
  return report;
}

occtrace::Report LoadReport(const std::string& name) {
  const std::string path = std::string(OCC_REPORTS_TESTDATA_DIR) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseReport(buffer.str());
}

std::string Render(const std::string& format, const occtrace::Report& report, bool color, int width) {
  std::unique_ptr<Printer> printer = MakePrinter(format);
  EXPECT_NE(printer, nullptr) << format;
  if (printer == nullptr) return "";
  std::ostringstream out;
  printer->Print(report, PrintOptions{color, width}, out);
  return out.str();
}

}  // namespace occ::reports::testing
