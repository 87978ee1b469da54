// Golden-file tests of every report format: tests/golden/<case>/
//   *.sql          trace inputs as text SQL (data only: the trace schema is prepended), each
//                  built into <name>.db in a scratch directory at test time;
//   args           occ-report arguments, whitespace-separated, '#' starts a comment line;
//                  trace files are named by their .db names (input.sql -> input.db);
//   expected.txt, expected.md, expected.html, expected.json, expected.csv
//                  the output of `occ-report <args> --format <format>`.
// occ-report runs in-process (occ::RunOccReport) with the scratch directory as the working
// directory, so paths in the reports are the relative names from `args`. The tool version is
// the only unstable text and is replaced by @VERSION@ before comparing.
//
// Regenerate after an intended change:  OCC_UPDATE_GOLDEN=1 ctest -L golden  (then review
// `git diff tests/golden` line by line before committing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/occ_report.h"
#include "kTraceSchemaSql.h"
#include "reports/strings.h"
#include "sqlite_db.h"

namespace occ {
namespace {

namespace fs = std::filesystem;

struct Format {
  const char* name;
  const char* extension;
};
constexpr Format kFormats[] = {
    {"text", "txt"}, {"markdown", "md"}, {"html", "html"}, {"json", "json"}, {"csv", "csv"}};

struct GoldenCase {
  std::string name;   // folder under tests/golden
  Format format;
};

// gtest prints this for a failing case instead of the struct's bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name << " (" << c.format.name << ")"; }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool UpdateMode() {
  const char* env = std::getenv("OCC_UPDATE_GOLDEN");
  return env != nullptr && std::string(env) == "1";
}

std::vector<GoldenCase> DiscoverCases() {
  std::vector<GoldenCase> cases;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(OCC_GOLDEN_DIR)) {
    if (entry.is_directory() && fs::exists(entry.path() / "args")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    for (const Format& format : kFormats) cases.push_back({name, format});
  }
  return cases;
}

std::vector<std::string> ParseArgs(const std::string& text) {
  std::vector<std::string> args;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') {
      continue;
    }
    std::istringstream words(line);
    for (std::string word; words >> word;) args.push_back(word);
  }
  return args;
}

// Replaces every occurrence of `from` with `to`.
void ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t pos = text->find(from); pos != std::string::npos; pos = text->find(from, pos + to.size())) {
    text->replace(pos, from.size(), to);
  }
}

// "0.1.0" from `occ-report --version`.
std::string ToolVersion() {
  std::ostringstream out, err;
  EXPECT_EQ(RunOccReport({"--version"}, out, err), 0);
  std::string line = out.str();
  line = line.substr(0, line.find('\n'));
  const std::string prefix = "occ-report ";
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : line;
}

std::string Normalize(std::string text, const std::string& version) {
  ReplaceAll(&text, "occ-report " + version, "occ-report @VERSION@");
  ReplaceAll(&text, "\"tool_version\": \"" + version + "\"", "\"tool_version\": \"@VERSION@\"");
  return text;
}

// The first differing line with its neighbours, for a readable failure message.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::vector<std::string> a, b;
  std::istringstream sa(expected), sb(actual);
  for (std::string line; std::getline(sa, line);) a.push_back(line);
  for (std::string line; std::getline(sb, line);) b.push_back(line);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::ostringstream out;
  out << "first difference at line " << i + 1 << " (expected " << a.size() << " lines, got "
      << b.size() << "):\n";
  for (size_t k = i; k < i + 3; ++k) {
    if (k < a.size()) out << "- " << a[k] << "\n";
  }
  for (size_t k = i; k < i + 3; ++k) {
    if (k < b.size()) out << "+ " << b[k] << "\n";
  }
  return out.str();
}

class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/occ_golden_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs occ-report with `dir` as the working directory (restored afterwards).
int RunIn(const fs::path& dir, const std::vector<std::string>& args, std::string* out, std::string* err) {
  const fs::path previous = fs::current_path();
  fs::current_path(dir);
  std::ostringstream out_stream, err_stream;
  const int code = RunOccReport(args, out_stream, err_stream);
  fs::current_path(previous);
  *out = out_stream.str();
  *err = err_stream.str();
  return code;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesExpectedOutput) {
  const GoldenCase& c = GetParam();
  const fs::path case_dir = fs::path(OCC_GOLDEN_DIR) / c.name;
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty()) << "mkdtemp failed";

  for (const auto& entry : fs::directory_iterator(case_dir)) {
    // torch.profiler traces (*.json.gz, as recorded) are read as they are.
    const std::string file = entry.path().filename().string();
    if (file.size() > 8 && file.compare(file.size() - 8, 8, ".json.gz") == 0) {
      fs::copy_file(entry.path(), scratch.path() / file);
      continue;
    }
    if (entry.path().extension() != ".sql") continue;
    const fs::path db_path = scratch.path() / (entry.path().stem().string() + ".db");
    auto db = sql::Db::Create(db_path.string(), /*replace=*/true);
    ASSERT_TRUE(db.ok()) << db.status().message();
    // One transaction: real recorded traces hold tens of thousands of INSERTs, each of which
    // would otherwise be its own commit (minutes per case instead of a second).
    const Status built = db->Exec("BEGIN;\n" + std::string(kTraceSchemaSql) + "\n" + ReadFile(entry.path()) +
                                  "\nCOMMIT;");
    ASSERT_TRUE(built.ok()) << entry.path() << ": " << built.message();
  }

  std::vector<std::string> args = ParseArgs(ReadFile(case_dir / "args"));
  ASSERT_FALSE(args.empty()) << case_dir / "args" << " is empty";
  args.push_back("--format");
  args.push_back(c.format.name);
  std::string out, err;
  const int code = RunIn(scratch.path(), args, &out, &err);
  ASSERT_EQ(code, 0) << "occ-report failed: " << err;
  const std::string actual = Normalize(out, ToolVersion());

  // Keep the rendered report in the build tree for review (and the HTML for a browser).
  const fs::path artifacts = fs::path(OCC_GOLDEN_ARTIFACT_DIR) / c.name;
  fs::create_directories(artifacts);
  std::ofstream(artifacts / (std::string("actual.") + c.format.extension), std::ios::binary) << actual;

  if (std::string(c.format.name) == "text") {
    // The text report's promise, checked on real pipeline output too.
    std::istringstream lines(actual);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(reports::DisplayWidth(line), 100) << line;
    }
  }

  const fs::path expected_path = case_dir / (std::string("expected.") + c.format.extension);
  if (UpdateMode()) {
    std::ofstream(expected_path, std::ios::binary) << actual;
    std::cout << "updated " << expected_path.string() << ": review it with git diff\n";
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << expected_path << " is missing; create it with OCC_UPDATE_GOLDEN=1 and review it";
  const std::string expected = ReadFile(expected_path);
  EXPECT_TRUE(expected == actual)
      << c.name << "/" << expected_path.filename().string() << " differs from the output of "
      << "occ-report; " << FirstDifference(expected, actual)
      << "If the change is intended: OCC_UPDATE_GOLDEN=1 ctest -L golden, then review git diff.";
}

std::string CaseName(const ::testing::TestParamInfo<GoldenCase>& param_info) {
  std::string name = param_info.param.name + "_" + param_info.param.format.name;
  std::replace_if(
      name.begin(), name.end(), [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); },
      '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Reports, GoldenTest, ::testing::ValuesIn(DiscoverCases()), CaseName);

}  // namespace
}  // namespace occ

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
