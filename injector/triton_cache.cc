#include "injector/triton_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace occ::inj {
namespace fs = std::filesystem;

TritonCacheIndex::TritonCacheIndex(std::vector<std::string> roots, int64_t rescan_interval_ns)
    : roots_(std::move(roots)), rescan_interval_ns_(rescan_interval_ns) {}

std::vector<std::string> TritonCacheIndex::DefaultRoots() {
  std::vector<std::string> roots;
  if (const char* dir = getenv("TRITON_CACHE_DIR"); dir != nullptr && *dir != '\0') roots.emplace_back(dir);
  const char* home = getenv("HOME");
  const passwd* user = getpwuid(getuid());
  if ((home == nullptr || *home == '\0') && user != nullptr) home = user->pw_dir;
  if (home != nullptr && *home != '\0') roots.push_back(std::string(home) + "/.triton/cache");
  if (user != nullptr && user->pw_name != nullptr) {
    roots.push_back(std::string("/tmp/torchinductor_") + user->pw_name + "/triton");
  }
  return roots;
}

bool TritonCacheIndex::MayBeTritonName(const std::string& kernel_name) {
  if (kernel_name.empty() || kernel_name.rfind("_Z", 0) == 0) return false;
  for (char c : kernel_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> TritonCacheIndex::Find(const std::string& kernel_name, int64_t now_ns) {
  auto found = json_by_name_.find(kernel_name);
  if (found == json_by_name_.end() && (!last_scan_ns_ || now_ns - *last_scan_ns_ >= rescan_interval_ns_)) {
    last_scan_ns_ = now_ns;
    Rescan();
    found = json_by_name_.find(kernel_name);
  }
  if (found == json_by_name_.end()) return std::nullopt;
  return found->second;
}

void TritonCacheIndex::Rescan() {
  // Triton: <root>/<hash>/<name>.json; Inductor: <root>/<device>/<hash>/<name>.json. Deeper
  // trees are not Triton's; the depth cap bounds a walk of a mistaken root such as $HOME.
  constexpr int kMaxDepth = 3;
  for (const std::string& root : roots_) {
    std::error_code error;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
      const fs::path& path = it->path();
      if (path.extension() != ".json" || !it->is_regular_file(error)) continue;
      std::string name = path.stem().string();
      // Triton also keeps __grp__<name>.json (the list of a kernel's files): not metadata.
      if (name.rfind("__grp__", 0) == 0) continue;
      json_by_name_.try_emplace(std::move(name), path.string());
    }
  }
}

std::optional<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  text.resize(max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  const auto got = static_cast<size_t>(in.gcount());
  if (got > max_bytes) return std::nullopt;
  text.resize(got);
  return text;
}

}  // namespace occ::inj
