// Opens HTML reports in a real headless Chromium (file://, no network): the printer test
// fixture and every golden expected.html (the whole pipeline's output). Checks that each renders
// its tables and charts, that the inline script runs to the end without an error, and that
// clicking a header sorts the table; at a 1,400 px window the top table fits and chart labels
// neither overlap nor leave their chart. Keeps screenshots in the build dir for review:
//   build/tests/reports/artifacts/h100_report.png, golden_h100_training.png
// Skips with a visible reason when chromium is not installed (scripts/setup.sh --test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
using ::testing::HasSubstr;
using ::testing::Not;

std::string FindChromium() {
  if (const char* env = std::getenv("OCC_CHROMIUM"); env != nullptr && *env != '\0') return env;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
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

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

class HtmlBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium not found (install it with scripts/setup.sh --test, or set "
                      "OCC_CHROMIUM): the HTML report was not checked in a browser";
    }
    artifacts_ = OCC_REPORTS_ARTIFACT_DIR;
    fs::create_directories(artifacts_);
    char profile[] = "/tmp/occ_chromium_XXXXXX";
    ASSERT_NE(mkdtemp(profile), nullptr);
    profile_ = profile;
  }
  void TearDown() override {
    if (!profile_.empty()) {
      std::error_code ignored;
      fs::remove_all(profile_, ignored);
    }
  }

  // Runs headless Chromium on `page` with `mode_flags`; stdout to `out_file`, stderr kept in
  // log_. Returns the exit status.
  int RunChromium(const fs::path& page, const std::string& mode_flags, const fs::path& out_file) {
    const fs::path log = artifacts_ / (out_file.stem().string() + ".log");
    const std::string command =
        "timeout 120 " + Quote(chromium_) +
        " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
        " --disable-background-networking --disable-component-update --disable-sync"
        " --disable-extensions --disable-default-apps --mute-audio --hide-scrollbars"
        " --host-resolver-rules='MAP * ~NOTFOUND' --enable-logging=stderr --v=0"
        " --user-data-dir=" + Quote(profile_.string()) + " " + mode_flags + " " +
        Quote("file://" + page.string()) + " > " + Quote(out_file.string()) + " 2> " +
        Quote(log.string());
    const int status = std::system(command.c_str());
    log_ = ReadFile(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string chromium_;
  fs::path artifacts_;
  fs::path profile_;
  std::string log_;
};

TEST_F(HtmlBrowserTest, RendersTablesAndChartsWithoutScriptErrors) {
  const std::string html = testing::Render("html", testing::LoadReport("h100_report.textproto"));
  const fs::path page = artifacts_ / "h100_report.html";
  WriteFile(page, html);

  ASSERT_EQ(RunChromium(page, "--dump-dom", artifacts_ / "h100_report.dom.html"), 0) << log_;
  const std::string dom = ReadFile(artifacts_ / "h100_report.dom.html");
  EXPECT_THAT(log_, Not(HasSubstr("Uncaught"))) << log_;
  EXPECT_THAT(log_, Not(HasSubstr("Content Security Policy"))) << log_;
  // The script's last statement ran: run facts, top table, 3 metric tables, unjudged; 3 curves
  // and the limiter bars.
  EXPECT_THAT(dom, HasSubstr("data-ok=\"tables=6 sortable=2 charts=4\"")) << dom.substr(0, 2000);
  EXPECT_THAT(dom, HasSubstr("<th class=\"num\" tabindex=\"0\" title=\"Sort by Time (%)\">"));
  // The hostile kernel name is text in the DOM, not markup.
  EXPECT_THAT(dom, HasSubstr("evil&lt;\"&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(dom, Not(HasSubstr("<img")));

  const fs::path png = artifacts_ / "h100_report.png";
  fs::remove(png);
  ASSERT_EQ(RunChromium(page, "--screenshot=" + Quote(png.string()) + " --window-size=1360,4200",
                        artifacts_ / "h100_report.screenshot.out"),
            0)
      << log_;
  const std::string image = ReadFile(png);
  ASSERT_GT(image.size(), 20000u) << "screenshot missing or blank: " << png;
  EXPECT_EQ(image.substr(0, 8), "\x89PNG\r\n\x1a\n");
  std::cout << "screenshot: " << png.string() << "\n";
}

TEST_F(HtmlBrowserTest, ClickingAHeaderSortsTheTable) {
  std::string html = testing::Render("html", testing::LoadReport("h100_report.textproto"));
  // Test-only driver appended after the report's own script: click "Total time" twice and
  // record the rank column after each click.
  const std::string driver = R"JS(<script>
(function () {
  var table = document.getElementById('top-table');
  var header = table.tHead.rows[0].cells[3];
  function ranks() {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      return r.cells[0].textContent; }).join(',');
  }
  header.click();
  var first = ranks() + ':' + header.getAttribute('aria-sort');
  header.click();
  document.body.setAttribute('data-sorted', first + ' ' + ranks() + ':' + header.getAttribute('aria-sort'));
})();
</script>
</body>)JS";
  html.replace(html.rfind("</body>"), 7, driver);
  const fs::path page = artifacts_ / "h100_report_sort.html";
  WriteFile(page, html);
  ASSERT_EQ(RunChromium(page, "--dump-dom", artifacts_ / "h100_report_sort.dom.html"), 0) << log_;
  const std::string dom = ReadFile(artifacts_ / "h100_report_sort.dom.html");
  EXPECT_THAT(log_, Not(HasSubstr("Uncaught"))) << log_;
  // Total times: #1 740 ms, #2 407 ms, #3 166.5 ms. Numeric columns sort descending first.
  EXPECT_THAT(dom, HasSubstr("data-sorted=\"1,2,3:descending 3,2,1:ascending\""));
}

// The HTML reports the whole pipeline produced (the golden files of tests/golden, from trace
// SQL through the analyzer): each renders, its script runs to the end, every chart is there.
TEST_F(HtmlBrowserTest, GoldenReportsRender) {
  int pages = 0;
  for (const auto& entry : fs::directory_iterator(OCC_GOLDEN_DIR)) {
    const fs::path page = entry.path() / "expected.html";
    if (!fs::exists(page)) continue;
    ++pages;
    const std::string name = entry.path().filename().string();
    const std::string html = ReadFile(page);
    size_t charts = 0;
    for (size_t pos = html.find("<svg class=\"chart"); pos != std::string::npos;
         pos = html.find("<svg class=\"chart", pos + 1)) {
      ++charts;
    }
    const fs::path dom_path = artifacts_ / ("golden_" + name + ".dom.html");
    ASSERT_EQ(RunChromium(page, "--dump-dom", dom_path), 0) << name << ": " << log_;
    const std::string dom = ReadFile(dom_path);
    EXPECT_THAT(log_, Not(HasSubstr("Uncaught"))) << name << ": " << log_;
    EXPECT_THAT(dom, ::testing::ContainsRegex("data-ok=\"tables=[0-9]+ sortable=[0-9]+ charts=" +
                                              std::to_string(charts) + "\""))
        << name;
    if (name == "h100_training") {
      const fs::path png = artifacts_ / "golden_h100_training.png";
      ASSERT_EQ(RunChromium(page, "--screenshot=" + Quote(png.string()) + " --window-size=1360,5200",
                            artifacts_ / "golden_h100_training.screenshot.out"),
                0)
          << log_;
      EXPECT_GT(fs::file_size(png), 20000u);
    }
  }
  EXPECT_GE(pages, 3) << "golden HTML reports not found under " << OCC_GOLDEN_DIR;
}

// Layout at a 1,400 px wide window, measured by the browser on every golden report: the top
// table fits its section (its last column, Recoverable, is not cut off behind a scroll), and no
// two labels of a chart overlap or leave the chart. The driver script writes what it found
// into the body's data-layout attribute.
TEST_F(HtmlBrowserTest, GoldenReportsFitAt1400PxAndChartLabelsDoNotOverlap) {
  const std::string driver = R"JS(<script>
(function () {
  var problems = [];
  var table = document.getElementById('top-table');
  if (table) {
    var wrap = table.parentElement;
    if (wrap.scrollWidth > wrap.clientWidth + 1) {
      problems.push('top table ' + wrap.scrollWidth + ' px wide in ' + wrap.clientWidth + ' px');
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll('svg.chart'), function (svg, c) {
    var box = svg.getBoundingClientRect();
    var texts = Array.prototype.map.call(svg.querySelectorAll('text'), function (t) {
      return {text: t.textContent, r: t.getBoundingClientRect()};
    });
    texts.forEach(function (a, i) {
      if (a.r.left < box.left - 1 || a.r.right > box.right + 1 || a.r.top < box.top - 1 ||
          a.r.bottom > box.bottom + 1) {
        problems.push('chart ' + c + ': "' + a.text + '" leaves the chart');
      }
      texts.slice(i + 1).forEach(function (b) {
        var w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        var h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (w > 1 && h > 1) problems.push('chart ' + c + ': "' + a.text + '" overlaps "' + b.text + '"');
      });
    });
  });
  document.body.setAttribute('data-layout', problems.length ? problems.join(' | ') : 'ok');
})();
</script>
</body>)JS";
  int pages = 0;
  for (const auto& entry : fs::directory_iterator(OCC_GOLDEN_DIR)) {
    const fs::path golden = entry.path() / "expected.html";
    if (!fs::exists(golden)) continue;
    ++pages;
    const std::string name = entry.path().filename().string();
    std::string html = ReadFile(golden);
    html.replace(html.rfind("</body>"), 7, driver);
    const fs::path page = artifacts_ / ("layout_" + name + ".html");
    WriteFile(page, html);
    const fs::path dom_path = artifacts_ / ("layout_" + name + ".dom.html");
    ASSERT_EQ(RunChromium(page, "--dump-dom --window-size=1400,4000", dom_path), 0) << name << ": " << log_;
    std::smatch found;
    const std::string dom = ReadFile(dom_path);
    ASSERT_TRUE(std::regex_search(dom, found, std::regex("data-layout=\"([^\"]*)\""))) << name;
    EXPECT_EQ(found[1].str(), "ok") << name;
  }
  EXPECT_GE(pages, 3) << "golden HTML reports not found under " << OCC_GOLDEN_DIR;
}

}  // namespace
}  // namespace occ::reports
