// `occ-report report` / `launches` flags end to end (in process).
#include <gtest/gtest.h>
#include <google/protobuf/util/json_util.h>

#include <sstream>
#include <string>

#include "schema/report.pb.h"
#include "sqlite/sqlite_db.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::H100TraceInserts;
using testing::MakeOccTrace;
using testing::RunCli;
using testing::ScratchDir;

occtrace::Report ParseJson(const std::string& json) {
  occtrace::Report report;
  auto status = google::protobuf::util::JsonStringToMessage(json, &report);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return report;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Path("h100.db");
    MakeOccTrace(path_, H100TraceInserts() + R"sql(
INSERT INTO StringIds VALUES (300, 'it''s"; DROP TABLE OCC_LAUNCH; --(x)'), (301, 'evil');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (30, 0, 1, NULL, 300, 301, 301, 0, 0, 32, 264, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (2100000, 1000, 30, 7, 600);
)sql");
  }
  ScratchDir dir_;
  std::string path_;
};

TEST_F(Cli, JsonKeepsProtoFieldNames) {
  auto r = RunCli({path_, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"theoretical_occupancy_pct\""), std::string::npos);
  EXPECT_NE(r.out.find("\"limiter_sentence\""), std::string::npos);
  occtrace::Report report = ParseJson(r.out);
  EXPECT_EQ(report.summary().launches(), 11);
  EXPECT_NE(report.generated_for().find("--format json"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(Cli, KernelFilterIsABoundParameter) {
  // The name holds a quote, a double quote and SQL; the pattern holds a quote too.
  auto r = RunCli({path_, "--format", "json", "--kernel", "it's\"; DROP TABLE"});
  ASSERT_EQ(r.code, 0) << r.err;
  occtrace::Report report = ParseJson(r.out);
  ASSERT_EQ(report.groups_size(), 1);
  EXPECT_EQ(report.groups(0).name(), "it's\"; DROP TABLE OCC_LAUNCH; --(x)");
  // The trace is intact (and was opened read-only anyway).
  auto again = RunCli({path_, "--format", "json", "--top", "0"});
  ASSERT_EQ(again.code, 0);
  EXPECT_EQ(ParseJson(again.out).summary().launches(), 11);

  auto none = RunCli({path_, "--kernel", "' OR 1=1 --"});
  EXPECT_EQ(none.code, 3) << none.err;
  EXPECT_NE(none.err.find("no kernel launch matches"), std::string::npos);

  auto regex = RunCli({path_, "--format", "json", "-k", "^(gemm|k96)"});
  ASSERT_EQ(regex.code, 0) << regex.err;
  EXPECT_EQ(ParseJson(regex.out).groups_size(), 2);
}

TEST_F(Cli, OutputFileFormatFromExtensionAndForce) {
  std::string out = dir_.Path("report.json");
  auto r = RunCli({path_, "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "nothing on stdout with -o";
  std::string first = testing::ReadFile(out);
  EXPECT_EQ(ParseJson(first).summary().launches(), 11);

  testing::WriteFile(out, "keep me");
  r = RunCli({path_, "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ReadFile(out), "keep me");

  r = RunCli({path_, "-o", out, "--force"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(testing::ReadFile(out)).summary().launches(), 11);

  r = RunCli({path_, "-o", dir_.Path("report.xyz")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
}

TEST_F(Cli, ImplicitReportSubcommandAndSqlDump) {
  // A .sql text dump is loaded into memory.
  std::string sql_path = dir_.Path("trace.sql");
  testing::WriteFile(sql_path, testing::ReadTestFile("../../schema/trace_schema.sql") +
                                   H100TraceInserts());
  auto r = RunCli({"report", sql_path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r.out).summary().launches(), 10);
}

TEST_F(Cli, LaunchesListsOneRowPerLaunch) {
  auto r = RunCli({"launches", path_, "--limit", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_NE(header.find("Theo%"), std::string::npos);
  int rows = 0;
  while (std::getline(lines, line) && !line.empty()) {  // the notes follow a blank line
    ++rows;
    EXPECT_NE(line.find("gemm_kernel"), std::string::npos) << line;
    EXPECT_NE(line.find("37.5"), std::string::npos) << line;  // ncu: 67 regs x 256 -> 37.5 %
    EXPECT_NE(line.find("(3225 1 1)"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 3);

  auto csv = RunCli({"launches", path_, "--format", "csv", "--kernel", "tiny_grid"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::istringstream csv_lines(csv.out);
  std::getline(csv_lines, header);
  EXPECT_EQ(header.rfind("Start (ns),Duration (ns),GrdX", 0), 0u) << header;
  std::getline(csv_lines, line);
  // Starts count from the trace's first launch (start 1000, h100_trace.sql).
  EXPECT_EQ(line, "1599000,50000,66,1,1,256,1,1,16,0,0,100.0,12.4,replay,,,0,7,6,tiny_grid(int)");
  std::getline(csv_lines, line);  // the profiled launch: no start, its time from OCC_ACHIEVED
  EXPECT_EQ(line, ",52000,66,1,1,256,1,1,16,0,0,100.0,12.6,replay,,,0,7,7,tiny_grid(int)");

  // Text: the replayed launch has no start ("-"), and the notes say what the columns mean.
  auto text = RunCli({"launches", path_, "--kernel", "tiny_grid"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("\n         1599000        50000"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n               -        52000"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Start: ns after the trace's first timed launch; - : 1 launch replayed by the "
                          "profiler"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("!:"), std::string::npos) << text.out;  // 12.4 and 12.6 are below 100

  auto quoted = RunCli({"launches", path_, "--format", "csv", "--kernel", "DROP"});
  ASSERT_EQ(quoted.code, 0) << quoted.err;
  EXPECT_NE(quoted.out.find("\"it's\"\"; DROP TABLE OCC_LAUNCH; --(x)\""), std::string::npos)
      << quoted.out;

  auto none = RunCli({"launches", path_, "--kernel", "nothing_like_this"});
  EXPECT_EQ(none.code, 3);
}

TEST_F(Cli, DiffAndGpuFlags) {
  auto r = RunCli({path_, "--diff", path_, "--format", "json", "--gpu", "sm_80"});
  ASSERT_EQ(r.code, 0) << r.err;
  occtrace::Report report = ParseJson(r.out);
  EXPECT_FALSE(report.what_if_gpu().empty());
  EXPECT_EQ(report.diff().rows_size(), 6);
  for (const auto& row : report.diff().rows()) EXPECT_EQ(row.status(), "same") << row.name();
  auto missing = RunCli({path_, "--diff", dir_.Path("missing.db")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("missing.db"), std::string::npos);
}

}  // namespace
}  // namespace occ
