#include "injector/writer/triton_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace occ::inj {
namespace fs = std::filesystem;

TritonCacheIndex::TritonCacheIndex(std::vector<std::string> roots, int64_t rescan_interval_ns)
    : roots_(std::move(roots)), rescan_interval_ns_(rescan_interval_ns) {}

namespace {

const char* NonEmptyEnv(const char* name) {
  const char* value = getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::vector<std::string> TritonCacheIndex::DefaultRoots() {
  std::vector<std::string> roots;
  if (const char* dir = NonEmptyEnv("TRITON_CACHE_DIR")) roots.emplace_back(dir);
  const char* home = NonEmptyEnv("HOME");
  const passwd* user = getpwuid(getuid());
  if (home == nullptr && user != nullptr) home = user->pw_dir;
  if (home != nullptr && *home != '\0') roots.push_back(std::string(home) + "/.triton/cache");
  if (std::string inductor = InductorCacheDir(); !inductor.empty()) roots.push_back(inductor + "/triton");
  return roots;
}

std::string InductorCacheDir() {
  if (const char* dir = NonEmptyEnv("TORCHINDUCTOR_CACHE_DIR")) return dir;
  std::string user;
  for (const char* name : {"LOGNAME", "USER", "LNAME", "USERNAME"}) {
    if (const char* value = NonEmptyEnv(name)) {
      user = value;
      break;
    }
  }
  if (user.empty()) {
    const passwd* entry = getpwuid(getuid());
    if (entry == nullptr || entry->pw_name == nullptr) return "";
    user = entry->pw_name;
  }
  // Inductor's sanitized_username(): characters a file name cannot hold become '_'.
  for (char& c : user) {
    if (std::string_view("\\/:*?\"<>|").find(c) != std::string_view::npos) c = '_';
  }
  const char* tmp = NonEmptyEnv("TMPDIR");
  if (tmp == nullptr) tmp = NonEmptyEnv("TEMP");
  if (tmp == nullptr) tmp = NonEmptyEnv("TMP");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/torchinductor_" + user;
}

bool TritonCacheIndex::MayBeTritonName(const std::string& kernel_name) {
  if (kernel_name.empty() || kernel_name.rfind("_Z", 0) == 0) return false;
  for (char c : kernel_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::optional<TritonCacheIndex::Found> TritonCacheIndex::Find(const std::string& kernel_name, int64_t now_ns,
                                                              std::string_view image) {
  // Triton names a kernel's files after the first 150 characters of its name (compiler.py);
  // Inductor's fused kernels can be longer. A shortened name can be another kernel's too, so
  // such a match counts as the loaded compilation only by its cubin.
  constexpr size_t kFileNameChars = 150;
  const auto lookup = [&]() {
    auto found = json_by_name_.find(kernel_name);
    if (found == json_by_name_.end() && kernel_name.size() > kFileNameChars) {
      found = json_by_name_.find(kernel_name.substr(0, kFileNameChars));
    }
    return found;
  };
  auto found = lookup();
  if (found == json_by_name_.end() && (!last_scan_ns_ || now_ns - *last_scan_ns_ >= rescan_interval_ns_)) {
    last_scan_ns_ = now_ns;
    Rescan();
    found = lookup();
  }
  if (found == json_by_name_.end() || found->second.empty()) return std::nullopt;
  const std::vector<std::string>& candidates = found->second;
  if (candidates.size() == 1 && found->first == kernel_name) return Found{candidates.front(), true};
  if (!image.empty()) {
    for (const std::string& json_path : candidates) {
      const fs::path cubin = fs::path(json_path).replace_extension(".cubin");
      std::error_code error;
      if (fs::file_size(cubin, error) != image.size() || error) continue;
      if (ReadSmallFile(cubin.string(), image.size()) == image) return Found{json_path, true};
    }
  }
  return Found{candidates.front(), false};
}

void TritonCacheIndex::Refresh(int64_t now_ns) {
  last_scan_ns_ = now_ns;
  Rescan();
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
      std::vector<std::string>& paths = json_by_name_[name];
      if (std::find(paths.begin(), paths.end(), path.string()) == paths.end()) paths.push_back(path.string());
    }
  }
}

std::optional<SourceLocation> FirstFileLocation(std::string_view ir) {
  // `loc("x"(#loc))` names a value; a file location is `loc("FILE":LINE:COLUMN)`.
  for (size_t at = ir.find("loc(\""); at != std::string_view::npos; at = ir.find("loc(\"", at + 1)) {
    const size_t begin = at + 5;
    const size_t end = ir.find('"', begin);
    if (end == std::string_view::npos) return std::nullopt;
    if (end + 1 >= ir.size() || ir[end + 1] != ':') continue;
    int64_t line = 0;
    size_t digits = end + 2;
    while (digits < ir.size() && ir[digits] >= '0' && ir[digits] <= '9' && line < 100'000'000) {
      line = line * 10 + (ir[digits] - '0');
      ++digits;
    }
    if (digits == end + 2 || begin == end) continue;
    return SourceLocation{std::string(ir.substr(begin, end - begin)), line};
  }
  return std::nullopt;
}

std::optional<SourceLocation> TritonSourceLocation(const std::string& json_path) {
  for (const char* extension : {".source", ".ttir"}) {
    // Beside the JSON, under the same (possibly shortened) name.
    std::optional<std::string> ir = ReadSmallFile(fs::path(json_path).replace_extension(extension).string(), 16 << 20);
    if (!ir) continue;
    if (std::optional<SourceLocation> location = FirstFileLocation(*ir)) return location;
  }
  return std::nullopt;
}

namespace {

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::string FileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The text between `open` and the next `close` after `from`; advances `from` past it.
std::optional<std::string> Between(std::string_view line, std::string_view open, std::string_view close,
                                   size_t* from) {
  const size_t begin = line.find(open, *from);
  if (begin == std::string_view::npos) return std::nullopt;
  const size_t end = line.find(close, begin + open.size());
  if (end == std::string_view::npos) return std::nullopt;
  *from = end + close.size();
  return std::string(line.substr(begin + open.size(), end - begin - open.size()));
}

}  // namespace

std::vector<std::pair<std::string, InductorKernelOrigin>> ParseInductorWrapper(std::string_view text) {
  std::vector<std::pair<std::string, InductorKernelOrigin>> kernels;
  InductorKernelOrigin pending;
  bool has_nodes = false;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (StartsWith(line, "# kernel path: ")) {
      pending = InductorKernelOrigin{};
      has_nodes = false;
      pending.kernel_file = FileName(line.substr(15));
    } else if (StartsWith(line, "# Topologically Sorted Source Nodes: [") ||
               StartsWith(line, "# Unsorted Source Nodes: [")) {
      // torch/_inductor/utils.py get_kernel_metadata(): "... Source Nodes: [a, b], Original ATen: [aten.x]"
      size_t from = 0;
      std::optional<std::string> nodes = Between(line, "Source Nodes: [", "], Original ATen: [", &from);
      std::optional<std::string> aten;
      if (nodes && line.back() == ']') aten = std::string(line.substr(from, line.size() - 1 - from));
      if (nodes && aten) {
        pending.source_nodes = std::move(*nodes);
        pending.original_aten = std::move(*aten);
        has_nodes = true;
      }
    } else if (StartsWith(line, "#") || line.empty()) {
      continue;  // the rest of the block: the node mapping, the graph fragment
    } else {
      // `NAME = async_compile.triton('NAME', '''`
      size_t from = 0;
      std::optional<std::string> name = Between(line, "= async_compile.triton('", "'", &from);
      if (name && has_nodes && StartsWith(line, *name + " = ")) kernels.emplace_back(std::move(*name), pending);
      has_nodes = false;
    }
  }
  return kernels;
}

InductorOutputIndex::InductorOutputIndex(std::vector<std::string> roots, int64_t rescan_interval_ns)
    : roots_(std::move(roots)), rescan_interval_ns_(rescan_interval_ns) {}

std::optional<InductorKernelOrigin> InductorOutputIndex::Find(const std::string& kernel_name,
                                                              const std::string& kernel_file, int64_t now_ns) {
  std::optional<InductorKernelOrigin> found = Lookup(kernel_name, kernel_file);
  if (!found && (!last_scan_ns_ || now_ns - *last_scan_ns_ >= rescan_interval_ns_)) {
    last_scan_ns_ = now_ns;
    Rescan();
    found = Lookup(kernel_name, kernel_file);
  }
  return found;
}

std::optional<InductorKernelOrigin> InductorOutputIndex::Lookup(const std::string& kernel_name,
                                                                const std::string& kernel_file) const {
  if (!kernel_file.empty()) {
    // Known file, no module that declares it: never another program's kernel of the same name.
    auto exact = by_kernel_file_.find(FileName(kernel_file));
    if (exact == by_kernel_file_.end()) return std::nullopt;
    return exact->second;
  }
  auto named = by_name_.find(kernel_name);
  if (named == by_name_.end() || named->second.empty()) return std::nullopt;
  for (const InductorKernelOrigin& other : named->second) {
    if (other.source_nodes != named->second.front().source_nodes ||
        other.original_aten != named->second.front().original_aten) {
      return std::nullopt;
    }
  }
  return named->second.front();
}

void InductorOutputIndex::Refresh(int64_t now_ns) {
  last_scan_ns_ = now_ns;
  Rescan();
}

void InductorOutputIndex::Rescan() {
  // Output code and kernel files: <root>/<first 2 characters of the hash>/c<hash>.py. Each file is
  // content-addressed, so one read is enough; kernel files hold no async_compile call.
  constexpr size_t kMaxWrapperBytes = 32 << 20;
  for (const std::string& root : roots_) {
    std::error_code error;
    for (fs::directory_iterator dir(root, fs::directory_options::skip_permission_denied, error);
         !error && dir != fs::directory_iterator(); dir.increment(error)) {
      if (dir->path().filename().string().size() != 2 || !dir->is_directory(error)) continue;
      std::error_code inner_error;
      for (fs::directory_iterator file(dir->path(), fs::directory_options::skip_permission_denied, inner_error);
           !inner_error && file != fs::directory_iterator(); file.increment(inner_error)) {
        const fs::path& path = file->path();
        if (path.extension() != ".py" || !read_files_.insert(path.string()).second) continue;
        std::optional<std::string> text = ReadSmallFile(path.string(), kMaxWrapperBytes);
        if (!text || text->find("async_compile.triton(") == std::string::npos) continue;
        for (auto& [name, origin] : ParseInductorWrapper(*text)) {
          origin.wrapper_path = path.string();
          if (!origin.kernel_file.empty()) by_kernel_file_.try_emplace(origin.kernel_file, origin);
          by_name_[name].push_back(std::move(origin));
        }
      }
    }
  }
}

std::optional<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  // Sized from the file, not from max_bytes: Inductor's cache is read file by file, and a buffer
  // of the largest size allowed for each would cost more than the reads.
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > max_bytes) return std::nullopt;
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(text.data(), size);
  if (in.gcount() != size) return std::nullopt;
  return text;
}

}  // namespace occ::inj
