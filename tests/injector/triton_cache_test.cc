#include "injector/triton_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "injector/trace_writer.h"
#include "tests/injector/fake_records.h"

namespace occ::inj {
namespace {
namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(TritonCacheTest, NamesThatCanBeTritons) {
  EXPECT_TRUE(TritonCacheIndex::MayBeTritonName("triton_poi_fused_add_0"));
  EXPECT_TRUE(TritonCacheIndex::MayBeTritonName("_attn_fwd"));
  EXPECT_FALSE(TritonCacheIndex::MayBeTritonName("_Z6squarePfi"));
  EXPECT_FALSE(TritonCacheIndex::MayBeTritonName("void at::native::foo<float>(float*)"));
  EXPECT_FALSE(TritonCacheIndex::MayBeTritonName(""));
}

TEST(TritonCacheTest, FindsTritonAndInductorLayoutsAndRescansForNewKernels) {
  const fs::path root = testing::TempPath("triton_cache");
  fs::remove_all(root);
  // Triton: <root>/<hash>/<name>.json (+ __grp__ file); Inductor: <root>/<device>/<hash>/<name>.json
  Write(root / "triton" / "AbC123" / "_attn_fwd.json", R"({"num_warps": 8})");
  Write(root / "triton" / "AbC123" / "__grp___attn_fwd.json", R"({"child_paths": {}})");
  Write(root / "inductor" / "0" / "XyZ" / "triton_per_fused_sum_19.json", R"({"num_warps": 2})");
  TritonCacheIndex index({(root / "triton").string(), (root / "inductor").string(), (root / "missing").string()},
                         /*rescan_interval_ns=*/1000);
  EXPECT_EQ(index.Find("_attn_fwd", 0), (root / "triton" / "AbC123" / "_attn_fwd.json").string());
  EXPECT_EQ(index.Find("triton_per_fused_sum_19", 1), (root / "inductor" / "0" / "XyZ" / "triton_per_fused_sum_19.json").string());
  EXPECT_FALSE(index.Find("__grp___attn_fwd", 2).has_value()) << "Triton's group index is not metadata";
  // A kernel compiled later: not found until a rescan is allowed, then found.
  Write(root / "triton" / "New" / "late_kernel.json", "{}");
  EXPECT_FALSE(index.Find("late_kernel", 3).has_value()) << "rescans are rate-limited";
  EXPECT_TRUE(index.Find("late_kernel", 5000).has_value());
  fs::remove_all(root);
}

TEST(TritonCacheTest, ReadSmallFileRefusesLargeFiles) {
  const fs::path path = testing::TempPath("small_file");
  Write(path, std::string(100, 'x'));
  EXPECT_EQ(ReadSmallFile(path.string(), 100)->size(), 100u);
  EXPECT_FALSE(ReadSmallFile(path.string(), 99).has_value());
  EXPECT_FALSE(ReadSmallFile(path.string() + ".missing").has_value());
  fs::remove(path);
}

TEST(TritonCacheTest, ModuleLibraryIsRecordedEvenForImagesThatAreNotCubins) {
  const std::string path = testing::TempPath("module_library");
  {
    TraceWriter writer;
    ASSERT_TRUE(writer.Open(path));
    writer.AddModule(3, std::vector<uint8_t>{'n', 'o', 't', ' ', 'e', 'l', 'f'}, "/usr/lib/libcudnn_engines.so.9");
    writer.AddModule(4, std::vector<uint8_t>{'j', 'i', 't'}, {}, "/opt/app/libuser_kernels.so", 1500);
    EXPECT_EQ(writer.stats().loader_captures, 1u);
    EXPECT_EQ(writer.stats().loader_capture_ns_max, 1500u);
    EXPECT_EQ(writer.stats().loaders_found, 1u);
    ASSERT_TRUE(writer.Close());
  }
  testing::TraceReader reader(path);
  EXPECT_EQ(reader.Text("SELECT library FROM OCC_MODULE WHERE moduleId=3"), "/usr/lib/libcudnn_engines.so.9");
  EXPECT_EQ(reader.Text("SELECT library FROM OCC_MODULE WHERE moduleId=4"), "<null>");
  EXPECT_EQ(reader.Text("SELECT loader FROM OCC_MODULE WHERE moduleId=3"), "<null>");
  EXPECT_EQ(reader.Text("SELECT loader FROM OCC_MODULE WHERE moduleId=4"), "/opt/app/libuser_kernels.so");

  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace
}  // namespace occ::inj
