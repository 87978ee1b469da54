#include "analyzer/read/rank_identity.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>

#include "schema/meta_keys.h"

namespace occ {
namespace {

// A non-negative decimal that fits an int32, as the tracer writes them; nullopt otherwise.
std::optional<int> ParseCount(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::atoi(text.c_str());
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

}  // namespace

void SetRankFromMeta(const std::map<std::string, std::string>& meta, occtrace::InputFile* file) {
  // Only keys schema/meta_keys.h declares compile: a key nobody writes is never read.
  auto find = [&](meta::CheckedMetaKey<> key) { return meta.find(std::string(key.name)); };
  auto count = [&](meta::CheckedMetaKey<> key) {
    auto it = find(key);
    return it == meta.end() ? -1 : ParseCount(it->second).value_or(-1);
  };
  file->set_rank(count("rank"));
  file->set_local_rank(count("local_rank"));
  file->set_world_size(count("world_size"));
  file->set_local_world_size(count("local_world_size"));
  file->clear_rank_source();
  if (file->rank() >= 0) {
    auto source = find("rank_source");
    file->set_rank_source(source != meta.end() && !source->second.empty() ? source->second
                                                                          : "OCC_META");
  }
}

std::optional<int> RankFromFileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string base = Lower(slash == std::string::npos ? path : path.substr(slash + 1));
  std::optional<int> found;
  int hits = 0;
  for (size_t at = base.find("rank"); at != std::string::npos; at = base.find("rank", at + 1)) {
    // "rank" must start a word: "frank3.db" names no rank.
    if (at > 0 && std::isalpha(static_cast<unsigned char>(base[at - 1]))) continue;
    size_t digits = at + 4;
    if (digits < base.size() && (base[digits] == '-' || base[digits] == '_' || base[digits] == '.')) {
      ++digits;
    }
    size_t end = digits;
    while (end < base.size() && std::isdigit(static_cast<unsigned char>(base[end]))) ++end;
    if (end == digits) continue;
    // "rank3x" is not a number that ends; neither is a rank of more than 9 digits.
    if (end < base.size() && std::isalpha(static_cast<unsigned char>(base[end]))) continue;
    std::optional<int> rank = ParseCount(base.substr(digits, end - digits));
    if (!rank) continue;
    found = rank;
    ++hits;
  }
  return hits == 1 ? found : std::nullopt;
}

std::vector<std::string> ResolveRanks(std::vector<occtrace::InputFile>* files) {
  for (auto& f : *files) {
    if (!f.rank_source().empty() && f.rank() >= 0) continue;
    f.set_rank(-1);
    f.set_local_rank(-1);
    f.set_world_size(-1);
    f.set_local_world_size(-1);
    f.clear_rank_source();
    if (std::optional<int> rank = RankFromFileName(f.path())) {
      f.set_rank(*rank);
      f.set_rank_source("file name");
    }
  }
  std::vector<std::string> warnings;
  if (files->size() < 2) return warnings;
  std::map<int, std::vector<int>> files_by_rank;
  std::set<int> world_sizes;
  for (int i = 0; i < static_cast<int>(files->size()); ++i) {
    const auto& f = (*files)[static_cast<size_t>(i)];
    if (f.rank() >= 0) files_by_rank[f.rank()].push_back(i);
    if (f.world_size() > 0) world_sizes.insert(f.world_size());
  }
  for (const auto& [rank, indexes] : files_by_rank) {
    if (indexes.size() < 2) continue;
    std::vector<std::string> names;
    for (int i : indexes) names.push_back("[" + std::to_string(i) + "] " + (*files)[static_cast<size_t>(i)].path());
    warnings.push_back(std::to_string(indexes.size()) + " files claim rank " + std::to_string(rank) +
                       " (" + Join(names, ", ") + "): they may come from different jobs or runs; "
                       "each is shown as its own rank, tagged with its file");
  }
  if (world_sizes.size() > 1) {
    std::vector<std::string> sizes;
    for (int s : world_sizes) sizes.push_back(std::to_string(s));
    warnings.push_back("the files record different world sizes (" + Join(sizes, ", ") +
                       "): they may come from different jobs");
  } else if (world_sizes.size() == 1) {
    const int world = *world_sizes.begin();
    std::vector<std::string> missing;
    int missing_count = 0;
    for (int r = 0; r < world; ++r) {
      if (files_by_rank.count(r)) continue;
      if (++missing_count <= 16) missing.push_back(std::to_string(r));
    }
    if (missing_count > 0) {
      warnings.push_back("world size " + std::to_string(world) + " but no file for rank" +
                         (missing_count == 1 ? " " : "s ") + Join(missing, ", ") +
                         (missing_count > 16 ? " and " + std::to_string(missing_count - 16) + " more" : "") +
                         ": figures across ranks cover only the files given");
    }
    for (const auto& [rank, indexes] : files_by_rank) {
      if (rank >= world) {
        warnings.push_back("rank " + std::to_string(rank) + " is outside world size " +
                           std::to_string(world));
      }
    }
  }
  return warnings;
}

std::string RankLabel(const std::vector<occtrace::InputFile>& files, int file_index) {
  if (file_index < 0 || file_index >= static_cast<int>(files.size())) return "file ?";
  const auto& f = files[static_cast<size_t>(file_index)];
  if (f.rank() < 0 || f.rank_source().empty()) return "file " + std::to_string(file_index);
  int claims = 0;
  for (const auto& other : files) claims += other.rank() == f.rank() && !other.rank_source().empty();
  std::string label = "rank " + std::to_string(f.rank());
  if (claims > 1) label += " [file " + std::to_string(file_index) + "]";
  return label;
}

}  // namespace occ
