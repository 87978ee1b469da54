// The torch.profiler reader (analyzer/read/torch_profiler/): a Kineto-shaped trace read into the
// same rows as a recorded trace, .json and .json.gz alike, a directory of ranks, and bad input as
// a one-line BadInput. The hand-made sample's values are Kineto's fields as written in the file
// (tests/analysis/torch_profiler/handmade_rank0.json); the real recorded traces are goldens.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "analyzer/read/registry/input_formats.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::ReadTestFile;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFile;

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

const ConfigStats* Find(const TraceScan& scan, const std::string& prefix) {
  for (const auto& c : scan.configs) {
    if (c.name.rfind(prefix, 0) == 0) return &c;
  }
  return nullptr;
}

TEST(TorchProfiler, ReadsKernelEventsIntoConfigurations) {
  ScratchDir dir;
  const std::string path = dir.Path("rank0.json");
  WriteFile(path, ReadTestFile("torch_profiler/handmade_rank0.json"));
  auto reader = OpenInput(path, 0);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->info().format(), "torch.profiler");
  EXPECT_EQ((*reader)->info().rank(), 0);
  EXPECT_EQ((*reader)->info().world_size(), 2);
  ASSERT_EQ((*reader)->devices().size(), 1u);
  const TraceDevice& device = (*reader)->devices()[0];
  EXPECT_TRUE(device.known);
  EXPECT_EQ(device.props.num_sms, 132);
  EXPECT_EQ(device.props.cc_major, 9);
  EXPECT_EQ(device.props.max_threads_per_sm, 2048);
  EXPECT_EQ(device.props.smem_per_block_optin, 232448);

  auto scan = (*reader)->Scan("", 1);
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  // 3 steps x 4 kernels; cpu_op, cuda_runtime, flow and metadata events are not launches.
  EXPECT_EQ(scan->launches, 12);
  EXPECT_EQ(scan->configs.size(), 4u);
  const ConfigStats* gemm = Find(*scan, "sm90_xmma_gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->launches, 3);
  EXPECT_EQ(gemm->grid[0], 132);
  EXPECT_EQ(gemm->block[0], 384);
  EXPECT_EQ(gemm->registers_per_thread, 168);
  // "shared memory" is static + dynamic summed: read as dynamic, and opted in above 48 KiB.
  EXPECT_EQ(gemm->static_smem, 0);
  EXPECT_EQ(gemm->dynamic_smem, 213120);
  EXPECT_EQ(gemm->smem_limit_config, 1);
  EXPECT_EQ(gemm->smem_executed, 0);
  // "dur": 41.216 µs, exactly, in ns.
  EXPECT_EQ(gemm->min_ns, 41216);
  EXPECT_EQ(gemm->total_ns, 3 * 41216);
  // ts are relative to baseTimeNanoseconds: the first kernel starts at base + 1010 µs.
  EXPECT_EQ(scan->first_start, 1764270000000000000 + 1010000);

  // What the input lacks is said, and where Kineto's estimate differs, both with the reason.
  const auto& warnings = (*reader)->info().warnings();
  auto said = [&](const std::string& text) {
    return std::any_of(warnings.begin(), warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("no achieved occupancy"));
  EXPECT_TRUE(said("static and dynamic shared memory as one sum"));
  EXPECT_TRUE(said("no executed shared-memory carveout"));
  // The elementwise kernel: 1056 blocks on 132 SMs = 8 per SM where 16 fit: Kineto's 50 %.
  EXPECT_TRUE(said("Kineto estimates 50 % for void at::native::vectorized_elementwise_kernel"));
  EXPECT_TRUE(said("1056 blocks over 132 SMs = 8.00 per SM, where 16 fit"));
  // The GEMM agrees (Kineto's 19 % is 18.75 % rounded) and is not listed.
  EXPECT_FALSE(said("Kineto estimates 19 %"));
}

TEST(TorchProfiler, GzipReadsAsThePlainFile) {
  ScratchDir dir;
  const std::string text = ReadTestFile("torch_profiler/handmade_rank0.json");
  WriteFile(dir.Path("a.json"), text);
  WriteGzip(dir.Path("b.json.gz"), text);
  // A tensorboard_trace_handler name without the .json ending is recognized by its bytes.
  WriteGzip(dir.Path("worker0.12345.pt.trace"), text);
  auto a = OpenInput(dir.Path("a.json"), 0);
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto sa = (*a)->Scan("", 1);
  ASSERT_TRUE(sa.ok());
  for (const char* name : {"b.json.gz", "worker0.12345.pt.trace"}) {
    auto b = OpenInput(dir.Path(name), 0);
    ASSERT_TRUE(b.ok()) << b.status().message();
    auto sb = (*b)->Scan("", 1);
    ASSERT_TRUE(sb.ok());
    ASSERT_EQ(sa->configs.size(), sb->configs.size());
    for (size_t i = 0; i < sa->configs.size(); ++i) testing::ExpectSameConfig(sa->configs[i], sb->configs[i]);
  }
}

TEST(TorchProfiler, DirectoryOfRanksGivesTheCrossRankSection) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.Path("job"));
  WriteFile(dir.Path("job/rank0.pt.trace.json"), ReadTestFile("torch_profiler/handmade_rank0.json"));
  WriteGzip(dir.Path("job/rank1.pt.trace.json.gz"), ReadTestFile("torch_profiler/handmade_rank1.json"));
  auto run = RunCli({"report", dir.Path("job"), "--format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("\"format\": \"torch.profiler\""), std::string::npos);
  EXPECT_NE(run.out.find("\"rank_source\": \"torch.profiler distributedInfo\""), std::string::npos);
  EXPECT_NE(run.out.find("\"world_size\": 2"), std::string::npos);
  auto text = RunCli({"report", dir.Path("job")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Across ranks: 2 files, ranks 0–1 of world size 2"), std::string::npos) << text.out;
}

struct BadCase {
  const char* name;
  std::string bytes;
  const char* message;
};

TEST(TorchProfiler, BadJsonIsOneLineBadInput) {
  const std::string kernel_head =
      R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"device":0,)";
  const BadCase cases[] = {
      {"truncated.json", R"({"traceEvents": [{"ph": "X", "cat": "ker)", "truncated JSON"},
      {"garbage.json", "garbage\n", "not valid JSON at byte 0"},
      {"array.json", std::string(100000, '['), "the top level is an array"},
      {"deep.json", R"({"traceEvents":[{"args":)" + std::string(200000, '['), "truncated JSON"},
      {"nan.json", R"({"traceEvents":[{"ph":"X","cat":"kernel","ts":NaN}]})", "not valid JSON"},
      {"bignum.json", R"({"traceEvents":[{"ts":1e400}]})", "Number too big"},
      {"no_events.json", R"({"schemaVersion": 1})", "without a \"traceEvents\" array"},
      {"grid_type.json",
       kernel_head + R"("grid":"x","block":[1,1,1],"registers per thread":3,"shared memory":0}}]})",
       "args.grid is not an array of 3 integers"},
      {"huge_regs.json",
       kernel_head + R"("grid":[1,1,1],"block":[1,1,1],"registers per thread":99999999999999999999999,"shared memory":0}}]})",
       "\"registers per thread\" is not an integer"},
      {"negative_dur.json",
       R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":-5,"args":{}}]})",
       "dur -5 is not a duration"},
      {"string_ts.json",
       R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":"1","dur":1,"args":{}}]})",
       "ts or dur is missing or not a number"},
      {"no_device.json",
       R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"grid":[1,1,1]}}]})",
       "no args.device"},
      {"bad_base.json", R"({"baseTimeNanoseconds": -3, "traceEvents":[]})", "baseTimeNanoseconds"},
  };
  ScratchDir dir;
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.Path(c.name);
    WriteFile(path, c.bytes);
    auto reader = OpenInput(path, 0);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.status().code(), StatusCode::kBadInput);
    const std::string& message = reader.status().message();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(path, 0), 0u) << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    auto run = RunCli({"report", path});
    EXPECT_EQ(run.code, 2) << run.err;
  }
  // A .gz cut short: the error says so, whatever byte the cut falls on.
  const std::string text = ReadTestFile("torch_profiler/handmade_rank0.json");
  WriteGzip(dir.Path("whole.json.gz"), text);
  const std::string gz = testing::ReadFile(dir.Path("whole.json.gz"));
  WriteFile(dir.Path("cut.json.gz"), gz.substr(0, gz.size() / 2));
  auto cut = OpenInput(dir.Path("cut.json.gz"), 0);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kBadInput);
  EXPECT_EQ(cut.status().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace occ
