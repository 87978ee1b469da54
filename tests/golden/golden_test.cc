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
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/occ_report.h"
#include "kTraceSchemaSql.h"
#include "reports/strings.h"
#include "schema/report.pb.h"
#include "sqlite/sqlite_db.h"

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

std::vector<std::string> ParseArgs(const std::string& text);
std::string ReadFile(const fs::path& path);

// A case whose args start with `launches` lists launches: text, CSV and JSON are its formats.
bool IsLaunchesCase(const fs::path& case_dir) {
  const std::vector<std::string> args = ParseArgs(ReadFile(case_dir / "args"));
  return !args.empty() && args[0] == "launches";
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
    const bool launches = IsLaunchesCase(fs::path(OCC_GOLDEN_DIR) / name);
    for (const Format& format : kFormats) {
      const std::string f = format.name;
      if (launches && f != "text" && f != "csv" && f != "json") continue;
      cases.push_back({name, format});
    }
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

// Builds every <name>.sql of a case into <name>.db in `dir`; a case with an `inputs_from` file
// (another case's folder name) takes that case's inputs, so a large trace is checked in once.
void BuildCase(const fs::path& case_dir, const fs::path& dir) {
  if (fs::exists(case_dir / "inputs_from")) {
    std::istringstream from(ReadFile(case_dir / "inputs_from"));
    std::string other;
    from >> other;
    ASSERT_TRUE(fs::exists(case_dir.parent_path() / other / "args")) << case_dir / "inputs_from";
    BuildCase(case_dir.parent_path() / other, dir);
    return;
  }
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    // torch.profiler traces (*.json.gz, as recorded) are read as they are.
    const std::string file = entry.path().filename().string();
    if (file.size() > 8 && file.compare(file.size() - 8, 8, ".json.gz") == 0) {
      fs::copy_file(entry.path(), dir / file);
      continue;
    }
    if (entry.path().extension() != ".sql") continue;
    const fs::path db_path = dir / (entry.path().stem().string() + ".db");
    auto db = sql::Db::Create(db_path.string(), /*replace=*/true);
    ASSERT_TRUE(db.ok()) << db.status().message();
    // One transaction: real recorded traces hold tens of thousands of INSERTs, each of which
    // would otherwise be its own commit (minutes per case instead of a second).
    const Status built = db->Exec("BEGIN;\n" + std::string(kTraceSchemaSql) + "\n" + ReadFile(entry.path()) +
                                  "\nCOMMIT;");
    ASSERT_TRUE(built.ok()) << entry.path() << ": " << built.message();
  }
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesExpectedOutput) {
  const GoldenCase& c = GetParam();
  const fs::path case_dir = fs::path(OCC_GOLDEN_DIR) / c.name;
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty()) << "mkdtemp failed";

  BuildCase(case_dir, scratch.path());
  if (HasFatalFailure()) return;

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

  if (std::string(c.format.name) == "text" && !IsLaunchesCase(case_dir)) {
    // The text report's promise, checked on real pipeline output too (a launch listing's rows
    // hold whole kernel names, as nvprof's do).
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


// ---- One model of the run, many views (#32) --------------------------------------------------
// Every case is rendered with several --top, --sort and --kernel values in every format; the
// figures the views share must be identical: in JSON the summary, GPU time by limiter, the
// actions (all but the rank of their row in the table) and every shown configuration; in the
// other formats the summary and "What to change" as printed, and CSV's row of each configuration.

// The case's arguments without --top, --sort and --kernel (the view options under test).
std::vector<std::string> WithoutViewOptions(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--top" || args[i] == "--sort" || args[i] == "--kernel" || args[i] == "-k") {
      ++i;
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

std::vector<std::vector<std::string>> ViewOptions(bool diff) {
  std::vector<std::vector<std::string>> views;
  if (diff) {
    views.push_back({"--top", "0"});
    views.push_back({"--top", "1"});
    views.push_back({"--top", "3"});
    views.push_back({"--top", "2", "--kernel", "^[a-m_]"});
    views.push_back({"--top", "5", "--kernel", "[0-9]"});
    return views;
  }
#ifdef __SANITIZE_ADDRESS__
  // Every render is several times slower under ASan+UBSan (all fourteen views ran past 8 min on
  // 2 cores): five views keep the memory checks on the same paths; the release build runs all.
  // The first view is the reference every other view is compared with: it shows everything.
  views.push_back({"--top", "0", "--sort", "time"});
  views.push_back({"--top", "1", "--sort", "priority"});
  views.push_back({"--top", "3", "--sort", "recoverable"});
#else
  for (const char* top : {"0", "1", "3"}) {
    for (const char* sort : {"time", "priority", "recoverable", "name"}) views.push_back({"--top", top, "--sort", sort});
  }
#endif
  views.push_back({"--top", "2", "--kernel", "^[a-m_]"});
  views.push_back({"--top", "5", "--sort", "owner", "--kernel", "[0-9]"});
  return views;
}

// Lines from the one starting with `begin` up to (not including) the next starting with `end`
// after it, whitespace collapsed and the table rows' "#N " references removed (a view's ranks).
std::string Section(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t from = text.find(begin);
  if (from == std::string::npos) return "";
  size_t to = text.find(end, from + begin.size());
  if (to == std::string::npos) to = text.size();
  std::string section = text.substr(from, to - from);
  section = std::regex_replace(section, std::regex(R"(<a href="#k[0-9]+">#[0-9]+</a> |#[0-9]+ )"), "");
  section = std::regex_replace(section, std::regex(R"(\*\*\*\*)"), "");
  section = std::regex_replace(section, std::regex(R"(\s+)"), " ");
  return section;
}

struct SharedFigures {
  std::string summary;  // per format: the summary as printed
  std::string actions;  // per format: "What to change" as printed
};

SharedFigures Shared(const std::string& format, const std::string& out) {
  if (format == "text") return {Section(out, "── Summary", "\n──"), Section(out, "── What to change", "\n──")};
  if (format == "markdown") return {Section(out, "**Summary:**", "\n\n"), Section(out, "## What to change", "\n## ")};
  if (format == "html") {
    return {Section(out, "<section id=\"summary\">", "</section>"),
            Section(out, "<section id=\"actions\">", "</section>")};
  }
  return {};
}

// --diff: its opening (totals, warnings, what changed) as printed.
SharedFigures DiffShared(const std::string& format, const std::string& out) {
  if (format == "text") return {Section(out, "── Did it work?", "\n──"), ""};
  if (format == "markdown") return {Section(out, "**Did it work?**", "\n| "), ""};
  if (format == "html") return {Section(out, "<section id=\"diff-summary\">", "</section>"), ""};
  return {};
}

// CSV rows without their first cell (the rank in this view; --diff's rows have none).
std::vector<std::string> CsvRowsWithoutRank(const std::string& csv, bool has_rank) {
  std::vector<std::string> rows;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) rows.push_back(has_rank ? line.substr(line.find(',') + 1) : line);
  return rows;
}

// The golden cases that render a report (not `launches` listings), in name order: the suites
// below that re-render every golden trace under other options walk these.
std::vector<fs::path> ReportCaseDirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(OCC_GOLDEN_DIR)) {
    if (!entry.is_directory() || !fs::exists(entry.path() / "args")) continue;
    if (IsLaunchesCase(entry.path())) continue;
    dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

occtrace::KernelGroup WithoutViewFields(occtrace::KernelGroup g) {
  g.set_rank(0);
  return g;
}

TEST(ReportConsistency, SharedFiguresDoNotDependOnViewOptions) {
  for (const fs::path& case_dir : ReportCaseDirs()) {
    const std::string name = case_dir.filename().string();
    SCOPED_TRACE(name);
    ScratchDir scratch;
    ASSERT_FALSE(scratch.path().empty());
    BuildCase(case_dir, scratch.path());
    if (HasFatalFailure()) return;
    const std::vector<std::string> base = WithoutViewOptions(ParseArgs(ReadFile(case_dir / "args")));
    // --diff has one order (time saved or cost): its views are --top and --kernel.
    const bool diff = std::find(base.begin(), base.end(), "--diff") != base.end();
    for (const char* format : {"json", "text", "markdown", "html", "csv"}) {
      SCOPED_TRACE(format);
      bool have_reference = false;
      occtrace::Report reference;
      SharedFigures reference_text;
      std::vector<std::string> all_rows;
      for (const auto& view : ViewOptions(diff)) {
        std::vector<std::string> args = base;
        args.insert(args.end(), view.begin(), view.end());
        args.insert(args.end(), {"--format", format});
        std::string view_text;
        for (const auto& a : view) view_text += a + " ";
        SCOPED_TRACE(view_text);
        std::string out, err;
        const int code = RunIn(scratch.path(), args, &out, &err);
        if (code == 3) continue;  // --kernel matched nothing here
        ASSERT_EQ(code, 0) << err;
        const bool first = !have_reference;
        have_reference = true;
        if (std::string(format) == "json") {
          occtrace::Report report;
          ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &report).ok());
          for (auto* list : {report.mutable_actions(), report.mutable_minor_actions()}) {
            for (auto& a : *list) a.set_group_rank(0);
          }
          if (first) {
            ASSERT_EQ(view[1], "0") << "the first view shows every configuration";
            reference = report;
            continue;
          }
          using google::protobuf::util::MessageDifferencer;
          EXPECT_TRUE(MessageDifferencer::Equals(report.summary(), reference.summary()))
              << report.summary().DebugString() << "\nvs\n" << reference.summary().DebugString();
          EXPECT_EQ(report.time_by_limiter_size(), reference.time_by_limiter_size());
          EXPECT_EQ(report.actions_size(), reference.actions_size());
          for (int i = 0; i < std::min(report.actions_size(), reference.actions_size()); ++i) {
            EXPECT_TRUE(MessageDifferencer::Equals(report.actions(i), reference.actions(i)))
                << report.actions(i).DebugString() << "\nvs\n" << reference.actions(i).DebugString();
          }
          EXPECT_EQ(report.minor_actions_size(), reference.minor_actions_size());
          // --diff: the totals and warnings are the whole runs'; every row shown is one of --top 0's.
          occtrace::Diff totals = report.diff(), reference_totals = reference.diff();
          totals.clear_rows();
          totals.clear_kernels_matched();
          reference_totals.clear_rows();
          reference_totals.clear_kernels_matched();
          EXPECT_TRUE(MessageDifferencer::Equals(totals, reference_totals))
              << totals.DebugString() << "\nvs\n" << reference_totals.DebugString();
          for (const auto& row : report.diff().rows()) {
            EXPECT_TRUE(std::any_of(reference.diff().rows().begin(), reference.diff().rows().end(),
                                    [&](const occtrace::DiffRow& r) { return MessageDifferencer::Equals(row, r); }))
                << row.name() << " is shown with figures that --top 0 does not have";
          }
          for (const auto& g : report.groups()) {
            const occtrace::KernelGroup shown = WithoutViewFields(g);
            EXPECT_TRUE(std::any_of(reference.groups().begin(), reference.groups().end(),
                                    [&](const occtrace::KernelGroup& r) {
                                      return MessageDifferencer::Equals(shown, WithoutViewFields(r));
                                    }))
                << g.name() << " is shown with figures that --top 0 does not have";
          }
        } else if (std::string(format) == "csv") {
          const auto rows = CsvRowsWithoutRank(out, /*has_rank=*/!diff);
          if (first) {
            all_rows = rows;
            continue;
          }
          for (const auto& row : rows) {
            EXPECT_NE(std::find(all_rows.begin(), all_rows.end(), row), all_rows.end())
                << "row not in --top 0's: " << row;
          }
        } else {
          const SharedFigures shared = diff ? DiffShared(format, out) : Shared(format, out);
          EXPECT_FALSE(shared.summary.empty());
          if (first) {
            reference_text = shared;
            continue;
          }
          EXPECT_EQ(shared.summary, reference_text.summary);
          EXPECT_EQ(shared.actions, reference_text.actions);
        }
      }
    }
  }
}

// ---- Per-launch views agree with the per-configuration ones (#32 item 3) ---------------------
// For every golden trace, `occ-report launches --format json` against the report's JSON
// (--top 0: every configuration): each launch's theoretical occupancy is the report's figure for
// the configuration it is counted in, found by what the configuration is (file, device, name,
// grid, block, cluster, registers, shared memory, executed carveout, launch count); each
// configuration holds as many listed launches as the report counts; a launch is flagged exactly
// where its achieved figure reads above that theoretical one at the printed precision; starts
// count from each file's first timed launch.

const google::protobuf::Value* Field(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? nullptr : &it->second;
}
double Num(const google::protobuf::Struct& s, const std::string& key) {
  const auto* v = Field(s, key);
  return v == nullptr ? -1 : v->number_value();
}
bool IsNull(const google::protobuf::Struct& s, const std::string& key) {
  const auto* v = Field(s, key);
  return v == nullptr || v->kind_case() == google::protobuf::Value::kNullValue;
}
double Dim(const google::protobuf::Struct& s, const std::string& key, int i) {
  return Field(s, key)->list_value().values(i).number_value();
}

TEST(LaunchesConsistency, EveryLaunchShowsItsConfigurationsTheoreticalOccupancy) {
  int cases = 0;
  for (const fs::path& case_dir : ReportCaseDirs()) {
    std::vector<std::string> args = WithoutViewOptions(ParseArgs(ReadFile(case_dir / "args")));
    // --gpu judges another GPU than the one `launches` lists; --diff's base is not an input.
    if (std::find(args.begin(), args.end(), "--gpu") != args.end()) continue;
    std::vector<std::string> inputs;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--diff") {
        ++i;
        continue;
      }
      if (args[i].rfind("-", 0) != 0) inputs.push_back(args[i]);
    }
    const std::string name = case_dir.filename().string();
    SCOPED_TRACE(name);
    ScratchDir scratch;
    ASSERT_FALSE(scratch.path().empty());
    BuildCase(case_dir, scratch.path());
    if (HasFatalFailure()) return;
    ++cases;

    std::vector<std::string> report_args = inputs;
    report_args.insert(report_args.end(), {"--top", "0", "--format", "json"});
    std::string out, err;
    ASSERT_EQ(RunIn(scratch.path(), report_args, &out, &err), 0) << err;
    occtrace::Report report;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &report).ok());
    std::vector<const occtrace::KernelGroup*> groups;
    for (const auto& g : report.groups()) groups.push_back(&g);
    for (const auto& g : report.unjudged()) groups.push_back(&g);
    for (const auto& g : report.tuning()) groups.push_back(&g);

    std::vector<std::string> launches_args = {"launches"};
    launches_args.insert(launches_args.end(), inputs.begin(), inputs.end());
    launches_args.insert(launches_args.end(), {"--format", "json"});
    ASSERT_EQ(RunIn(scratch.path(), launches_args, &out, &err), 0) << err;
    google::protobuf::Struct listing;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &listing).ok()) << out.substr(0, 500);
    const auto& rows = Field(listing, "launches")->list_value().values();
    ASSERT_GT(rows.size(), 0);

    std::map<const occtrace::KernelGroup*, int64_t> listed;
    std::map<int, double> earliest;  // file -> smallest start_ns
    int64_t above = 0;
    for (const auto& value : rows) {
      const google::protobuf::Struct& l = value.struct_value();
      const int file = static_cast<int>(Num(l, "file_index"));
      const std::string kernel = Field(l, "name")->string_value();
      SCOPED_TRACE(kernel + " correlation " + std::to_string(static_cast<int64_t>(Num(l, "correlation_id"))));
      if (!IsNull(l, "start_ns")) {
        EXPECT_GE(Num(l, "start_ns"), 0);
        earliest[file] = earliest.count(file) ? std::min(earliest[file], Num(l, "start_ns")) : Num(l, "start_ns");
      }
      ASSERT_NE(Field(l, "configuration"), nullptr) << "a listed launch the report does not count";
      const google::protobuf::Struct& config = Field(l, "configuration")->struct_value();
      std::vector<const occtrace::KernelGroup*> matches;
      for (const occtrace::KernelGroup* g : groups) {
        if ((g->file_index() == file || g->file_index() == -1) && g->device_id() == Num(l, "device_id") &&
            g->name() == kernel && g->grid_x() == Dim(l, "grid", 0) && g->grid_y() == Dim(l, "grid", 1) &&
            g->grid_z() == Dim(l, "grid", 2) && g->block_x() == Dim(l, "block", 0) &&
            g->block_y() == Dim(l, "block", 1) && g->block_z() == Dim(l, "block", 2) &&
            g->cluster_x() == Dim(l, "cluster", 0) && g->cluster_y() == Dim(l, "cluster", 1) &&
            g->cluster_z() == Dim(l, "cluster", 2) &&
            (IsNull(l, "registers_per_thread") || g->registers_per_thread() == Num(l, "registers_per_thread")) &&
            g->static_shared_mem() == Num(l, "static_shared_mem") &&
            g->dynamic_shared_mem() == Num(l, "dynamic_shared_mem") &&
            g->shared_mem_executed() == Num(config, "shared_mem_executed") &&
            static_cast<double>(g->launches()) == Num(config, "launches")) {
          matches.push_back(g);
        }
      }
      ASSERT_EQ(matches.size(), 1u) << "configurations of the report that hold this launch";
      const occtrace::KernelGroup& g = *matches[0];
      ++listed[&g];
      if (!g.judged()) {
        EXPECT_TRUE(IsNull(l, "theoretical_occupancy_pct"));
        continue;
      }
      ASSERT_FALSE(IsNull(l, "theoretical_occupancy_pct"));
      const double theo = Num(l, "theoretical_occupancy_pct");
      EXPECT_EQ(theo, g.occupancy().theoretical_occupancy_pct());
      const bool measured = !IsNull(l, "achieved_occupancy_pct");
      const bool is_above = measured && std::lround(Num(l, "achieved_occupancy_pct") * 10) > std::lround(theo * 10);
      EXPECT_EQ(Field(l, "achieved_above_theoretical")->bool_value(), is_above)
          << Num(l, "achieved_occupancy_pct") << " against " << theo;
      above += is_above;
    }
    EXPECT_EQ(Num(listing, "achieved_above_theoretical"), static_cast<double>(above));
    for (const auto& [file, start] : earliest) EXPECT_EQ(start, 0) << "file " << file;
    // Where every launch the report counts has a row (no launch calls of a light trace, no
    // launches counted across a re-attach gap), each configuration holds exactly its count.
    int64_t counted = 0;
    for (const auto* g : groups) counted += g->launches();
    if (counted == static_cast<int64_t>(rows.size())) {
      for (const auto* g : groups) EXPECT_EQ(listed[g], g->launches()) << g->name();
    }
  }
  EXPECT_GE(cases, 15);
}

// ---- Block shapes are shapes (#32 item 5) ------------------------------------------------------
// In every golden report: each measured point is one block shape (never two shapes merged under
// one thread count), the group's own shape is its "this" point, and where the report advises a
// measured-faster configuration, the table's fastest point is the shape the advice names. On the
// real H200 CuPy sweep, the fastest blur2d shape is also found straight from the trace's
// launch durations (SQL over OCC_LAUNCH), independent of the report. The model's block-size
// advice for a 2-D or 3-D block names a shape keeping its inner dimensions.

bool SameShape(const occtrace::MeasuredPoint& p, int x, int y, int z) {
  return p.block_x() == x && p.block_y() == y && p.block_z() == z;
}

TEST(BlockShapes, MeasuredFastestIsTheShapeTheAdviceNames) {
  int advised = 0;
  for (const fs::path& case_dir : ReportCaseDirs()) {
    const std::string name = case_dir.filename().string();
    SCOPED_TRACE(name);
    ScratchDir scratch;
    ASSERT_FALSE(scratch.path().empty());
    BuildCase(case_dir, scratch.path());
    if (HasFatalFailure()) return;
    std::vector<std::string> args = WithoutViewOptions(ParseArgs(ReadFile(case_dir / "args")));
    args.insert(args.end(), {"--top", "0", "--format", "json"});
    std::string out, err;
    ASSERT_EQ(RunIn(scratch.path(), args, &out, &err), 0) << err;
    occtrace::Report report;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &report).ok());
    for (const auto& g : report.groups()) {
      SCOPED_TRACE(g.name());
      // The model's block-size advice for a 2-D or 3-D block names a shape that keeps the inner
      // dimensions (or, where none fits, stays in threads and names no shape).
      for (const auto& s : g.suggestions()) {
        if (s.kind() != "block_size" || (g.block_y() <= 1 && g.block_z() <= 1) || s.block_x() == 0) continue;
        ++advised;
        EXPECT_EQ(s.block_x() * s.block_y() * s.block_z(), s.block_size());
        EXPECT_EQ(s.block_x(), g.block_x());
        if (g.block_z() > 1) {
          EXPECT_EQ(s.block_y(), g.block_y());
        }
        EXPECT_NE(s.text().find("Use block ("), std::string::npos) << s.text();
      }
      if (g.measured_points_size() == 0) continue;
      int current = 0, fastest = 0;
      for (int i = 0; i < g.measured_points_size(); ++i) {
        const auto& p = g.measured_points(i);
        EXPECT_EQ(p.block_x() * p.block_y() * p.block_z(), p.block_size());
        for (int j = 0; j < i; ++j) {
          EXPECT_FALSE(SameShape(g.measured_points(j), p.block_x(), p.block_y(), p.block_z()))
              << "two points of one shape";
        }
        if (p.current()) {
          ++current;
          EXPECT_TRUE(SameShape(p, g.block_x(), g.block_y(), g.block_z()));
        }
        if (p.mean_ns() < g.measured_points(fastest).mean_ns()) fastest = i;
      }
      EXPECT_EQ(current, 1);
      for (const auto& s : g.suggestions()) {
        if (s.kind() != "measured_config") continue;
        ++advised;
        EXPECT_TRUE(SameShape(g.measured_points(fastest), s.block_x(), s.block_y(), s.block_z()))
            << "the table's fastest is block " << g.measured_points(fastest).block_x() << "x"
            << g.measured_points(fastest).block_y() << "; the advice names " << s.text();
      }
    }
    if (name != "h200_cupy_sweep") continue;
    // The trace itself: blur2d's mean duration per block shape (every launch timed).
    auto db = sql::Db::OpenReadOnly((scratch.path() / "input.db").string());
    ASSERT_TRUE(db.ok());
    auto stmt = db->Prepare(
        "SELECT c.blockX, c.blockY, c.blockZ, avg(l.duration), count(*) FROM OCC_LAUNCH l "
        "JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId JOIN StringIds s ON s.id = c.demangledName "
        "WHERE s.value LIKE 'blur2d%' GROUP BY 1, 2, 3 ORDER BY 4");
    ASSERT_TRUE(stmt.ok());
    std::vector<std::array<int64_t, 3>> shapes;
    while (true) {
      auto row = stmt->Step();
      ASSERT_TRUE(row.ok());
      if (!*row) break;
      shapes.push_back({stmt->Int64(0), stmt->Int64(1), stmt->Int64(2)});
    }
    ASSERT_GE(shapes.size(), 3u);
    int of_256 = 0;
    for (const auto& sh : shapes) of_256 += sh[0] * sh[1] * sh[2] == 256;
    EXPECT_GE(of_256, 3) << "the sweep runs several 256-thread shapes";
    int checked = 0;
    for (const auto& g : report.groups()) {
      if (g.name().rfind("blur2d", 0) != 0) continue;
      for (const auto& s : g.suggestions()) {
        if (s.kind() != "measured_config") continue;
        ++checked;
        EXPECT_EQ(s.block_x(), shapes[0][0]);
        EXPECT_EQ(s.block_y(), shapes[0][1]);
        EXPECT_EQ(s.block_z(), shapes[0][2]);
      }
    }
    EXPECT_GE(checked, 3) << "blur2d's slower shapes are each told the fastest one";
  }
  EXPECT_GE(advised, 5);
}

// ---- What-if on another GPU (#32 item 4) ------------------------------------------------------
// Every golden trace re-evaluated for another GPU (--gpu): achieved figures say which GPU they
// were measured on and are never set against the what-if GPU's theoretical (no gap, no gap
// explanation, no advice read from a gap, no "equal to"/"below"/"above theoretical" anywhere in
// any format); without --gpu no group says it was measured elsewhere.

TEST(WhatIf, AchievedIsNeverComparedWithTheWhatIfGpu) {
  int measured = 0;
  for (const fs::path& case_dir : ReportCaseDirs()) {
    const std::string name = case_dir.filename().string();
    SCOPED_TRACE(name);
    ScratchDir scratch;
    ASSERT_FALSE(scratch.path().empty());
    BuildCase(case_dir, scratch.path());
    if (HasFatalFailure()) return;
    std::vector<std::string> base;
    const std::vector<std::string> parsed = WithoutViewOptions(ParseArgs(ReadFile(case_dir / "args")));
    for (size_t i = 0; i < parsed.size(); ++i) {
      if (parsed[i] == "--gpu") {
        ++i;
        continue;
      }
      base.push_back(parsed[i]);
    }
    base.insert(base.end(), {"--top", "0"});
    std::string out, err;
    {
      std::vector<std::string> args = base;
      args.insert(args.end(), {"--format", "json"});
      ASSERT_EQ(RunIn(scratch.path(), args, &out, &err), 0) << err;
      occtrace::Report report;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &report).ok());
      for (const auto& g : report.groups()) EXPECT_EQ(g.achieved().measured_on_gpu(), "") << g.name();
    }
#ifdef __SANITIZE_ADDRESS__
    // Several times slower under ASan+UBSan on 2 cores: one what-if GPU keeps the checks' paths.
    const std::vector<const char*> gpus = {"B200"};
#else
    const std::vector<const char*> gpus = {"A100", "B200"};
#endif
    for (const char* gpu : gpus) {
      SCOPED_TRACE(gpu);
      std::vector<std::string> args = base;
      args.insert(args.end(), {"--gpu", gpu, "--format", "json"});
      ASSERT_EQ(RunIn(scratch.path(), args, &out, &err), 0) << err;
      occtrace::Report report;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &report).ok());
      std::set<std::string> traced;
      for (const auto& d : report.devices()) {
        if (d.device_id() >= 0) traced.insert(d.name());
      }
      for (const auto& g : report.groups()) {
        SCOPED_TRACE(g.name());
        if (g.achieved().samples() > 0) {
          ++measured;
          EXPECT_TRUE(traced.count(g.achieved().measured_on_gpu()) > 0 ||
                      g.achieved().measured_on_gpu() == "the traced GPU")
              << "'" << g.achieved().measured_on_gpu() << "'";
        }
        EXPECT_EQ(g.achieved().gap_points(), 0);
        EXPECT_EQ(g.achieved().gap_explanations_size(), 0);
        for (const auto& s : g.suggestions()) EXPECT_NE(s.kind(), "larger_blocks") << s.text();
      }
      for (const char* format : {"text", "markdown", "html", "csv"}) {
        SCOPED_TRACE(format);
        std::vector<std::string> printed = base;
        printed.insert(printed.end(), {"--gpu", gpu, "--format", format});
        ASSERT_EQ(RunIn(scratch.path(), printed, &out, &err), 0) << err;
        const std::string flat = std::regex_replace(out, std::regex(R"(\s+)"), " ");
        for (const char* comparison : {"equal to theoretical", "points below theoretical",
                                       "points above theoretical", "% theoretical (measured)",
                                       "Achieved Active Warps"}) {
          EXPECT_EQ(flat.find(comparison), std::string::npos) << comparison;
        }
        if (report.summary().achieved_groups() > 0 && std::string(format) != "csv") {
          EXPECT_NE(flat.find("measured on the traced"), std::string::npos);
        }
      }
    }
  }
  EXPECT_GE(measured, 20);
}

INSTANTIATE_TEST_SUITE_P(Reports, GoldenTest, ::testing::ValuesIn(DiscoverCases()), CaseName);

}  // namespace
}  // namespace occ

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
