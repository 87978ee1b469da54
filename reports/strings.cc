#include "reports/strings.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

namespace occ::reports {
namespace {

constexpr std::string_view kEllipsis = "…";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid (overlong forms,
// surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0Fu;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

std::string Sanitize(std::string_view s, bool replace_controls) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (len == 1) {
      const auto c = static_cast<unsigned char>(s[i]);
      out += (replace_controls && (c < 0x20 || c == 0x7F)) ? ' ' : s[i];
    } else if (replace_controls && len == 2 && static_cast<unsigned char>(s[i]) == 0xC2 &&
               static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      out += ' ';  // C1 controls (U+0080..U+009F) move terminal cursors too
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

// Byte offset of the code point that starts column `columns` (or s.size()).
size_t ByteOffsetOfColumn(std::string_view s, int columns) {
  int seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == columns) return i;
      ++seen;
    }
  }
  return s.size();
}

// Drops every "ident::" and "(anonymous namespace)::" qualifier, inside template arguments too:
// "at::native::foo<at::Half>" -> "foo<Half>".
std::string DropQualifiers(std::string_view name) {
  static constexpr std::string_view kAnon = "(anonymous namespace)::";
  std::string out;
  size_t i = 0;
  while (i < name.size()) {
    if (name.substr(i, kAnon.size()) == kAnon) {
      i += kAnon.size();
      continue;
    }
    if (IsIdentChar(name[i]) && (i == 0 || !IsIdentChar(name[i - 1]))) {
      size_t j = i;
      while (j < name.size() && IsIdentChar(name[j])) ++j;
      if (name.substr(j, 2) == "::") {
        i = j + 2;
        continue;
      }
      out.append(name.substr(i, j - i));
      i = j;
      continue;
    }
    out += name[i++];
  }
  return out;
}

// Replaces the content of template argument lists nested `keep_depth` or deeper with "…":
// keep_depth 1 turns "f<a<b>, c>" into "f<a<…>, c>"; 0 into "f<…>".
std::string ElideTemplateArgs(std::string_view name, int keep_depth) {
  std::string out;
  int depth = 0;
  for (const char c : name) {
    if (c == '<') {
      if (depth == keep_depth) {
        out += '<';
        out += kEllipsis;
      } else if (depth < keep_depth) {
        out += c;
      }
      ++depth;
    } else if (c == '>' && depth > 0) {
      --depth;
      if (depth <= keep_depth) out += c;
    } else if (depth <= keep_depth) {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string StripSignature(std::string_view demangled) {
  std::string_view s = demangled;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  // Parameter list: the parenthesized group that ends the name.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') {
        ++depth;
      } else if (s[i] == '(') {
        if (--depth == 0) {
          if (i > 0) s = s.substr(0, i);
          break;
        }
      }
    }
  }
  // Return type: everything before the last space outside brackets ("void ", "int ").
  int depth = 0;
  size_t name_start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      name_start = i + 1;
    }
  }
  if (name_start >= s.size()) name_start = 0;
  return std::string(s.substr(name_start));
}

std::string ShortenKernelName(std::string_view demangled, int max_width) {
  max_width = std::max(max_width, 4);
  const std::string bare = StripSignature(SanitizeForDisplay(demangled));
  if (DisplayWidth(bare) <= max_width) return bare;
  const std::string unqualified = DropQualifiers(bare);
  if (DisplayWidth(unqualified) <= max_width) return unqualified;
  const std::string nested_elided = ElideTemplateArgs(unqualified, 1);
  if (DisplayWidth(nested_elided) <= max_width) return nested_elided;
  // Keep the start (the kernel's own name and first arguments): it tells kernels apart best.
  return TruncateToWidth(nested_elided, max_width);
}

int DisplayWidth(std::string_view s) {
  int width = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;
  }
  return width;
}

std::string TruncateToWidth(std::string_view s, int width) {
  if (DisplayWidth(s) <= width) return std::string(s);
  if (width <= 0) return "";
  std::string out(s.substr(0, ByteOffsetOfColumn(s, width - 1)));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += kEllipsis;
  return out;
}

std::string PadRight(std::string_view s, int width) {
  std::string out(s);
  out.append(static_cast<size_t>(std::max(0, width - DisplayWidth(s))), ' ');
  return out;
}

std::string PadLeft(std::string_view s, int width) {
  std::string out(static_cast<size_t>(std::max(0, width - DisplayWidth(s))), ' ');
  out.append(s);
  return out;
}

std::vector<std::string> WrapText(std::string_view text, int width) {
  width = std::max(width, 1);
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j == i) break;
    std::string_view word = text.substr(i, j - i);
    i = j;
    while (DisplayWidth(word) > width) {  // hard-cut words wider than a line
      if (!line.empty()) {
        lines.push_back(line);
        line.clear();
      }
      const size_t cut = ByteOffsetOfColumn(word, width);
      lines.emplace_back(word.substr(0, cut));
      word.remove_prefix(cut);
    }
    if (word.empty()) continue;
    if (line.empty()) {
      line = word;
    } else if (DisplayWidth(line) + 1 + DisplayWidth(word) <= width) {
      line += ' ';
      line += word;
    } else {
      lines.push_back(line);
      line = word;
    }
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string SanitizeForDisplay(std::string_view s) { return Sanitize(s, true); }
std::string SanitizeUtf8(std::string_view s) { return Sanitize(s, false); }

std::string FormatCount(int64_t value) {
  const uint64_t magnitude =
      value < 0 ? static_cast<uint64_t>(-(value + 1)) + 1 : static_cast<uint64_t>(value);
  const std::string digits = std::to_string(magnitude);
  std::string out = value < 0 ? "-" : "";
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    const size_t left = n - i - 1;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return out;
}

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  std::string out = buf;
  if (out.find_first_not_of("-0.") == std::string::npos && out[0] == '-') out.erase(0, 1);
  return out;
}

std::string FormatPct(double pct, int decimals) { return FormatFixed(pct, decimals) + "%"; }

namespace {
std::string FormatDurationImpl(int64_t ns, std::string_view micro) {
  const double v = static_cast<double>(ns);
  const double a = std::fabs(v);
  if (a < 1e3) return std::to_string(ns) + " ns";
  if (a < 1e6) return FormatFixed(v / 1e3, a < 1e4 ? 2 : 1) + " " + std::string(micro);
  if (a < 1e9) return FormatFixed(v / 1e6, a < 1e7 ? 2 : 1) + " ms";
  return FormatFixed(v / 1e9, a < 1e11 ? 2 : 1) + " s";
}
}  // namespace

std::string FormatDuration(int64_t ns) { return FormatDurationImpl(ns, "µs"); }
std::string FormatDurationAscii(int64_t ns) { return FormatDurationImpl(ns, "us"); }

std::string FormatBytes(int64_t bytes) {
  // Exact byte counts unless the value is a whole number of KiB: smem sizes are compared with
  // allocation granularities, so "4,000 B" must never read as "3.9 KiB".
  if (bytes < 1024 || bytes % 1024 != 0) return FormatCount(bytes) + " B";
  if (bytes < 1024 * 1024 || bytes % (1024 * 1024) != 0) return FormatCount(bytes / 1024) + " KiB";
  return FormatCount(bytes / (1024 * 1024)) + " MiB";
}

std::string HtmlEscape(std::string_view s) {
  const std::string clean = SanitizeUtf8(s);
  std::string out;
  out.reserve(clean.size());
  for (const char c : clean) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Controls other than tab/newline are not allowed in HTML text.
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string CsvField(std::string_view s) {
  const std::string clean = SanitizeUtf8(s);
  if (clean.find_first_of(",\"\r\n") == std::string::npos) return clean;
  std::string out = "\"";
  for (const char c : clean) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string MarkdownText(std::string_view s) {
  static constexpr std::string_view kSpecial = "\\`*_{}[]<>()#+-.!|~&$:";
  const std::string clean = SanitizeForDisplay(s);
  std::string out;
  out.reserve(clean.size());
  for (const char c : clean) {
    if (kSpecial.find(c) != std::string_view::npos) {
      // Only characters that can start markup need a backslash; escaping digits' periods or
      // hyphens everywhere would clutter Jira, which shows the backslashes.
      if (c == '.' || c == '-' || c == '+' || c == ':' || c == '(' || c == ')' || c == '{' ||
          c == '}' || c == '$') {
        out += c;
        continue;
      }
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string MarkdownCode(std::string_view s, bool in_table) {
  std::string clean = SanitizeForDisplay(s);
  if (in_table) {
    std::string escaped;
    for (const char c : clean) {
      if (c == '|') escaped += '\\';
      escaped += c;
    }
    clean = std::move(escaped);
  }
  // The fence must be longer than any backtick run inside; pad with spaces when the content
  // starts or ends with a backtick (CommonMark strips one space on each side).
  size_t longest = 0;
  size_t run = 0;
  for (const char c : clean) {
    run = (c == '`') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !clean.empty() && (clean.front() == '`' || clean.back() == '`');
  if (clean.empty()) return "` `";
  return fence + (pad ? " " : "") + clean + (pad ? " " : "") + fence;
}

}  // namespace occ::reports
