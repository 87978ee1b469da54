// TritonCacheIndex: finds the JSON metadata Triton writes beside each kernel it compiles
// (<cache>/<hash>/<kernel name>.json: num_warps, num_stages, num_ctas, shared, ...), so the
// trace can carry the compile settings a Triton user tunes (OCC_TRITON_KERNEL).
//
// Roots searched: $TRITON_CACHE_DIR as it was when tracing started, ~/.triton/cache (Triton's
// default) and /tmp/torchinductor_<user>/triton (TorchInductor's per-user cache, where
// torch.compile's kernels live). A kernel is looked up when its module loads, i.e. after
// Triton compiled it and wrote the JSON; a name not found triggers a rescan, at most once per
// rescan interval, so a stream of unknown (non-Triton) names costs no more than that.
//
// Writer thread only (file system walks never run on the application's threads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace occ::inj {

class TritonCacheIndex {
 public:
  // `roots` that do not exist are skipped (and looked at again on rescans).
  explicit TritonCacheIndex(std::vector<std::string> roots, int64_t rescan_interval_ns = 200'000'000);

  // The default roots for this process (see above); reads the environment: call at start-up.
  static std::vector<std::string> DefaultRoots();

  // Path of `kernel_name`.json under a root, if there is one. `now_ns` is a monotonic clock.
  std::optional<std::string> Find(const std::string& kernel_name, int64_t now_ns);

  // Whether a kernel name can be Triton's: Triton names are plain C identifiers (never the
  // "_Z" Itanium mangling of CUDA C++, Numba and CUTLASS kernels).
  static bool MayBeTritonName(const std::string& kernel_name);

 private:
  void Rescan();

  std::vector<std::string> roots_;
  int64_t rescan_interval_ns_;
  std::optional<int64_t> last_scan_ns_;  // none yet
  std::unordered_map<std::string, std::string> json_by_name_;
};

// Reads a small file whole (metadata JSON); nullopt when unreadable or above max_bytes.
std::optional<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace occ::inj
