// TritonCacheIndex: finds the JSON metadata Triton writes beside each kernel it compiles
// (<cache>/<hash>/<kernel name>.json: num_warps, num_stages, num_ctas, shared, ...), so the
// trace can carry the compile settings a Triton user tunes (OCC_TRITON_KERNEL).
//
// Roots searched: $TRITON_CACHE_DIR as it was when tracing started, ~/.triton/cache (Triton's
// default) and <Inductor's cache>/triton (InductorCacheDir(): where torch.compile's kernels
// live). A kernel is looked up when its module loads, i.e. after Triton compiled it and wrote
// the JSON; a name not found triggers a rescan, at most once per rescan interval, so a stream of
// unknown (non-Triton) names costs no more than that.
//
// The names users know (docs/report-guide.md, "Names"): the TTIR Triton keeps beside the JSON
// starts with the @triton.jit function's file and line; for torch.compile's kernels that file is
// Inductor's kernel file, which the output code module (the "wrapper") that declared the kernel
// names in a comment beside the FX source nodes and ATen ops it came from:
//   # kernel path: /tmp/torchinductor_u/ke/ckew....py
//   # Topologically Sorted Source Nodes: [add, h, layer_norm], Original ATen: [aten.add, ...]
//   ...
//   triton_per_fused_add_native_layer_norm_relu_0 = async_compile.triton('triton_per_...', '''
//
// Writer thread only (file system walks never run on the application's threads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace occ::inj {

class TritonCacheIndex {
 public:
  // `roots` that do not exist are skipped (and looked at again on rescans).
  explicit TritonCacheIndex(std::vector<std::string> roots, int64_t rescan_interval_ns = 200'000'000);

  // The default roots for this process (see above); reads the environment: call at start-up.
  static std::vector<std::string> DefaultRoots();

  struct Found {
    std::string json_path;
    // True when this is the compilation that loaded: the only one of its name in the cache, or
    // the one whose <name>.cubin is the loaded image byte for byte. A cache shared by several
    // programs can hold one name compiled from different sources (Inductor numbers its kernels
    // per graph: triton_poi_fused_relu_0 recurs), and the JSON is then one of them.
    bool exact = false;
  };
  // `kernel_name`.json under a root, if there is one. `now_ns` is a monotonic clock; `image` is
  // the loaded module (may be empty).
  std::optional<Found> Find(const std::string& kernel_name, int64_t now_ns, std::string_view image = {});
  // Scans the roots now, whatever the interval: a miss between two scans is not final (a
  // kernel's files can appear just after a scan that another kernel's miss asked for).
  void Refresh(int64_t now_ns);

  // Whether a kernel name can be Triton's: Triton names are plain C identifiers (never the
  // "_Z" Itanium mangling of CUDA C++, Numba and CUTLASS kernels).
  static bool MayBeTritonName(const std::string& kernel_name);

 private:
  void Rescan();

  std::vector<std::string> roots_;
  int64_t rescan_interval_ns_;
  std::optional<int64_t> last_scan_ns_;  // none yet
  std::unordered_map<std::string, std::vector<std::string>> json_by_name_;  // in scan order
};

// Inductor's cache directory, as torch._inductor.runtime.cache_dir_utils.cache_dir() finds it:
// $TORCHINDUCTOR_CACHE_DIR, else <$TMPDIR or /tmp>/torchinductor_<user> (getpass.getuser():
// $LOGNAME, $USER, $LNAME, $USERNAME, then the password entry). Reads the environment: call at
// start-up.
std::string InductorCacheDir();

// Where a Triton kernel's @triton.jit function is defined: the first file location of the IR
// Triton keeps beside its metadata (<dir>/<name>.source since Triton 3.4, <name>.ttir before),
// `#loc = loc("/path/k.py":6:1)`. nullopt when neither file has one.
struct SourceLocation {
  std::string file;
  int64_t line = 0;
};
std::optional<SourceLocation> TritonSourceLocation(const std::string& json_path);
// The first `loc("FILE":LINE:COL)` in IR text.
std::optional<SourceLocation> FirstFileLocation(std::string_view ir);

// What Inductor's output code says of one of its Triton kernels.
struct InductorKernelOrigin {
  std::string source_nodes;   // "add, h, layer_norm" (the FX graph's nodes: the user's variable names)
  std::string original_aten;  // "aten.add, aten.relu, aten.native_layer_norm"
  std::string kernel_file;    // file name of "# kernel path:" (content-addressed: c<hash>.py)
  std::string wrapper_path;   // the output code module that declared it
};

// Every `NAME = async_compile.triton('NAME', '''` of an output code module with the comment
// block above it; kernels without a "Source Nodes" comment are left out.
std::vector<std::pair<std::string, InductorKernelOrigin>> ParseInductorWrapper(std::string_view text);

// The output code modules under Inductor's cache (<root>/<2 characters>/<hash>.py), each read
// once; rescans as TritonCacheIndex does. Writer thread only.
class InductorOutputIndex {
 public:
  explicit InductorOutputIndex(std::vector<std::string> roots, int64_t rescan_interval_ns = 200'000'000);

  // The kernel whose Triton source file is `kernel_file` (TritonSourceLocation, exact), or,
  // without it, the one kernel of that name when every module that declares it says the same.
  std::optional<InductorKernelOrigin> Find(const std::string& kernel_name, const std::string& kernel_file,
                                           int64_t now_ns);
  // Scans the roots now, whatever the interval (TritonCacheIndex::Refresh).
  void Refresh(int64_t now_ns);

 private:
  std::optional<InductorKernelOrigin> Lookup(const std::string& kernel_name, const std::string& kernel_file) const;
  void Rescan();

  std::vector<std::string> roots_;
  int64_t rescan_interval_ns_;
  std::optional<int64_t> last_scan_ns_;
  std::unordered_set<std::string> read_files_;
  std::unordered_map<std::string, InductorKernelOrigin> by_kernel_file_;
  std::unordered_map<std::string, std::vector<InductorKernelOrigin>> by_name_;
};

// Reads a small file whole (metadata JSON); nullopt when unreadable or above max_bytes.
std::optional<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace occ::inj
