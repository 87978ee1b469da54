// The HTML report's Recoverable card states the figures the text report's summary states: on
// every golden case with both outputs (tests/golden/<case>/expected.txt and expected.html), the
// durations and their kind ("measured", or "up to": the occupancy model's upper bound) read from
// the card's figure are those read from the text's "Recoverable" line, in the same order. A card
// that adds a measured gain and a model bound into one figure fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace occ::reports {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// (kind, duration) pairs in reading order: "861.8 ms measured" -> ("measured", "861.8 ms"),
// "up to 5.28 ms" -> ("up to", "5.28 ms"); a duration with neither reads as kind "".
std::vector<std::pair<std::string, std::string>> Figures(const std::string& text) {
  static const std::regex figure("(up to )?([0-9][0-9.,]* (?:ns|µs|ms|s))( measured)?");
  std::vector<std::pair<std::string, std::string>> out;
  for (std::sregex_iterator it(text.begin(), text.end(), figure), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.emplace_back(m[1].matched ? "up to" : m[3].matched ? "measured" : "", m[2].str());
  }
  return out;
}

// The text summary's Recoverable field, wrapped lines joined, up to the "; " that starts its
// explanation. "" when the report has no summary (a --diff report).
std::string TextRecoverable(const std::string& text) {
  const size_t summary = text.find("── Summary");
  if (summary == std::string::npos) return "";
  size_t pos = text.find("\nRecoverable  ", summary);
  if (pos == std::string::npos) return "";
  std::istringstream lines(text.substr(pos + 1));
  std::string line, field;
  std::getline(lines, line);
  field = line.substr(std::string("Recoverable  ").size());
  // Continuation lines are indented to the value column (13 spaces).
  while (std::getline(lines, line) && line.rfind("             ", 0) == 0) field += " " + line.substr(13);
  return field.substr(0, field.find("; "));
}

// The card's figure lines (its .v elements), tags removed and spaces collapsed: "" when the
// report has no such card.
std::string CardRecoverable(const std::string& html) {
  static const std::regex card("<div class=\"k\">Recoverable</div>(.*?)<div class=\"d\">");
  static const std::regex tag("<[^>]*>");
  std::smatch m;
  if (!std::regex_search(html, m, card)) return "";
  static const std::regex spaces(" +");
  return std::regex_replace(std::regex_replace(m[1].str(), tag, " "), spaces, " ");
}

TEST(HtmlCardFigures, TheParsersReadBothKinds) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Figures("861.8 ms measured + up to 5.28 ms by the occupancy model"),
            (Pairs{{"measured", "861.8 ms"}, {"up to", "5.28 ms"}}));
  EXPECT_EQ(Figures("867.1 ms"), (Pairs{{"", "867.1 ms"}}));
  const std::string text =
      "── Summary ──\nGPU time     1.82 ms\nRecoverable  up to 30.0 µs by the occupancy model (an upper "
      "bound); the sum of the actions in \"What\n             to change\"\n\n── Top";
  EXPECT_EQ(TextRecoverable(text), "up to 30.0 µs by the occupancy model (an upper bound)");
}

TEST(HtmlCardFigures, RecoverableCardStatesTheTextsFigures) {
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(OCC_GOLDEN_DIR)) {
    const fs::path txt = entry.path() / "expected.txt", html = entry.path() / "expected.html";
    if (!fs::exists(txt) || !fs::exists(html)) continue;
    const std::string text_field = TextRecoverable(ReadFile(txt));
    const std::string card = CardRecoverable(ReadFile(html));
    const std::string name = entry.path().filename().string();
    ASSERT_EQ(text_field.empty(), card.empty()) << name << ": text \"" << text_field << "\", card \"" << card << "\"";
    if (text_field.empty()) continue;
    ++compared;
    EXPECT_EQ(Figures(card), Figures(text_field)) << name << ": card \"" << card << "\", text \"" << text_field << "\"";
    if (Figures(text_field).empty()) {
      EXPECT_NE(card.find("none"), std::string::npos) << name << ": " << card;
    }
  }
  EXPECT_GE(compared, 10) << "golden reports with a summary not found under " << OCC_GOLDEN_DIR;
}

}  // namespace
}  // namespace occ::reports
