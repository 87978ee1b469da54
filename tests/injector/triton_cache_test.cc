#include "injector/writer/triton_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "injector/writer/trace_writer.h"
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
  EXPECT_EQ(index.Find("_attn_fwd", 0)->json_path, (root / "triton" / "AbC123" / "_attn_fwd.json").string());
  EXPECT_EQ(index.Find("triton_per_fused_sum_19", 1)->json_path,
            (root / "inductor" / "0" / "XyZ" / "triton_per_fused_sum_19.json").string());
  EXPECT_FALSE(index.Find("__grp___attn_fwd", 2).has_value()) << "Triton's group index is not metadata";
  // A kernel compiled later: not found until a rescan is allowed, then found.
  Write(root / "triton" / "New" / "late_kernel.json", "{}");
  EXPECT_FALSE(index.Find("late_kernel", 3).has_value()) << "rescans are rate-limited";
  EXPECT_TRUE(index.Find("late_kernel", 5000).has_value());
  fs::remove_all(root);
}

// An excerpt of the output code module torch 2.15's Inductor wrote for a small training step
// (tests/injector/inductor_output_code.py, without a GPU; only the cache folder renamed): the
// comment block above each kernel's async_compile.triton call, and a kernel's last source lines.
constexpr char kForwardWrapper[] = R"PY(# kernel path: /tmp/torchinductor_alice/hq/chqhn7xafk7eydptctcsx7cbp3unqxfg4orlrybj54sy2jcm4lhg.py
# Topologically Sorted Source Nodes: [add, hidden, normed], Original ATen: [aten.add, aten.relu, aten.native_layer_norm]
# Source node to ATen node mapping:
#   add => add
#   hidden => relu
#   normed => add_1, add_2, getitem_1, mul, mul_1, rsqrt, sub, var_mean
# Graph fragment:
#   %addmm : Tensor "f32[32, 128][128, 1]cpu" = PlaceHolder[target=addmm]
#   %primals_4 : Tensor "f32[32, 128][128, 1]cpu" = PlaceHolder[target=primals_4]
#   %relu : Tensor "f32[32, 128][128, 1]cpu" = PlaceHolder[target=relu]
#   %buf2 : Tensor "f32[32, 1][1, 32]cpu" = PlaceHolder[target=buf2]
#   %buf3 : Tensor "f32[32, 1][1, 32]cpu" = PlaceHolder[target=buf3]
#   %buf4 : Tensor "f32[32, 1][1, 32]cpu" = PlaceHolder[target=buf4]
#   %rsqrt : Tensor "f32[32, 1][1, 1]cpu" = PlaceHolder[target=rsqrt]
#   %primals_5 : Tensor "f32[128][1]cpu" = PlaceHolder[target=primals_5]
#   %primals_6 : Tensor "f32[128][1]cpu" = PlaceHolder[target=primals_6]
#   %add : Tensor "f32[32, 128][128, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%addmm, %primals_4), kwargs = {})
#   %relu : Tensor "f32[32, 128][128, 1]cpu"[num_users=3] = call_function[target=torch.ops.aten.relu.default](args = (%add,), kwargs = {})
#   %var_mean : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%relu, [1]), kwargs = {correction: 0, keepdim: True})
#   %getitem_1 : Tensor "f32[32, 1][1, 1]cpu"[num_users=2] = call_function[target=operator.getitem](args = (%var_mean, 1), kwargs = {})
#   %add_1 : Tensor "f32[32, 1][1, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem, 1e-05), kwargs = {})
#   %rsqrt : Tensor "f32[32, 1][1, 1]cpu"[num_users=2] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_1,), kwargs = {})
#   %sub : Tensor "f32[32, 128][128, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%relu, %getitem_1), kwargs = {})
#   %mul : Tensor "f32[32, 128][128, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub, %rsqrt), kwargs = {})
#   %mul_1 : Tensor "f32[32, 128][128, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul, %primals_5), kwargs = {})
#   %add_2 : Tensor "f32[32, 128][128, 1]cpu"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_1, %primals_6), kwargs = {})
#   return %relu,%buf2,%buf3,%buf4,%rsqrt,%add_2
triton_per_fused_add_native_layer_norm_relu_0 = async_compile.triton('triton_per_fused_add_native_layer_norm_relu_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
...
''', device_str='cpu')


# kernel path: /tmp/torchinductor_alice/nv/cnvjkedfpbpjmusbvqqf2cewymubxvuhmgdfrs6f7nomegixz3f7.py
# Topologically Sorted Source Nodes: [log_softmax], Original ATen: [aten._log_softmax]
# Source node to ATen node mapping:
#   log_softmax => amax, exp, log, sub_1, sum_1
# Graph fragment:
#   %addmm_1 : Tensor "f32[32, 10][10, 1]cpu" = PlaceHolder[target=addmm_1]
#   %amax : Tensor "f32[32, 1][1, 1]cpu" = PlaceHolder[target=amax]
#   %sum_1 : Tensor "f32[32, 1][1, 32]cpu" = PlaceHolder[target=sum_1]
#   %amax : Tensor "f32[32, 1][1, 1]cpu"[num_users=2] = call_function[target=torch.ops.aten.amax.default](args = (%addmm_1, [1], True), kwargs = {})
#   %sub_1 : Tensor "f32[32, 10][10, 1]cpu"[num_users=2] = call_function[target=torch.ops.aten.sub.Tensor](args = (%addmm_1, %amax), kwargs = {})
#   %exp : Tensor "f32[32, 10][10, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%sub_1,), kwargs = {})
#   %sum_1 : Tensor "f32[32, 1][1, 1]cpu"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%exp, [1], True), kwargs = {})
#   %log : Tensor "f32[32, 1][1, 1]cpu"[num_users=2] = call_function[target=torch.ops.aten.log.default](args = (%sum_1,), kwargs = {})
#   return %amax,%sum_1,%log
triton_per_fused__log_softmax_1 = async_compile.triton('triton_per_fused__log_softmax_1', '''
import triton
import triton.language as tl)PY";

TEST(InductorOutputTest, ParsesEachKernelsSourceNodesFromRealOutputCode) {
  const auto kernels = ParseInductorWrapper(kForwardWrapper);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].first, "triton_per_fused_add_native_layer_norm_relu_0");
  EXPECT_EQ(kernels[0].second.source_nodes, "add, hidden, normed");
  EXPECT_EQ(kernels[0].second.original_aten, "aten.add, aten.relu, aten.native_layer_norm");
  EXPECT_EQ(kernels[0].second.kernel_file, "chqhn7xafk7eydptctcsx7cbp3unqxfg4orlrybj54sy2jcm4lhg.py");
  EXPECT_EQ(kernels[1].first, "triton_per_fused__log_softmax_1");
  EXPECT_EQ(kernels[1].second.source_nodes, "log_softmax");
  EXPECT_EQ(kernels[1].second.original_aten, "aten._log_softmax");
  EXPECT_EQ(kernels[1].second.kernel_file, "cnvjkedfpbpjmusbvqqf2cewymubxvuhmgdfrs6f7nomegixz3f7.py");
}

TEST(InductorOutputTest, OtherForms) {
  // A relative kernel path (compile-on-one-rank), a kernel from several graphs ("Unsorted"), a
  // backward kernel without source nodes, and a kernel without any comment (left out).
  const auto kernels = ParseInductorWrapper(
      "# kernel path: ab/cabc.py\n"
      "# Unsorted Source Nodes: [x, y], Original ATen: [aten.mul]\n"
      "triton_poi_fused_mul_0 = async_compile.triton('triton_poi_fused_mul_0', '''\n"
      "    tl.store(out_ptr0 + (x0), tmp0, None)\n"
      "''', device_str='cuda')\n"
      "# kernel path: /c/cd/ccd.py\n"
      "# Topologically Sorted Source Nodes: [], Original ATen: [aten.sub, aten.mul]\n"
      "triton_poi_fused_mul_sub_1 = async_compile.triton('triton_poi_fused_mul_sub_1', '''\n"
      "''', device_str='cuda')\n"
      "triton_poi_fused_2 = async_compile.triton('triton_poi_fused_2', '''\n");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].second.kernel_file, "cabc.py");
  EXPECT_EQ(kernels[0].second.source_nodes, "x, y");
  EXPECT_EQ(kernels[1].first, "triton_poi_fused_mul_sub_1");
  EXPECT_EQ(kernels[1].second.source_nodes, "");
  EXPECT_EQ(kernels[1].second.original_aten, "aten.sub, aten.mul");
  EXPECT_TRUE(ParseInductorWrapper("# Topologically Sorted Source Nodes: [a\nx = 1\n").empty());
}

TEST(InductorOutputTest, FirstFileLocationOfTritonsIr) {
  // The head of <name>.source Triton 3.9 wrote for a @triton.jit function defined on line 6.
  const auto location = FirstFileLocation(
      "#loc = loc(\"/tmp/trt/k.py\":6:1)\n#loc11 = loc(\"x\"(#loc))\nmodule {\n");
  ASSERT_TRUE(location.has_value());
  EXPECT_EQ(location->file, "/tmp/trt/k.py");
  EXPECT_EQ(location->line, 6);
  // Value names come first in some files: skipped.
  EXPECT_EQ(FirstFileLocation("#loc1 = loc(\"x\"(#loc))\n#loc = loc(\"/a/b.py\":12:0)")->line, 12);
  EXPECT_FALSE(FirstFileLocation("module { } loc(#loc)").has_value());
  EXPECT_FALSE(FirstFileLocation("#loc = loc(\"unterminated").has_value());
}

TEST(InductorOutputTest, IndexFindsTheKernelsOwnModuleNotAnotherProgramsOfTheSameName) {
  const fs::path root = testing::TempPath("inductor_index");
  fs::remove_all(root);
  // Two programs compiled a kernel of one name from different graphs.
  Write(root / "w1" / "cw1.py",
        "# kernel path: " + (root / "ke" / "ckernel.py").string() + "\n"
        "# Topologically Sorted Source Nodes: [add, h], Original ATen: [aten.add, aten.relu]\n"
        "triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''\n");
  Write(root / "w2" / "cw2.py",
        "# kernel path: " + (root / "zz" / "cother.py").string() + "\n"
        "# Topologically Sorted Source Nodes: [y, relu], Original ATen: [aten.add, aten.relu]\n"
        "triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''\n"
        "# kernel path: " + (root / "zz" / "csum.py").string() + "\n"
        "# Topologically Sorted Source Nodes: [total], Original ATen: [aten.sum]\n"
        "triton_red_fused_sum_1 = async_compile.triton('triton_red_fused_sum_1', '''\n");
  Write(root / "ke" / "ckernel.py", "@triton.jit\ndef triton_poi_fused_add_relu_0(in_ptr0):\n");
  Write(root / "triton" / "0" / "HASH" / "ignored.py", "x = async_compile.triton('ignored', '''\n");
  InductorOutputIndex index({root.string()}, /*rescan_interval_ns=*/1000);
  auto found = index.Find("triton_poi_fused_add_relu_0", (root / "ke" / "ckernel.py").string(), 0);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->source_nodes, "add, h");
  EXPECT_EQ(found->wrapper_path, (root / "w1" / "cw1.py").string());
  EXPECT_EQ(index.Find("triton_poi_fused_add_relu_0", (root / "zz" / "cother.py").string(), 1)->source_nodes,
            "y, relu");
  // Without its file the name alone is ambiguous: nothing rather than a guess.
  EXPECT_FALSE(index.Find("triton_poi_fused_add_relu_0", "", 2).has_value());
  EXPECT_EQ(index.Find("triton_red_fused_sum_1", "", 3)->original_aten, "aten.sum");
  // A file no module declares (the module was deleted): nothing, not the name's other kernel.
  EXPECT_FALSE(index.Find("triton_red_fused_sum_1", "/x/yy/cgone.py", 4).has_value());
  EXPECT_FALSE(index.Find("ignored", "", 5000).has_value()) << "only <root>/<2 characters>/*.py are modules";
  fs::remove_all(root);
}

TEST(TritonCacheTest, SeveralCompilationsOfOneNameAreToldApartByTheLoadedCubin) {
  const fs::path root = testing::TempPath("triton_cubins");
  fs::remove_all(root);
  Write(root / "A" / "k.json", R"({"num_warps": 2})");
  Write(root / "A" / "k.cubin", "cubin of program one");
  Write(root / "B" / "k.json", R"({"num_warps": 8})");
  Write(root / "B" / "k.cubin", "cubin of program two");
  Write(root / "C" / "solo.json", "{}");
  TritonCacheIndex index({root.string()});
  const auto one = index.Find("k", 0, "cubin of program one");
  const auto two = index.Find("k", 0, "cubin of program two");
  ASSERT_TRUE(one && two);
  EXPECT_TRUE(one->exact && two->exact);
  EXPECT_EQ(fs::path(one->json_path).parent_path().filename(), "A");
  EXPECT_EQ(fs::path(two->json_path).parent_path().filename(), "B");
  const auto neither = index.Find("k", 0, "cubin of program 3!!");
  ASSERT_TRUE(neither.has_value());
  EXPECT_FALSE(neither->exact) << "metadata of one of them, but not said to be the loaded one";
  EXPECT_TRUE(index.Find("solo", 0)->exact) << "the only compilation of its name";
  fs::remove_all(root);
}

TEST(TritonCacheTest, LongNamesAreFoundUnderTritonsShortenedFileNames) {
  // Triton names the files after the first 150 characters of the kernel name.
  const fs::path root = testing::TempPath("triton_long_names");
  fs::remove_all(root);
  const std::string name = "triton_red_fused_" + std::string(160, 'a') + "_0";
  const std::string stem = name.substr(0, 150);
  Write(root / "H" / (stem + ".json"), R"({"num_warps": 4})");
  Write(root / "H" / (stem + ".cubin"), "the loaded cubin");
  Write(root / "H" / (stem + ".source"), "#loc = loc(\"/c/ab/cabc.py\":18:0)\n");
  TritonCacheIndex index({root.string()});
  const auto loaded = index.Find(name, 0, "the loaded cubin");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(loaded->exact);
  EXPECT_EQ(TritonSourceLocation(loaded->json_path)->file, "/c/ab/cabc.py");
  // The shortened name could be another kernel's: without its cubin, not the loaded one.
  EXPECT_FALSE(index.Find(name, 0, "some other cubin")->exact);
  EXPECT_FALSE(index.Find(name, 0)->exact);
  fs::remove_all(root);
}

TEST(TritonCacheTest, InductorCacheDirFollowsInductor) {
  const char* saved = getenv("TORCHINDUCTOR_CACHE_DIR");
  const std::string restore = saved != nullptr ? saved : "";
  setenv("TORCHINDUCTOR_CACHE_DIR", "/scratch/ind", 1);
  EXPECT_EQ(InductorCacheDir(), "/scratch/ind");
  unsetenv("TORCHINDUCTOR_CACHE_DIR");
  const char* tmp = getenv("TMPDIR");
  const std::string tmp_restore = tmp != nullptr ? tmp : "";
  setenv("TMPDIR", "/var/tmp/job", 1);
  EXPECT_EQ(InductorCacheDir().rfind("/var/tmp/job/torchinductor_", 0), 0u) << InductorCacheDir();
  if (tmp_restore.empty()) unsetenv("TMPDIR"); else setenv("TMPDIR", tmp_restore.c_str(), 1);
  if (!restore.empty()) setenv("TORCHINDUCTOR_CACHE_DIR", restore.c_str(), 1);
}

TEST(TritonCacheTest, ReadSmallFileRefusesLargeFiles) {
  const fs::path path = testing::TempPath("small_file");
  Write(path, std::string(100, 'x'));
  EXPECT_EQ(ReadSmallFile(path.string(), 100)->size(), 100u);
  EXPECT_FALSE(ReadSmallFile(path.string(), 99).has_value());
  EXPECT_FALSE(ReadSmallFile(path.string() + ".missing").has_value());
  EXPECT_FALSE(ReadSmallFile(fs::path(path).parent_path().string()).has_value()) << "a folder";
  Write(path, "");
  EXPECT_EQ(ReadSmallFile(path.string(), 32 << 20), "");
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
