// Every kind of bad input through occ::RunOccReport in process: unusable files give exit code 2
// and exactly one line naming the file and the problem; bad rows give warnings and a report.
#include <gtest/gtest.h>
#include <google/protobuf/util/json_util.h>

#include <string>

#include "schema/report.pb.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::H100TraceInserts;
using testing::MakeDb;
using testing::MakeOccTrace;
using testing::RunCli;
using testing::ScratchDir;

int Lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// Exit code 2, one line on stderr naming `path` and containing `problem`, nothing on stdout.
void ExpectUnusable(const std::string& path, const std::string& problem,
                    const std::vector<std::string>& extra = {}) {
  for (const char* sub : {"report", "launches"}) {
    std::vector<std::string> args = {sub, path};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunCli(args);
    EXPECT_EQ(r.code, 2) << sub << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("occ-report: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(problem), std::string::npos) << "expected '" << problem << "' in " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(BadInput, MissingFile) {
  ScratchDir dir;
  ExpectUnusable(dir.Path("nope.db"), "no such file");
}

// A directory is read as the trace files in it (cross_rank_test.cc); without any, one line.
TEST(BadInput, DirectoryWithoutTraces) {
  ScratchDir dir;
  testing::WriteFile(dir.Path("notes.txt"), "not a trace\n");
  auto r = RunCli({"report", dir.Path("")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("directory without trace files"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // `launches` lists one trace: a directory is refused.
  r = RunCli({"launches", dir.Path("")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
}

TEST(BadInput, NotSqlite) {
  ScratchDir dir;
  std::string path = dir.Path("notes.db");
  testing::WriteFile(path, "this is a text file, not a database\n");
  ExpectUnusable(path, "not an SQLite database");
}

TEST(BadInput, EmptyFile) {
  ScratchDir dir;
  std::string path = dir.Path("empty.db");
  testing::WriteFile(path, "");
  ExpectUnusable(path, "empty file");
}

TEST(BadInput, EmptyDatabase) {
  ScratchDir dir;
  std::string path = dir.Path("nothing.db");
  MakeDb(path, "PRAGMA user_version = 7;");  // writes the header, no tables
  ExpectUnusable(path, "empty database");
}

TEST(BadInput, TruncatedDatabase) {
  ScratchDir dir;
  std::string path = dir.Path("trunc.db");
  // Enough launches to span many pages.
  std::string inserts = H100TraceInserts() + "WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL "
      "SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO OCC_LAUNCH SELECT i * 10, 5, 1, 7, i FROM n;";
  MakeOccTrace(path, inserts);
  std::string bytes = testing::ReadFile(path);
  ASSERT_GT(bytes.size(), 100000u);
  testing::WriteFile(path, bytes.substr(0, bytes.size() / 3));
  auto r = RunCli({path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos);
  EXPECT_NE(r.err.find("malformed"), std::string::npos) << r.err;
}

TEST(BadInput, CorruptDatabase) {
  ScratchDir dir;
  std::string path = dir.Path("corrupt.db");
  std::string inserts = H100TraceInserts() + "WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL "
      "SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO OCC_LAUNCH SELECT i * 10, 5, 1, 7, i FROM n;";
  MakeOccTrace(path, inserts);
  std::string bytes = testing::ReadFile(path);
  // Scribble over every page after the schema pages (b-tree headers included).
  for (size_t at = 4096 * 8; at + 64 < bytes.size(); at += 4096) {
    for (size_t i = 0; i < 64; ++i) bytes[at + i] = static_cast<char>(0xA5 ^ i);
  }
  testing::WriteFile(path, bytes);
  auto r = RunCli({path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos);
}

TEST(BadInput, CorruptHeader) {
  ScratchDir dir;
  std::string path = dir.Path("header.db");
  MakeOccTrace(path, H100TraceInserts());
  std::string bytes = testing::ReadFile(path);
  for (size_t i = 16; i < 100; ++i) bytes[i] = '\xff';
  testing::WriteFile(path, bytes);
  auto r = RunCli({path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos);
}

TEST(BadInput, NewerSchemaVersion) {
  ScratchDir dir;
  std::string path = dir.Path("v2.db");
  std::string inserts = H100TraceInserts();
  inserts.replace(inserts.find("('schema_version', '1')"), 23, "('schema_version', '2')");
  MakeOccTrace(path, inserts);
  ExpectUnusable(path, "schema version 2 is newer");
}

TEST(BadInput, UnknownSchemaVersion) {
  ScratchDir dir;
  std::string path = dir.Path("vx.db");
  std::string inserts = H100TraceInserts();
  inserts.replace(inserts.find("('schema_version', '1')"), 23, "('schema_version', 'x')");
  MakeOccTrace(path, inserts);
  ExpectUnusable(path, "unknown trace schema version");
}

TEST(BadInput, NeitherTraceNorExport) {
  ScratchDir dir;
  std::string path = dir.Path("other.db");
  MakeDb(path, "CREATE TABLE users (id INTEGER, name TEXT); INSERT INTO users VALUES (1, 'a');");
  ExpectUnusable(path, "neither an occtrace trace nor an Nsight Systems");
}

TEST(BadInput, NsysExportWithoutKernels) {
  ScratchDir dir;
  std::string path = dir.Path("nokern.sqlite");
  MakeDb(path, "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
               "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);");
  ExpectUnusable(path, "without CUDA kernel launches");
}

TEST(BadInput, TraceWithoutLaunches) {
  ScratchDir dir;
  std::string path = dir.Path("idle.db");
  MakeOccTrace(path, "INSERT INTO OCC_META VALUES ('schema_version', '1');");
  auto r = RunCli({path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos);
  EXPECT_NE(r.err.find("no kernel launches"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
}

TEST(BadInput, BrokenSqlDump) {
  ScratchDir dir;
  std::string path = dir.Path("broken.sql");
  testing::WriteFile(path, "CREATE TABLE OCC_META (name TEXT PRIMARY KEY, value TEXT);\nINSERT INTO nowhere VALUES (1);\n");
  ExpectUnusable(path, "cannot load SQL text");
}

TEST(BadInput, BadFlags) {
  auto r = RunCli({"report", "x.db", "--sort", "bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  r = RunCli({"report", "x.db", "--top", "-3"});
  EXPECT_EQ(r.code, 2);
  r = RunCli({"report", "x.db", "--gpu", "NoSuchGPU 9000"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  r = RunCli({"report", "x.db", "--kernel", "(unclosed"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("regular expression"), std::string::npos) << r.err;
  r = RunCli({"report", "x.db", "--format", "pdf"});
  EXPECT_EQ(r.code, 2);
}

// Absurd rows: warnings on stderr and in the report, the rest analyzed, nothing dropped.
TEST(BadRows, AbsurdValuesAreWarningsAndUnjudged) {
  ScratchDir dir;
  std::string path = dir.Path("absurd.db");
  std::string huge_name(100 * 1024, 'x');
  MakeOccTrace(path, H100TraceInserts() + R"sql(
INSERT INTO StringIds VALUES (200, 'zero_grid(int)'), (201, 'many_regs(int)'), (202, ')sql" +
                         huge_name + R"sql(');
INSERT INTO OCC_KERNEL_CONFIG VALUES
  (20, 0, 1, NULL, 200, 200, 200, 0, 0, 32, 0, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (21, 0, 1, NULL, 201, 201, 201, 0, 0, 1000, 64, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0),
  (22, 0, 1, NULL, 202, 202, 202, 0, 0, 32, 264, 1, 1, 128, 1, 1, 0, 0, 0, 0, 32768, 0, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0);
INSERT INTO OCC_LAUNCH VALUES (3000000, 100, 20, 1, 500), (3000100, 100, 21, 1, 501),
  (3000200, -50, 1, 1, 502), (-7, 10, 1, 1, 503), (3000300, 100, 99, 1, 504),
  (3000400, 100, 22, 1, 505);
)sql");
  auto r = RunCli({path, "--format", "json", "--top", "0"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos);
  EXPECT_NE(r.err.find("negative"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing from OCC_KERNEL_CONFIG"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid grid 0x1x1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid register count 1000"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 4096u);  // the 100 KB name is abbreviated in warnings
  occtrace::Report report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok());
  EXPECT_EQ(report.summary().launches(), 10 + 3);
  EXPECT_EQ(report.unjudged_size(), 2);
  EXPECT_GE(report.files(0).warnings_size(), 4);
  bool huge_found = false;
  for (const auto& g : report.groups()) huge_found |= g.name() == huge_name;
  EXPECT_TRUE(huge_found);
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// A .sql dump cannot reach beyond its in-memory database.
TEST(BadInput, SqlDumpCannotAttachFiles) {
  testing::ScratchDir dir;
  std::string path = dir.Path("escape.sql");
  std::string target = dir.Path("created.db");
  testing::WriteFile(path, "ATTACH DATABASE '" + target + "' AS x; CREATE TABLE x.t (a);\n");
  auto r = testing::RunCli({path});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not authorized"), std::string::npos) << r.err;
  EXPECT_TRUE(testing::ReadFile(target).empty());
  testing::WriteFile(path, "CREATE TABLE t (a); VACUUM INTO '" + target + "';\n");
  r = testing::RunCli({path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(testing::ReadFile(target).empty());
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// Durations summing past 2^63 ns saturate (no signed overflow; UBSan checks this in CI).
TEST(BadRows, HugeDurationsSaturate) {
  testing::ScratchDir dir;
  std::string path = dir.Path("huge.db");
  testing::MakeOccTrace(path, testing::H100TraceInserts() +
      "WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 10999) "
      "INSERT INTO OCC_LAUNCH SELECT 9000000000000000000 + i, 999000000000000, 1, 7, i FROM n;");
  auto r = testing::RunCli({path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  occtrace::Report report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok());
  EXPECT_EQ(report.summary().total_gpu_ns(), INT64_MAX);
  EXPECT_EQ(report.summary().launches(), 10 + 10000);
}

}  // namespace
}  // namespace occ
