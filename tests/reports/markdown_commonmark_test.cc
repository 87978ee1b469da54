// Renders Markdown reports with a real CommonMark renderer (Debian's `cmark`, the reference
// implementation) and checks that no emphasis marker is left as a literal asterisk: "**#1 **`x`"
// (space before the closing `**`) or "****`x`" (an empty bold span) render as text, not bold.
// Inputs: every golden expected.md under tests/golden (the whole pipeline's output) and the
// printer test fixtures. An asterisk the report escaped on purpose ("\*", e.g. `char const*` in a
// warning) is exempt: it is replaced by a marker before rendering.
// Skips with a visible reason when cmark is not installed (scripts/setup.sh --test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kEscapedStar = "ESCAPEDSTAR";

std::string FindCmark() {
  if (const char* env = std::getenv("OCC_CMARK"); env != nullptr && *env != '\0') return env;
  for (const char* path : {"/usr/bin/cmark", "/usr/local/bin/cmark"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Backslash escapes as CommonMark reads them: "\*" is a literal asterisk the printer meant, so
// it becomes a marker; "\\" is an escaped backslash, so the character after it is not escaped.
std::string MarkEscapedStars(const std::string& markdown) {
  std::string out;
  for (size_t i = 0; i < markdown.size(); ++i) {
    if (markdown[i] == '\\' && i + 1 < markdown.size()) {
      if (markdown[i + 1] == '*') {
        out += kEscapedStar;
      } else {
        out += markdown.substr(i, 2);
      }
      ++i;
      continue;
    }
    out += markdown[i];
  }
  return out;
}

// The rendered text a reader sees, outside code spans and code blocks: HTML from cmark with
// <code>…</code> removed (cmark escapes '<' inside it, so the first '<' closes it), then tags.
std::string VisibleTextOutsideCode(const std::string& html) {
  static const std::regex code("<code[^>]*>[^<]*</code>");
  static const std::regex tag("<[^>]*>");
  return std::regex_replace(std::regex_replace(html, code, ""), tag, "");
}

class MarkdownCommonMarkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cmark_ = FindCmark();
    if (cmark_.empty()) {
      GTEST_SKIP() << "cmark not found (install it with scripts/setup.sh --test, or set OCC_CMARK): "
                      "the Markdown reports were not rendered with a CommonMark renderer";
    }
  }

  // Renders `markdown` with cmark; fails the calling test when cmark fails.
  std::string RenderCommonMark(const std::string& markdown) {
    char path[] = "/tmp/occ_cmark_XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    if (fd < 0) return "";
    close(fd);
    { std::ofstream(path, std::ios::binary) << markdown; }
    const std::string command = "'" + cmark_ + "' '" + path + "'";
    std::string html;
    FILE* pipe = popen(command.c_str(), "r");
    EXPECT_NE(pipe, nullptr) << command;
    if (pipe != nullptr) {
      std::array<char, 4096> chunk;
      for (size_t n; (n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) html.append(chunk.data(), n);
      const int status = pclose(pipe);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
    }
    fs::remove(path);
    return html;
  }

  // Every line of rendered text holding an asterisk that is not one the printer escaped.
  std::vector<std::string> StrayAsterisks(const std::string& markdown) {
    std::vector<std::string> stray;
    std::istringstream lines(VisibleTextOutsideCode(RenderCommonMark(MarkEscapedStars(markdown))));
    for (std::string line; std::getline(lines, line);) {
      if (line.find('*') != std::string::npos) stray.push_back(line);
    }
    return stray;
  }

  std::string cmark_;
};

// The check itself catches both broken forms, and leaves well-formed bold and escapes alone.
TEST_F(MarkdownCommonMarkTest, TheCheckSeesBrokenBold) {
  EXPECT_EQ(StrayAsterisks("1. **#1 **`stencil5` (cuda)\n").size(), 1u);
  EXPECT_EQ(StrayAsterisks("1. ****`triton_per_fused`\n").size(), 1u);
  EXPECT_TRUE(StrayAsterisks("1. **#1 `stencil5`** (cuda)\n").empty());
  EXPECT_TRUE(StrayAsterisks("1. **`triton_per_fused`** (inductor)\n").empty());
  EXPECT_TRUE(StrayAsterisks("Warning: `f(char const*)` and f(char const\\*)\n").empty());
}

TEST_F(MarkdownCommonMarkTest, GoldenReportsHaveNoStrayAsterisks) {
  int pages = 0;
  for (const auto& entry : fs::directory_iterator(OCC_GOLDEN_DIR)) {
    const fs::path page = entry.path() / "expected.md";
    if (!fs::exists(page)) continue;
    ++pages;
    for (const std::string& line : StrayAsterisks(ReadFile(page))) {
      ADD_FAILURE() << entry.path().filename().string() << ": literal asterisk in the rendered text: "
                    << line;
    }
  }
  EXPECT_GE(pages, 3) << "golden Markdown reports not found under " << OCC_GOLDEN_DIR;
}

// The printer fixture, and actions with and without a shown group's rank (an Inductor kernel
// outside the top table has none: the "****`x`" case).
TEST_F(MarkdownCommonMarkTest, PrinterOutputHasNoStrayAsterisks) {
  occtrace::Report with_actions = testing::ParseReport(R"pb(
    summary { total_gpu_ns: 1000000 launches: 3 kernels: 2 groups: 2 }
    actions { group_rank: 1 kernel: "stencil5" origin: "cuda" change: "Launch it as <<<32768, 256>>>"
              evidence: "measured" gain_ns: 500000 gain_pct: 50 gain_kind: "measured" confidence: "high" }
    actions { group_rank: 0 kernel: "triton_per_fused_sum_0" origin: "inductor" change: "num_warps=4"
              evidence: "model" gain_ns: 20000 gain_pct: 2 gain_kind: "upper bound" confidence: "low" }
  )pb");
  for (const auto& [name, report] :
       {std::pair{"h100_report.textproto", testing::LoadReport("h100_report.textproto")},
        std::pair{"two actions", with_actions}}) {
    const std::string markdown = testing::Render("markdown", report);
    for (const std::string& line : StrayAsterisks(markdown)) {
      ADD_FAILURE() << name << ": literal asterisk in the rendered text: " << line;
    }
  }
}

}  // namespace
}  // namespace occ::reports
