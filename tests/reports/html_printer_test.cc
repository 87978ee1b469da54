#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/reports/test_report.h"

namespace occ::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::LoadReport;
using testing::ParseReport;
using testing::Render;

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

// Checks that every element is closed in order (void and self-closed elements aside), skipping
// the raw text of <style> and <script>. Returns the first problem, or "".
std::string CheckNesting(const std::string& html, std::set<std::string>* tags_seen) {
  static const std::set<std::string> kVoid = {"meta", "br", "link", "img", "input", "hr"};
  std::vector<std::string> stack;
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    if (html.compare(i, 2, "<!") == 0) {
      i = html.find('>', i);
      continue;
    }
    const size_t end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = html.substr(i + 1, end - i - 1);
    const bool closing = tag[0] == '/';
    std::smatch m;
    const std::string body = closing ? tag.substr(1) : tag;
    if (!std::regex_search(body, m, std::regex("^([a-zA-Z][a-zA-Z0-9]*)"))) return "bad tag <" + tag + ">";
    const std::string name = m[1];
    tags_seen->insert(name);
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        return "</" + name + "> closes <" + (stack.empty() ? std::string("nothing") : stack.back()) + ">";
      }
      stack.pop_back();
    } else if (kVoid.count(name) == 0 && tag.back() != '/') {
      stack.push_back(name);
      if (name == "style" || name == "script") {  // raw text up to the end tag
        const size_t close = html.find("</" + name + ">", end);
        if (close == std::string::npos) return "unclosed <" + name + ">";
        i = close;
        continue;
      }
    }
    i = end + 1;
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

TEST(HtmlPrinterTest, WellFormedAndOnlyExpectedElements) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  ASSERT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  std::set<std::string> tags;
  EXPECT_EQ(CheckNesting(html, &tags), "");
  // Nothing that could load a resource: no img, link, iframe, object, embed, audio, video.
  const std::set<std::string> allowed = {
      "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "div", "main",
      "section", "table", "thead", "tbody", "tr", "th", "td", "span", "code", "a", "strong", "br",
      "p", "svg", "line", "text", "polyline", "circle", "rect", "g", "details", "summary",
      "article", "ul", "ol", "li", "i", "footer", "script"};
  for (const std::string& tag : tags) EXPECT_EQ(allowed.count(tag), 1u) << "<" << tag << ">";
}

TEST(HtmlPrinterTest, MakesNoNetworkRequests) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  EXPECT_THAT(html, HasSubstr("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"));
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_EQ(Count(html, "<script"), 1);
  EXPECT_THAT(html, HasSubstr("<script>\n(function () {"));
  // Links only to anchors inside the page.
  const std::regex href("href=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it) {
    EXPECT_EQ((*it)[1].str()[0], '#') << (*it)[0];
  }
}

TEST(HtmlPrinterTest, EscapesEveryTraceString) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("</script><")));
  EXPECT_THAT(html, HasSubstr("evil&lt;&quot;&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;, "
                              "&#39;q&#39; &amp; co&gt;"));
  EXPECT_THAT(html, HasSubstr("python train.py --batch 64 --steps 20 --tag &quot;a|b&quot;"));
  EXPECT_EQ(Count(html, "</script>"), 1);

  const std::string hostile = Render("html", ParseReport(R"pb(
    tool_version: "<b>1</b>"
    files { path: "\"><svg onload=alert(1)>.db" command: "x' onmouseover='alert(1)" }
    devices { name: "GPU</title><script>alert(1)</script>" }
    groups {
      rank: 1 name: "k<\"'&>" judged: true limiting_factor: "<x>"
      occupancy { limiter_sentence: "</div><script>" }
      suggestions { kind: "block_size" block_size: 64 text: "<b>" assumptions: "&amp;" }
      issues: "<i>" curve { block_size: 32 occupancy_pct: 50 }
    }
    unjudged { name: "</td>" not_judged_reason: "<br>" }
    notes: "<hr>"
  )pb"));
  EXPECT_EQ(Count(hostile, "<script"), 1);
  EXPECT_THAT(hostile, Not(HasSubstr("<svg onload")));
  EXPECT_THAT(hostile, Not(HasSubstr("<b>")));
  EXPECT_THAT(hostile, Not(HasSubstr("<hr>")));
  EXPECT_THAT(hostile, Not(HasSubstr("' onmouseover='")));
  EXPECT_THAT(hostile, HasSubstr("&amp;amp;"));
  std::set<std::string> tags;
  EXPECT_EQ(CheckNesting(hostile, &tags), "");
}

TEST(HtmlPrinterTest, SummaryAndSelfDescription) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  EXPECT_THAT(html, HasSubstr("<title>Occupancy report — NVIDIA H100 80GB HBM3</title>"));
  EXPECT_THAT(html, HasSubstr("<div class=\"k\">Below 50% theoretical</div><div class=\"v bad\">61.2%</div>"));
  EXPECT_THAT(html, HasSubstr("<div class=\"k\">Achieved occupancy (measured)</div><div class=\"v\">41.9%</div>"));
  EXPECT_THAT(html, HasSubstr("<div class=\"k\">Recoverable</div><div class=\"v\">up to 412.0 ms <span "
                              "class=\"u\">model bound</span></div>"));
  EXPECT_THAT(html, HasSubstr("<strong>NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs)</strong>"));
  EXPECT_THAT(html, HasSubstr("<code>runs/train_step.db</code> — occtrace trace, schema 1, 48,213 launches"));
  EXPECT_THAT(html, HasSubstr("<meta name=\"generator\" content=\"occ-report 0.1.0\">"));
}

// The card states what the summary's text states: 861.8 ms measured and up to 5.28 ms from the
// model, apart, never their 867.1 ms sum (a measured gain and an upper bound are not one kind).
TEST(HtmlPrinterTest, RecoverableCardKeepsMeasuredAndModelApart) {
  const std::string html = Render("html", ParseReport(R"pb(
    summary { total_gpu_ns: 1383000000 recoverable_ns_upper_bound: 867100000
              recoverable_measured_ns: 861800000 recoverable_model_ns: 5280000 }
  )pb"));
  EXPECT_THAT(html, HasSubstr("<div class=\"k\">Recoverable</div><div class=\"v\">861.8 ms <span "
                              "class=\"u\">measured</span></div><div class=\"v v2\">+ up to 5.28 ms <span "
                              "class=\"u\">model bound</span></div><div class=\"d\">861.8 ms measured + up "
                              "to 5.28 ms by the occupancy model (an upper bound)"));
  EXPECT_THAT(html, Not(HasSubstr("867.1 ms")));
  const std::string none = Render("html", ParseReport("summary { total_gpu_ns: 1000 }"));
  EXPECT_THAT(none, HasSubstr("<div class=\"k\">Recoverable</div><div class=\"v\">none</div>"));
}

TEST(HtmlPrinterTest, SortableTableWithNumericKeys) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  EXPECT_THAT(html, HasSubstr("<table class=\"sortable\" id=\"top-table\">"));
  // Durations sort by nanoseconds, not by their text.
  EXPECT_THAT(html, HasSubstr("<td class=\"num\" data-v=\"740000000.000\">740.0 ms</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\" data-v=\"37.500\"><span class=\"meter\">"));
  // Not measured sorts below every measured value and reads as a dash.
  EXPECT_THAT(html, HasSubstr("<td class=\"num\" data-v=\"-1\">–</td>"));
}

TEST(HtmlPrinterTest, ChartsForEveryTopKernelAndTheLimiters) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  EXPECT_EQ(Count(html, "<svg class=\"chart curve\""), 3);
  EXPECT_EQ(Count(html, "<svg class=\"chart bars\""), 1);
  EXPECT_THAT(html, HasSubstr("<title>current: 256 threads, 37.5%</title>"));
  EXPECT_THAT(html, HasSubstr("<title>suggested: 128 threads, 43.8% predicted</title>"));
  // One point per curve entry, with its value in the tooltip.
  EXPECT_THAT(html, HasSubstr("<title>128 threads: 43.8% (7 blocks/SM)</title>"));
  EXPECT_THAT(html, HasSubstr("registers: 62.0% of GPU time (1.15 s)"));
}

TEST(HtmlPrinterTest, KernelSectionsCarryNsightComputeFigures) {
  const std::string html = Render("html", LoadReport("h100_report.textproto"));
  EXPECT_THAT(html, HasSubstr("<tr><th>Theoretical Occupancy</th><td class=\"num\">37.50 %</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>Block Limit Registers</th><td class=\"num\">3</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>Achieved Occupancy (replay)</th><td class=\"num\">35.20 %</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<strong>Limiter:</strong> Theoretical occupancy 37.5% (24 of 64 warps per SM) is limited by registers"));
  EXPECT_THAT(html, HasSubstr("<strong>Recoverable:</strong> up to 246.7 ms (upper bound)"));
  EXPECT_THAT(html, HasSubstr("<section id=\"unjudged\">"));
}

TEST(HtmlPrinterTest, SparseReportStillRenders) {
  const std::string html = Render("html", ParseReport("tool_version: \"0.1.0\""));
  std::set<std::string> tags;
  EXPECT_EQ(CheckNesting(html, &tags), "");
  EXPECT_THAT(html, HasSubstr("No kernel launches in this report."));
}

}  // namespace
}  // namespace occ::reports
