// The registry of input formats (analyzer/read/registry/input_formats.h): one sample file of each
// format, made here from what that format is (occtrace's schema, Nsight Systems' export schema,
// a Kineto-shaped torch.profiler trace, a summary written by `occ-report summarize`), is claimed
// by its own format's sniff and by no other's, and opens as that format; a file of no format is
// a one-line BadInput naming the file.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "kTraceSchemaSql.h"
#include "analyzer/read/input_format.h"
#include "analyzer/read/registry/input_formats.h"
#include "analyzer/read/summary/trace_summary.h"
#include "test_traces.h"

namespace occ {
namespace {

using testing::H100TraceInserts;
using testing::MakeDb;
using testing::MakeOccTrace;
using testing::ReadTestFile;
using testing::ScratchDir;
using testing::WriteFile;

// One launch of one kernel on an H200, as Nsight Systems exports it.
const char kNsysRows[] = R"sql(
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1');
INSERT INTO StringIds VALUES (1, 'k(int)'), (2, 'k'), (3, '_Z1ki');
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  VALUES (0, 'NVIDIA H200', 132, 9, 0, 49152, 232448, 233472, 65536, 65536, 32, 64, 32, 1024);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'GPU-a', 132);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId,
  correlationId, demangledName, shortName, mangledName, cacheConfig, registersPerThread, gridX,
  gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
  localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, sharedMemoryLimitConfig, graphId,
  clusterX, clusterY, clusterZ)
VALUES (1000, 2000, 0, 1, 7, 1, 1, 2, 3, 0, 32, 132, 1, 1, 256, 1, 1, 0, 0, 0, 0, 32768, 0, 0, 0, 0, 0);
)sql";

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

struct Sample {
  std::string format;  // InputFormat::name of the format that must claim it
  std::string path;
  std::string read_as;  // InputFile.format once read
};

// Samples of every format, in every container and under every name its sniff knows it by.
std::vector<Sample> MakeSamples(const ScratchDir& dir) {
  std::vector<Sample> s;
  MakeOccTrace(dir.Path("trace.db"), H100TraceInserts());
  s.push_back({"occtrace", dir.Path("trace.db"), "occtrace"});
  WriteFile(dir.Path("trace.sql"), std::string(kTraceSchemaSql) + H100TraceInserts());
  s.push_back({"occtrace", dir.Path("trace.sql"), "occtrace"});
  MakeDb(dir.Path("export.sqlite"), testing::NsysSchemaSql() + kNsysRows);
  s.push_back({"nsys", dir.Path("export.sqlite"), "nsys"});
  WriteFile(dir.Path("export.sql"), testing::NsysSchemaSql() + kNsysRows);
  s.push_back({"nsys", dir.Path("export.sql"), "nsys"});
  const std::string kineto = ReadTestFile("torch_profiler/handmade_rank0.json");
  WriteFile(dir.Path("rank0.json"), kineto);
  s.push_back({"torch.profiler", dir.Path("rank0.json"), "torch.profiler"});
  WriteGzip(dir.Path("rank0.json.gz"), kineto);
  s.push_back({"torch.profiler", dir.Path("rank0.json.gz"), "torch.profiler"});
  // tensorboard_trace_handler's names need not end in .json: known by the first byte.
  WriteFile(dir.Path("worker0.pt.trace"), kineto);
  s.push_back({"torch.profiler", dir.Path("worker0.pt.trace"), "torch.profiler"});
  auto summary = SummarizeTrace(dir.Path("trace.db"));
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  auto json = SummaryToJson(summary.ok() ? *summary : occtrace::TraceSummary());
  EXPECT_TRUE(json.ok());
  WriteFile(dir.Path("trace.summary.json"), json.ok() ? *json : "");
  s.push_back({"summary", dir.Path("trace.summary.json"), "occtrace"});
  // By its marker under another name (`summarize -o`).
  WriteFile(dir.Path("rank0.s.json"), json.ok() ? *json : "");
  s.push_back({"summary", dir.Path("rank0.s.json"), "occtrace"});
  return s;
}

bool Claims(const InputFormat& format, const std::string& path) {
  auto probe = InputProbe::Open(path);
  EXPECT_TRUE(probe.ok()) << probe.status().message();
  if (!probe.ok()) return false;
  auto claimed = format.sniff(*probe);
  EXPECT_TRUE(claimed.ok()) << format.name << " on " << path << ": " << claimed.status().message();
  return claimed.ok() && *claimed;
}

size_t Position(const std::string& name) {
  const auto& formats = InputFormats();
  for (size_t i = 0; i < formats.size(); ++i) {
    if (formats[i]->name == name) return i;
  }
  ADD_FAILURE() << "no registered format " << name;
  return formats.size();
}

TEST(InputFormats, EachSampleIsClaimedByItsOwnFormatOnly) {
  ScratchDir dir;
  const std::vector<Sample> samples = MakeSamples(dir);
  for (const InputFormat* format : InputFormats()) {
    EXPECT_TRUE(std::any_of(samples.begin(), samples.end(),
                            [&](const Sample& s) { return s.format == format->name; }))
        << "registered format " << format->name << " has no sample here";
  }
  for (const Sample& sample : samples) {
    SCOPED_TRACE(sample.path);
    auto probe = InputProbe::Open(sample.path);
    ASSERT_TRUE(probe.ok()) << probe.status().message();
    auto picked = SniffInputFormat(*probe);
    ASSERT_TRUE(picked.ok()) << picked.status().message();
    EXPECT_EQ((*picked)->name, sample.format);
    for (const InputFormat* other : InputFormats()) {
      if (other->name == sample.format) {
        EXPECT_TRUE(Claims(*other, sample.path));
        continue;
      }
      // torch.profiler's sniff claims any JSON, so that its reader can say what is wrong with a
      // damaged trace: a summary, the other JSON format, is told apart by coming first.
      if (other->name == std::string("torch.profiler") && sample.format == "summary") {
        EXPECT_LT(Position("summary"), Position("torch.profiler"));
        continue;
      }
      EXPECT_FALSE(Claims(*other, sample.path)) << other->name << " claims it too";
    }
  }
}

TEST(InputFormats, EachSampleOpensAsItsFormat) {
  ScratchDir dir;
  for (const Sample& sample : MakeSamples(dir)) {
    SCOPED_TRACE(sample.path);
    auto input = OpenInput(sample.path, 3);
    ASSERT_TRUE(input.ok()) << input.status().message();
    EXPECT_EQ((*input)->info().path(), sample.path);
    EXPECT_EQ((*input)->info().format(), sample.read_as);
    // Only a summary lacks the launches one by one.
    EXPECT_EQ((*input)->AsTrace() == nullptr, sample.format == "summary");
    auto scan = (*input)->Scan("", 1);
    ASSERT_TRUE(scan.ok()) << scan.status().message();
    ASSERT_FALSE(scan->configs.empty());
    EXPECT_EQ(scan->configs[0].file_index, 3);
  }
}

TEST(InputFormats, AFileOfNoFormatIsOneLineNamingIt) {
  ScratchDir dir;
  WriteFile(dir.Path("notes.txt"), "shopping list\n");
  MakeDb(dir.Path("users.db"), "CREATE TABLE users (id INTEGER, name TEXT);");
  WriteFile(dir.Path("users.sql"), "CREATE TABLE users (id INTEGER, name TEXT);\n");
  for (const char* name : {"notes.txt", "users.db", "users.sql"}) {
    SCOPED_TRACE(name);
    const std::string path = dir.Path(name);
    for (const InputFormat* format : InputFormats()) EXPECT_FALSE(Claims(*format, path)) << format->name;
    auto input = OpenInput(path, 0);
    ASSERT_FALSE(input.ok());
    EXPECT_EQ(input.status().code(), StatusCode::kBadInput);
    const std::string& message = input.status().message();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    // Every format it is not, by the words the table gives.
    for (const InputFormat* format : InputFormats()) {
      EXPECT_NE(message.find(format->label), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace occ
