#include "test_traces.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kNsysExportSchemaSql.h"
#include "kTraceSchemaSql.h"
#include "occ_report.h"
#include "sqlite_db.h"

namespace occ::testing {

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/occ_analysis_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  char* made = mkdtemp(buffer.data());
  if (made == nullptr) ADD_FAILURE() << "mkdtemp failed";
  dir_ = made ? made : "/tmp";
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string ReadTestFile(const std::string& name) {
  return ReadFile(std::string(OCC_ANALYSIS_TEST_DIR) + "/" + name);
}

std::string H100TraceInserts() { return ReadTestFile("h100_trace.sql"); }

void MakeDb(const std::string& path, const std::string& sql_text) {
  auto db = sql::Db::Create(path, /*replace=*/true);
  ASSERT_TRUE(db.ok()) << db.status().message();
  // Test inputs need no durability: skip the fsync per statement.
  Status status = db->Exec("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;\n" + sql_text);
  ASSERT_TRUE(status.ok()) << status.message();
}

void MakeOccTrace(const std::string& path, const std::string& inserts) {
  MakeDb(path, std::string(kTraceSchemaSql) + "\n" + inserts);
}

std::string NsysSchemaSql() { return std::string(kNsysExportSchemaSql); }

RunResult RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  RunResult r;
  r.code = RunOccReport(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace occ::testing
