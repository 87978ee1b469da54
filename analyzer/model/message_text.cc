#include "analyzer/model/message_text.h"

#include <cstdio>

namespace occ {

std::string Fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string Pct(double value) {
  std::string s = Fixed(value, 2);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + "%";
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string BlocksPerSm(int64_t blocks) {
  return std::to_string(blocks) + (blocks == 1 ? " block/SM" : " blocks/SM");
}

std::string DimsText(const int64_t dims[3]) {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

std::string Abbrev(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars) + "...";
}

std::string AbbrevOneLine(const std::string& text, size_t max_chars) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_chars) return out + "...";
    out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  }
  return out;
}

}  // namespace occ
