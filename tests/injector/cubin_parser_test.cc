// ParseCubin against real cubins compiled here with nvcc (sm_90), checked against an
// independent source: ptxas -v's own report for the same compilation ("Used N registers, used
// N barriers", "N bytes stack frame"). Skips visibly when the toolkit's nvcc is absent.
#include "injector/writer/cubin_parser.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "injector/writer/activity_records.h"
#include "injector/writer/trace_writer.h"
#include "tests/injector/fake_records.h"

namespace occ::inj {
namespace {

// Three named barriers (ids 1-3; ptxas counts barrier 0 too: "used 4 barriers"), a kernel
// with a 1 KiB local array indexed at run time (stack frame, no registers can hold it), a
// __launch_bounds__ kernel, and an unmangled name as Triton's and Inductor's kernels have.
constexpr char kKernels[] = R"(
__global__ void named_barriers(float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = threadIdx.x;
  asm volatile("bar.sync 1, 128;");
  asm volatile("bar.sync 2, 128;");
  asm volatile("bar.sync 3, 128;");
  out[threadIdx.x] = s[255 - threadIdx.x];
}
__global__ void __launch_bounds__(128) local_array(float* out, int n) {
  float local[256];
  for (int i = 0; i < 256; ++i) local[i] = out[i * n];
  out[threadIdx.x] = local[(threadIdx.x * 7) % 256] + local[n % 256];
}
__global__ void plain(float* out) { out[threadIdx.x] *= 2.0f; }
extern "C" __global__ void triton_poi_fused_add_relu_0(float* out) { out[threadIdx.x] = fmaxf(out[threadIdx.x] + 1.0f, 0.0f); }
)";

struct PtxasFacts {
  int64_t frame = -1, registers = -1, barriers = -1;
};

struct Compiled {
  std::vector<uint8_t> cubin;
  std::map<std::string, PtxasFacts> ptxas;  // by mangled name
  std::string error;
};

std::string ReadFile(const std::string& path) {
  std::string out;
  if (FILE* file = std::fopen(path.c_str(), "rb")) {
    char chunk[65536];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) out.append(chunk, got);
    std::fclose(file);
  }
  return out;
}

void WriteFile(const std::string& path, const std::string& text) {
  if (FILE* file = std::fopen(path.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
  }
}

// A file of a stand-in Triton or Inductor cache, its folders made first.
void WriteCacheFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  WriteFile(path.string(), text);
}

// The lines of an Inductor output code module that declare Triton kernel `name`, defined in
// `kernel_file`, generated from source nodes `nodes` (as Inductor writes them).
std::string InductorWrapper(const std::filesystem::path& kernel_file, const std::string& nodes, const std::string& name) {
  return "# kernel path: " + kernel_file.string() + "\n# Topologically Sorted Source Nodes: [" + nodes +
         "], Original ATen: [aten.add, aten.relu]\n" + name + " = async_compile.triton('" + name + "', '''\n";
}

void RemoveTrace(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

Compiled Compile() {
  Compiled out;
  const std::string dir = testing::TempPath("cubin").append(".d");
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  WriteFile(dir + "/k.cu", kKernels);
  const std::string command = std::string("'") + OCC_NVCC_PATH +
                              "' -cubin -arch=sm_90 -Xptxas -v -o '" + dir + "/k.cubin' '" + dir +
                              "/k.cu' > '" + dir + "/ptxas.txt' 2>&1";
  const int status = std::system(command.c_str());
  const std::string report = ReadFile(dir + "/ptxas.txt");
  if (status != 0) {
    out.error = "nvcc failed: " + report;
    return out;
  }
  const std::string cubin = ReadFile(dir + "/k.cubin");
  out.cubin.assign(cubin.begin(), cubin.end());
  // ptxas info    : Function properties for _Z5plainPf
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 8 registers, used 0 barriers, ...
  std::string current;
  const std::regex properties(R"(Function properties for (\S+))");
  const std::regex frame(R"(^\s*(\d+) bytes stack frame)");
  const std::regex used(R"(Used (\d+) registers, used (\d+) barriers)");
  std::smatch m;
  for (size_t begin = 0, end = 0; begin < report.size(); begin = end + 1) {
    end = report.find('\n', begin);
    if (end == std::string::npos) end = report.size();
    const std::string line = report.substr(begin, end - begin);
    if (std::regex_search(line, m, properties)) {
      current = m[1];
    } else if (!current.empty() && std::regex_search(line, m, frame)) {
      out.ptxas[current].frame = std::stoll(m[1]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      out.ptxas[current].registers = std::stoll(m[1]);
      out.ptxas[current].barriers = std::stoll(m[2]);
    }
  }
  std::system(("rm -rf '" + dir + "'").c_str());
  return out;
}

const Compiled& Kernels() {
  static const Compiled compiled = Compile();
  return compiled;
}

#define OCC_NEED_NVCC()                                                                \
  do {                                                                                 \
    if (std::string(OCC_NVCC_PATH).empty()) GTEST_SKIP() << "no nvcc (CUDA toolkit) found by CMake"; \
    ASSERT_TRUE(Kernels().error.empty()) << Kernels().error;                           \
  } while (0)

TEST(CubinParserTest, MatchesPtxasReportForEveryKernel) {
  OCC_NEED_NVCC();
  const Compiled& k = Kernels();
  ASSERT_EQ(k.ptxas.size(), 4u) << "ptxas -v output changed format";
  CubinParseResult parsed = ParseCubin(k.cubin.data(), k.cubin.size());
  ASSERT_TRUE(parsed.ok) << parsed.error;
  std::map<std::string, CubinFunction> by_name;
  for (const CubinFunction& f : parsed.functions) by_name[f.mangled_name] = f;
  for (const auto& [name, facts] : k.ptxas) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(by_name.count(name));
    const CubinFunction& f = by_name[name];
    EXPECT_EQ(f.frame_size, facts.frame);
    EXPECT_EQ(f.registers, facts.registers);
    EXPECT_EQ(f.barrier_count, facts.barriers);
  }
  // The facts the test kernels were written to have (so the comparison is not vacuous).
  EXPECT_EQ(k.ptxas.at("_Z14named_barriersPf").barriers, 4);
  EXPECT_EQ(k.ptxas.at("_Z11local_arrayPfi").frame, 1024);
  EXPECT_EQ(by_name["_Z11local_arrayPfi"].max_threads_per_block, 128);  // __launch_bounds__(128)
  EXPECT_EQ(by_name["_Z5plainPf"].max_threads_per_block, -1);
}

TEST(CubinParserTest, RejectsNonCubinInput) {
  const std::string text = "// PTX\n.version 8.0\n.target sm_90\n";
  CubinParseResult parsed = ParseCubin(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.error, "not an ELF image");
  EXPECT_FALSE(ParseCubin(nullptr, 0).ok);
  // A host ELF (this test binary) is an ELF but not a CUDA one.
  const std::string self = ReadFile("/proc/self/exe");
  parsed = ParseCubin(reinterpret_cast<const uint8_t*>(self.data()), self.size());
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.error, "not a CUDA ELF image (e_machine)");
}

// Every prefix and many random corruptions of a real cubin: no crash, no out-of-bounds read
// (run under ASan in CI), and a truncated section table is reported as such.
TEST(CubinParserTest, SurvivesTruncatedAndCorruptedImages) {
  OCC_NEED_NVCC();
  const std::vector<uint8_t>& good = Kernels().cubin;
  uint64_t shoff = 0;
  uint16_t shnum = 0;
  std::memcpy(&shoff, good.data() + 0x28, sizeof(shoff));
  std::memcpy(&shnum, good.data() + 0x3c, sizeof(shnum));
  const uint64_t table_end = shoff + uint64_t{shnum} * 64;
  ASSERT_LE(table_end, good.size());
  for (size_t length = 0; length < good.size(); length += (length < 256 ? 1 : 61)) {
    std::vector<uint8_t> prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length));
    CubinParseResult parsed = ParseCubin(prefix.data(), prefix.size());
    // Without the whole section header table (e_shoff + e_shnum * 64, read here from the ELF
    // header by hand) the image is refused; with it, sections cut off are just unreadable.
    if (length < 64) {
      EXPECT_FALSE(parsed.ok) << length;
    } else if (length < table_end) {
      EXPECT_FALSE(parsed.ok) << length;
      EXPECT_EQ(parsed.error, "truncated section header table") << length;
    } else {
      EXPECT_TRUE(parsed.ok) << length << ": " << parsed.error;
    }
  }
  {
    // Exactly up to the end of the table: everything the parser reads is there.
    std::vector<uint8_t> prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(table_end));
    CubinParseResult cut = ParseCubin(prefix.data(), prefix.size());
    CubinParseResult whole = ParseCubin(good.data(), good.size());
    ASSERT_TRUE(cut.ok) << cut.error;
    ASSERT_EQ(cut.functions.size(), whole.functions.size());
    for (size_t i = 0; i < cut.functions.size(); ++i) {
      EXPECT_EQ(cut.functions[i].frame_size, whole.functions[i].frame_size);
      EXPECT_EQ(cut.functions[i].barrier_count, whole.functions[i].barrier_count);
    }
    prefix.pop_back();
    EXPECT_FALSE(ParseCubin(prefix.data(), prefix.size()).ok);
  }
  std::mt19937 random(12345);
  for (int round = 0; round < 5000; ++round) {
    std::vector<uint8_t> bad = good;
    const int flips = 1 + static_cast<int>(random() % 16);
    for (int i = 0; i < flips; ++i) {
      // Anywhere (attribute payloads), the ELF header, or the section table at the end.
      size_t at = random() % bad.size();
      const auto where = random() % 3;
      if (where == 1) at = random() % 64;
      if (where == 2) at = bad.size() - 1 - random() % 1280;
      bad[at] = static_cast<uint8_t>(random());
    }
    CubinParseResult parsed = ParseCubin(bad.data(), bad.size());
    if (!parsed.ok) {
      EXPECT_FALSE(parsed.error.empty());
    }
  }
  std::vector<uint8_t> garbage(4096);
  for (int round = 0; round < 200; ++round) {
    for (uint8_t& b : garbage) b = static_cast<uint8_t>(random());
    std::memcpy(garbage.data(), good.data(), 64);  // a valid-looking header over noise
    static_cast<void>(ParseCubin(garbage.data(), garbage.size()));
  }
}

TEST(CubinParserTest, WriterStoresFunctionsAndFillsCuptisZeroLocalMemory) {
  OCC_NEED_NVCC();
  const std::string path = testing::TempPath("cubin_writer");
  {
    TraceWriter writer;
    ASSERT_TRUE(writer.Open(path));
    writer.AddModule(7, Kernels().cubin);
    writer.AddModule(8, std::vector<uint8_t>{'n', 'o', 't', ' ', 'e', 'l', 'f'});
    // CUDA 13's CUPTI reports localMemoryPerThread = 0 even for this kernel.
    ActivityKernel spilling = testing::MakeKernel("_Z11local_arrayPfi", 1, 100, 200);
    spilling.localMemoryPerThread = 0;
    writer.AddKernel(spilling);
    ActivityKernel reported = testing::MakeKernel("_Z5plainPf", 2, 300, 400);
    reported.localMemoryPerThread = 48;  // a nonzero CUPTI value is kept
    writer.AddKernel(reported);
    EXPECT_EQ(writer.stats().modules_parsed, 1u);
    EXPECT_EQ(writer.stats().modules_skipped, 1u);
    ASSERT_TRUE(writer.Close());
  }
  testing::TraceReader reader(path);
  const std::string by_name =
      " FROM OCC_FUNCTION f JOIN StringIds s ON s.id=f.mangledName WHERE s.value=";
  EXPECT_EQ(reader.Int("SELECT COUNT(*) FROM OCC_FUNCTION WHERE moduleId=7"), 4);
  EXPECT_EQ(reader.Int("SELECT barrierCount" + by_name + "'_Z14named_barriersPf'"), 4);
  EXPECT_EQ(reader.Int("SELECT localMemoryPerThread" + by_name + "'_Z11local_arrayPfi'"), 1024);
  EXPECT_EQ(reader.Int("SELECT maxThreadsPerBlock" + by_name + "'_Z11local_arrayPfi'"), 128);
  const std::string config =
      "SELECT c.localMemoryPerThread FROM OCC_KERNEL_CONFIG c JOIN StringIds s "
      "ON s.id=c.mangledName WHERE s.value=";
  EXPECT_EQ(reader.Int(config + "'_Z11local_arrayPfi'"), 1024);
  EXPECT_EQ(reader.Int(config + "'_Z5plainPf'"), 48);
  RemoveTrace(path);
}

// The whole chain the writer follows for a torch.compile kernel, in a stand-in cache shared by
// two programs that both compiled `triton_poi_fused_add_relu_0`: the loaded cubin picks Triton's
// compilation, its IR's first location names Inductor's kernel file, and the output code module
// that declares that file gives the source nodes.
TEST(CubinParserTest, WriterRecordsTheSourceNodesOfTheCompilationThatLoaded) {
  OCC_NEED_NVCC();
  namespace fs = std::filesystem;
  const fs::path inductor = testing::TempPath("inductor_cache");
  fs::remove_all(inductor);
  const std::string name = "triton_poi_fused_add_relu_0";
  const fs::path mine = inductor / "ke" / "ckernel.py";
  const fs::path theirs = inductor / "zz" / "cother.py";
  // Triton's cache under Inductor's: triton/<device>/<hash>/<name>.{json,cubin,source}.
  WriteCacheFile(inductor / "triton" / "0" / "AAA" / (name + ".json"), R"({"num_warps": 8, "num_stages": 1})");
  WriteCacheFile(inductor / "triton" / "0" / "AAA" / (name + ".cubin"), "another program's cubin");
  WriteCacheFile(inductor / "triton" / "0" / "AAA" / (name + ".source"), "#loc = loc(\"" + theirs.string() + "\":18:0)\n");
  WriteCacheFile(inductor / "triton" / "0" / "BBB" / (name + ".json"), R"({"num_warps": 4, "num_stages": 1})");
  WriteCacheFile(inductor / "triton" / "0" / "BBB" / (name + ".cubin"),
        std::string(Kernels().cubin.begin(), Kernels().cubin.end()));
  WriteCacheFile(inductor / "triton" / "0" / "BBB" / (name + ".source"), "#loc = loc(\"" + mine.string() + "\":19:0)\n");
  WriteCacheFile(inductor / "w1" / "cw1.py", InductorWrapper(theirs, "y, relu", name));
  WriteCacheFile(inductor / "w2" / "cw2.py", InductorWrapper(mine, "add, hidden", name));
  const std::string path = testing::TempPath("inductor_writer");
  {
    TraceWriter writer;
    ASSERT_TRUE(writer.Open(path));
    writer.SetTritonCacheRoots({(inductor / "triton").string()});
    writer.AddModule(7, Kernels().cubin);
    EXPECT_EQ(writer.stats().triton_kernels, 1u);
    EXPECT_EQ(writer.stats().triton_sources, 1u);
    ASSERT_TRUE(writer.Close());
  }
  testing::TraceReader reader(path);
  const std::string by_name = " JOIN StringIds s ON s.id=t.mangledName WHERE s.value='" + name + "'";
  EXPECT_EQ(reader.Int("SELECT numWarps FROM OCC_TRITON_KERNEL t" + by_name), 4);
  EXPECT_EQ(reader.Text("SELECT sourceNodes FROM OCC_TRITON_SOURCE t" + by_name), "add, hidden");
  EXPECT_EQ(reader.Text("SELECT originalAten FROM OCC_TRITON_SOURCE t" + by_name), "aten.add, aten.relu");
  EXPECT_EQ(reader.Text("SELECT sourceFile FROM OCC_TRITON_SOURCE t" + by_name), mine.string());
  EXPECT_EQ(reader.Int("SELECT sourceLine FROM OCC_TRITON_SOURCE t" + by_name), 19);
  EXPECT_EQ(reader.Text("SELECT wrapperFile FROM OCC_TRITON_SOURCE t" + by_name), (inductor / "w2" / "cw2.py").string());
  // CUDA C++ kernels are never looked up.
  EXPECT_EQ(reader.Int("SELECT COUNT(*) FROM OCC_TRITON_SOURCE"), 1);
  RemoveTrace(path);
  fs::remove_all(inductor);
}

// A cold torch.compile on an H100 (tests/gpu/owners_all.sh, 2026-11-28) lost 9 of 21 kernels'
// metadata: Inductor's compile workers wrote a kernel's files just after the rescan another
// kernel's miss had made, and its modules loaded before the next rescan was due. Here the
// cache is empty at load and the files appear right after it: the lookup at Close finds them.
TEST(CubinParserTest, WriterFindsAKernelWhoseFilesAppearAfterItsLoad) {
  OCC_NEED_NVCC();
  namespace fs = std::filesystem;
  const fs::path inductor = testing::TempPath("inductor_late_cache");
  fs::remove_all(inductor);
  const std::string name = "triton_poi_fused_add_relu_0";
  const fs::path kernel = inductor / "ke" / "ckernel.py";
  fs::create_directories(inductor / "triton" / "0");
  const std::string path = testing::TempPath("inductor_late_writer");
  {
    TraceWriter writer;
    ASSERT_TRUE(writer.Open(path));
    writer.SetTritonCacheRoots({(inductor / "triton").string()});
    writer.AddModule(7, Kernels().cubin);
    EXPECT_EQ(writer.stats().triton_kernels, 0u);  // nothing there yet
    const fs::path dir = inductor / "triton" / "0" / "AAA";
    WriteCacheFile(dir / (name + ".json"), R"({"num_warps": 4, "num_stages": 1})");
    WriteCacheFile(dir / (name + ".cubin"), std::string(Kernels().cubin.begin(), Kernels().cubin.end()));
    WriteCacheFile(dir / (name + ".source"), "#loc = loc(\"" + kernel.string() + "\":18:0)\n");
    WriteCacheFile(inductor / "w1" / "cw1.py", InductorWrapper(kernel, "add, relu", name));
    // Loaded again within the rescan interval (another autotuning config): still a miss.
    writer.AddModule(8, Kernels().cubin);
    EXPECT_EQ(writer.stats().triton_kernels, 0u);
    ASSERT_TRUE(writer.Close());
    EXPECT_EQ(writer.stats().triton_kernels, 1u);
    EXPECT_EQ(writer.stats().triton_sources, 1u);
  }
  testing::TraceReader reader(path);
  const std::string by_name = " JOIN StringIds s ON s.id=t.mangledName WHERE s.value='" + name + "'";
  EXPECT_EQ(reader.Int("SELECT numWarps FROM OCC_TRITON_KERNEL t" + by_name), 4);
  EXPECT_EQ(reader.Text("SELECT sourceNodes FROM OCC_TRITON_SOURCE t" + by_name), "add, relu");
  EXPECT_EQ(reader.Text("SELECT wrapperFile FROM OCC_TRITON_SOURCE t" + by_name), (inductor / "w1" / "cw1.py").string());
  RemoveTrace(path);
  fs::remove_all(inductor);
}

}  // namespace
}  // namespace occ::inj
