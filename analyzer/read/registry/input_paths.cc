#include "analyzer/read/registry/input_paths.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "analyzer/read/registry/input_formats.h"
#include "analyzer/read/summary/trace_summary.h"

namespace occ {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool EndsWith(const std::string& name, const char* ext) {
  const size_t n = std::strlen(ext);
  return name.size() > n && name.compare(name.size() - n, n, ext) == 0;
}

bool HasFormatExtension(const std::string& name) {
  for (const InputFormat* format : InputFormats()) {
    for (const std::string& ext : format->extensions) {
      if (EndsWith(name, ext.c_str())) return true;
    }
  }
  return false;
}

// "*.db, *.sqlite, ...": every format's extensions, each once, in the table's order.
std::string FormatExtensions() {
  std::vector<std::string> seen;
  std::string text;
  for (const InputFormat* format : InputFormats()) {
    for (const std::string& ext : format->extensions) {
      if (std::find(seen.begin(), seen.end(), ext) != seen.end()) continue;
      seen.push_back(ext);
      text += (text.empty() ? "*" : ", *") + ext;
    }
  }
  return text;
}

bool IsSummaryName(const std::string& name) { return EndsWith(name, kSummaryExtension); }

StatusOr<std::vector<std::string>> TraceFilesIn(const std::string& dir) {
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return BadInput(dir + ": cannot read the directory: " + std::strerror(errno));
  std::vector<std::string> traces;
  std::set<std::string> summaries;
  while (const dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    const bool summary = IsSummaryName(name);
    if (name.empty() || name[0] == '.' || !(summary || HasFormatExtension(name))) continue;
    const std::string path = (dir.back() == '/' ? dir : dir + "/") + name;
    struct stat st {};
    // stat follows links: a link to a trace file counts, a directory named x.db does not.
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (summary) {
      summaries.insert(path);
    } else {
      traces.push_back(path);
    }
  }
  closedir(handle);
  std::vector<std::string> names(summaries.begin(), summaries.end());
  for (const auto& trace : traces) {
    if (!summaries.count(DefaultSummaryPath(trace))) names.push_back(trace);
  }
  if (names.empty()) {
    return BadInput(dir + ": directory without trace files (" + FormatExtensions() + ")");
  }
  std::sort(names.begin(), names.end(), NaturalLess);
  return names;
}

}  // namespace

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && IsDigit(a[ei])) ++ei;
      while (ej < b.size() && IsDigit(b[ej])) ++ej;
      // Compare the runs by value without converting: leading zeros off, then length, then text.
      size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      const int cmp = a.compare(si, ei - si, b, sj, ej - sj);
      if (cmp != 0) return cmp < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal by value ("rank01" vs "rank1"): any fixed order
}

StatusOr<std::vector<std::string>> ExpandInputPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& path : paths) {
    struct stat st {};
    if (!path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      OCC_ASSIGN_OR_RETURN(std::vector<std::string> files, TraceFilesIn(path));
      out.insert(out.end(), files.begin(), files.end());
    } else {
      out.push_back(path);
    }
  }
  return out;
}

}  // namespace occ
